// ProxyJump and ProxyCommand through a second real sshd on loopback (the jump host), and the
// ssh config as OpenSSH reads it (Match, Include, options mlt does not use). The jump sshd
// logs at DEBUG1, so its log shows each forwarding it made to the target: the proof that a
// connection went through it.
#include <dirent.h>
#include <signal.h>

#include <memory>
#include <string>

#include "harness/expect.h"
#include "harness/files.h"
#include "harness/net.h"
#include "harness/train_fixture.h"

namespace mlt_test {
namespace {

constexpr int kExitHostKey = 4;
constexpr int kExitConnection = 255;

class ProxyTest : public TrainTest {
  protected:
    void SetUp() override {
        TrainTest::SetUp();
        jump_ = std::make_unique<TestSshd>("LogLevel DEBUG1\n");
        jump_->authorize_key_file(sshd().client_key_path() + ".pub");
        write_file(jump_known_hosts(), jump_->known_hosts_line() + "\n", 0644);
        trust_server_in(custom_known_hosts());
    }

    TestSshd& jump() { return *jump_; }
    std::string config_path() const { return env().ssh_dir() + "/config"; }
    std::string jump_known_hosts() const { return sshd().dir() + "/jump_known_hosts"; }

    // `Host jump_box` for the jump sshd as the `ssh` program reads it (no prompts, no agent,
    // its own known_hosts), on `port`.
    std::string jump_entry(int port) const {
        return "Host jump_box\n"
               "    HostName 127.0.0.1\n"
               "    Port " +
               std::to_string(port) + "\n    User " + sshd().user() + "\n    IdentityFile " +
               sshd().client_key_path() + "\n    UserKnownHostsFile " + jump_known_hosts() +
               "\n    GlobalKnownHostsFile /dev/null\n    StrictHostKeyChecking yes\n"
               "    BatchMode yes\n    IdentitiesOnly yes\n";
    }
    std::string jump_entry() const { return jump_entry(jump_->port()); }
    // `Host gpu_box` for the target sshd plus `extra` lines.
    std::string target_entry(const std::string& extra) const {
        return ssh_config_entry("gpu_box", sshd().port(), custom_known_hosts(), extra);
    }
    void write_config(const std::string& text) const { write_file(config_path(), text, 0600); }

    // How many forwardings to the target the jump sshd made.
    std::size_t forwardings() const {
        return count_occurrences(jump_->log_text(),
                                 "target 127.0.0.1 port " + std::to_string(sshd().port()));
    }
    std::string jump_log() const { return "jump sshd log:\n" + jump_->log_text(); }

    ProcessResult status(const std::string& host, const std::vector<std::string>& extra = {}) {
        std::vector<std::string> args = {"ssh", "-h", host + "/" + remote()};
        args.insert(args.end(), extra.begin(), extra.end());
        args.push_back("status");
        return env().run_mlt(args);
    }

    // `status` of gpu_box through jump_box with another server's key recorded for `port` in
    // `known_hosts`: refused with one line and exit 4.
    ProcessResult status_with_foreign_key(const std::string& known_hosts, int port) {
        const TestSshd other;
        write_file(
            known_hosts,
            "[127.0.0.1]:" + std::to_string(port) + " " + other.host_key_type_and_blob() + "\n",
            0644);
        write_config(jump_entry() + target_entry("    ProxyJump jump_box\n"));
        ProcessResult r = status("gpu_box");
        EXPECT_EQ(r.exit_code, kExitHostKey) << describe(r);
        EXPECT_TRUE(is_one_error_line(r.err));
        return r;
    }

  private:
    std::unique_ptr<TestSshd> jump_;
};

TEST_F(ProxyTest, ProxyJumpGoesThroughTheJumpHost) {
    write_config(jump_entry() + target_entry("    ProxyJump jump_box\n"));
    ProcessResult r = status("gpu_box");
    ASSERT_EQ(r.exit_code, 0) << describe(r) << jump_log() << sshd_log();
    EXPECT_TRUE(contains_icase(r.out, "no job")) << describe(r);
    EXPECT_EQ(forwardings(), 1u) << jump_log();
    EXPECT_TRUE(logged_in());
}

// Two hops (the jump sshd twice): ssh logs in to the last one through the first.
TEST_F(ProxyTest, ProxyJumpWithTwoHops) {
    write_config(jump_entry() + target_entry("    ProxyJump jump_box,jump_box\n"));
    ProcessResult r = status("gpu_box");
    ASSERT_EQ(r.exit_code, 0) << describe(r) << jump_log();
    EXPECT_EQ(forwardings(), 1u) << jump_log();
    EXPECT_EQ(count_occurrences(jump().log_text(),
                                "target 127.0.0.1 port " + std::to_string(jump().port())),
              1u)
        << "the hop to the second jump\n"
        << jump_log();
}

TEST_F(ProxyTest, ProxyCommandWithOpenSshTokens) {
    const std::string record = sshd().dir() + "/proxy_tokens";
    // %n %h %p %r as ssh expands them; the command itself goes through the jump host.
    write_config(jump_entry() +
                 target_entry("    ProxyCommand sh -c 'echo \"%n %h %p %r %%\" > " + record +
                              "; exec ssh -F " + config_path() + " -W \"[%h]:%p\" jump_box'\n"));
    ProcessResult r = status("gpu_box");
    ASSERT_EQ(r.exit_code, 0) << describe(r) << jump_log() << sshd_log();
    EXPECT_EQ(read_or_empty(record),
              "gpu_box 127.0.0.1 " + std::to_string(sshd().port()) + " " + sshd().user() + " %\n");
    EXPECT_EQ(forwardings(), 1u) << jump_log();
}

TEST_F(ProxyTest, DashOProxyJumpAndNone) {
    write_config(jump_entry() + target_entry(""));
    ProcessResult r = status("gpu_box", {"-o", "ProxyJump=jump_box"});
    ASSERT_EQ(r.exit_code, 0) << describe(r) << jump_log();
    EXPECT_EQ(forwardings(), 1u) << jump_log();

    // `none` on the command line beats the config's ProxyJump: a direct connection.
    write_config(jump_entry() + target_entry("    ProxyJump jump_box\n"));
    r = status("gpu_box", {"-o", "ProxyJump=none"});
    ASSERT_EQ(r.exit_code, 0) << describe(r) << jump_log();
    EXPECT_EQ(forwardings(), 1u) << jump_log();

    // ... and in the config, a first `ProxyCommand none` beats a later ProxyJump.
    write_config(jump_entry() + "Host gpu_box\n    ProxyCommand none\n" +
                 target_entry("    ProxyJump jump_box\n"));
    r = status("gpu_box");
    ASSERT_EQ(r.exit_code, 0) << describe(r) << jump_log();
    EXPECT_EQ(forwardings(), 1u) << jump_log();
}

TEST_F(ProxyTest, UnreachableJumpHostIsOneClearLine) {
    const ClosedPort closed;
    write_config(jump_entry(closed.port()) + target_entry("    ProxyJump jump_box\n"));
    const std::size_t log_offset = sshd().log_size();
    ProcessResult r = status("gpu_box");
    EXPECT_EQ(r.exit_code, kExitConnection) << describe(r);
    EXPECT_TRUE(is_one_error_line(r.err));
    EXPECT_TRUE(has_text(r.err, "jump host jump_box"));
    EXPECT_TRUE(has_text(r.err, "Connection refused")) << "what ssh said";
    EXPECT_TRUE(has_text(r.err, config_path() + ":")) << "where the ProxyJump is";
    EXPECT_TRUE(lacks_text(r.err, "reset by peer"));
    EXPECT_TRUE(sshd().connections_since(log_offset).empty()) << sshd_log();
}

// The hint is a command ssh takes: `ssh -p PORT user@host`; ssh reads no host:port.
TEST_F(ProxyTest, JumpHostHintIsACommandSshTakes) {
    const ClosedPort closed;
    const std::string port = std::to_string(closed.port());
    write_config(target_entry("    ProxyJump " + sshd().user() + "@127.0.0.1:" + port + "\n"));
    ProcessResult r = status("gpu_box");
    EXPECT_EQ(r.exit_code, kExitConnection) << describe(r);
    EXPECT_TRUE(is_one_error_line(r.err));
    EXPECT_TRUE(has_text(r.err, "check that `ssh -p " + port + " " + sshd().user() +
                                    "@127.0.0.1` logs in from this machine"));
}

TEST_F(ProxyTest, ChangedJumpHostKeyIsRefused) {
    ProcessResult r = status_with_foreign_key(jump_known_hosts(), jump().port());
    EXPECT_TRUE(has_text(r.err, "jump host jump_box has CHANGED"));
    EXPECT_EQ(forwardings(), 0u) << jump_log();
}

TEST_F(ProxyTest, UnknownJumpHostKeyIsRefused) {
    write_file(jump_known_hosts(), "", 0644);
    write_config(jump_entry() + target_entry("    ProxyJump jump_box\n"));
    ProcessResult r = status("gpu_box");
    EXPECT_EQ(r.exit_code, kExitHostKey) << describe(r);
    EXPECT_TRUE(is_one_error_line(r.err));
    EXPECT_TRUE(has_text(r.err, "jump host jump_box is not known"));
    EXPECT_EQ(forwardings(), 0u) << jump_log();
}

// Through the jump, the target's key is still mlt's to check.
TEST_F(ProxyTest, TargetHostKeyIsCheckedThroughTheJump) {
    ProcessResult r = status_with_foreign_key(custom_known_hosts(), sshd().port());
    EXPECT_TRUE(has_text(r.err, "[127.0.0.1]:" + std::to_string(sshd().port())));
    EXPECT_EQ(forwardings(), 1u) << jump_log();
    EXPECT_FALSE(logged_in());
}

TEST_F(ProxyTest, FailingProxyCommandIsOneClearLine) {
    write_config(target_entry("    ProxyCommand sh -c 'exit 3'\n"));
    ProcessResult r = status("gpu_box");
    EXPECT_EQ(r.exit_code, kExitConnection) << describe(r);
    EXPECT_TRUE(is_one_error_line(r.err));
    EXPECT_TRUE(has_text(r.err, "ProxyCommand at " + config_path() + ":"));
    EXPECT_TRUE(has_text(r.err, "sh -c 'exit 3'")) << "the command to try by hand";
}

// A command that sends a server banner and ends: libssh then writes into the closed socket,
// which killed mlt with SIGPIPE (exit 141) in about half of the runs.
TEST_F(ProxyTest, ProxyCommandThatEndsEarlyIsNoCrash) {
    write_config(target_entry("    ProxyCommand printf 'SSH-2.0-OpenSSH_9.2\\r\\n'\n"));
    for (int run = 0; run < 8; ++run) {
        ProcessResult r = status("gpu_box");
        ASSERT_EQ(r.exit_code, kExitConnection) << "run " << run << "\n" << describe(r);
        EXPECT_TRUE(is_one_error_line(r.err));
    }
}

// The pid of the `ssh -W` that mlt started for the jump to the target, or 0.
long jump_ssh_pid(int target_port) {
    const std::string wanted =
        std::string("-W") + '\0' + "[127.0.0.1]:" + std::to_string(target_port) + '\0';
    long found = 0;
    DIR* proc = opendir("/proc");
    if (!proc) return 0;
    while (dirent* d = readdir(proc)) {
        const long pid = std::strtol(d->d_name, nullptr, 10);
        if (pid <= 0) continue;
        const std::string cmdline = read_or_empty("/proc/" + std::string(d->d_name) + "/cmdline");
        if (cmdline.rfind(std::string("ssh") + '\0', 0) == 0 &&
            cmdline.find(wanted) != std::string::npos)
            found = pid;
    }
    closedir(proc);
    return found;
}

// A training through the jump host; the jump's `ssh` is killed mid-run, and mlt reconnects
// through a new one and finishes.
TEST_F(ProxyTest, TrainThroughProxyJumpSurvivesALostJump) {
    copy_example();
    write_model_settings("logistic_model", "ssh:\n  train_cmd: \"/usr/bin/python3 {spec}\"\n");
    env().write_settings(base_settings(/*connection=*/false));
    write_config(jump_entry() + target_entry("    ProxyJump jump_box\n"));
    auto run =
        start_mlt({"ssh", "-h", "gpu_box", "train", "logistic_model", "--", "--sleep", "0.5"});
    ASSERT_TRUE(wait_console("logistic_model", "epoch 2/")) << jump_log();
    long pid = 0;
    ASSERT_TRUE(
        wait_until([&] { return (pid = jump_ssh_pid(sshd().port())) > 0; }, kEffectTimeout));
    ASSERT_EQ(kill(static_cast<pid_t>(pid), SIGKILL), 0);
    const ProcessResult r = run->wait(kTrainTimeout);
    ASSERT_EQ(r.exit_code, 0) << describe(r) << jump_log();
    EXPECT_TRUE(each_epoch_once(r.out, 8)) << describe(r);
    EXPECT_TRUE(has_text(read_or_empty(local_console("logistic_model")), "training finished"));
    EXPECT_GE(forwardings(), 2u) << "the reconnect went through the jump too\n" << jump_log();
}

// Match and Include as ssh reads them; options mlt does not use are no error.
TEST_F(ProxyTest, MatchIncludeAndUnusedOptions) {
    make_dir(env().ssh_dir() + "/conf.d", 0700);
    write_file(env().ssh_dir() + "/conf.d/gpu.conf",
               "Match originalhost gpu_box\n    Port " + std::to_string(sshd().port()) + "\n",
               0600);
    write_config(
        "Host gpu_box\n"
        "    HostName 127.0.0.1\n"
        "    Include conf.d/*.conf\n"
        "    ForwardAgent yes\n"
        "    LocalForward 9999 localhost:9999\n"
        "    SomeFutureOption 1\n"
        "Match exec \"false\"\n"
        "    Port 1\n"
        "Match host 127.0.0.1 user " +
        sshd().user() +
        "\n"
        "    IdentityFile " +
        sshd().client_key_path() + "\n    UserKnownHostsFile " + custom_known_hosts() + "\n");
    ProcessResult r = status("gpu_box", {"-v"});
    ASSERT_EQ(r.exit_code, 0) << describe(r) << sshd_log();
    EXPECT_TRUE(logged_in());
    EXPECT_EQ(count_occurrences(r.err, "Match exec at " + config_path() + ":7"), 1u) << r.err;
    EXPECT_TRUE(has_text(r.err, "somefutureoption is not used")) << "named with -v";
    r = status("gpu_box");
    EXPECT_TRUE(lacks_text(r.err, "somefutureoption")) << "named only with -v";
}

}  // namespace
}  // namespace mlt_test
