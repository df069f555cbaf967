// Connecting and authenticating: `mlt ssh ... status` against a real sshd.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <string>

#include "harness/expect.h"
#include "harness/files.h"
#include "harness/net.h"
#include "harness/openssh.h"
#include "harness/ssh_test.h"
#include "harness/train_fixture.h"

namespace mlt_test {
namespace {

using ConnectTest = SshTest;

constexpr int kExitUsage = 2;
constexpr int kExitConnection = 255;
constexpr int kExitRemoteFailed = 1;

TEST_F(ConnectTest, StatusOnEmptyRemoteDirReportsNoJob) {
    ProcessResult r = run_status();
    ASSERT_EQ(r.exit_code, 0) << describe(r) << sshd_log();
    EXPECT_TRUE(contains_icase(r.out, "no job")) << describe(r);
    EXPECT_TRUE(logged_in());
}

TEST_F(ConnectTest, StatusReadsTheRemoteDirOfTheHostSpec) {
    make_finished_job("my_model", 0);
    env().write_settings("ssh:\n  remote_dir: " + sshd().dir() + "/not_this_one\n");
    ProcessResult r = run_status();
    ASSERT_EQ(r.exit_code, 0) << describe(r) << sshd_log();
    EXPECT_TRUE(has_text(r.out, "my_model"));
    EXPECT_TRUE(contains_icase(r.out, "finished")) << describe(r);
    EXPECT_FALSE(contains_icase(r.out, "no job")) << describe(r);
}

TEST_F(ConnectTest, StatusOfOneModel) {
    make_finished_job("my_model", 0);
    make_finished_job("other_model", 0);
    ProcessResult r = run_status({});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(has_text(r.out, "other_model"));

    trust_server_in(custom_known_hosts());
    r = env().run_mlt({"ssh", "-h", host_with_dir(), "-i", sshd().client_key_path(), "-o",
                       "UserKnownHostsFile=" + custom_known_hosts(), "status", "my_model"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(has_text(r.out, "my_model"));
    EXPECT_TRUE(lacks_text(r.out, "other_model"));

    r = env().run_mlt({"ssh", "-h", host_with_dir(), "-i", sshd().client_key_path(), "-o",
                       "UserKnownHostsFile=" + custom_known_hosts(), "status", "third_model"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(contains_icase(r.out, "no job")) << describe(r);
}

TEST_F(ConnectTest, PortOptionAndPlainHost) {
    trust_server_in(custom_known_hosts());
    ProcessResult r = env().run_mlt({"ssh", "-h", sshd().user() + "@127.0.0.1", "-p",
                                     std::to_string(sshd().port()), "-i", sshd().client_key_path(),
                                     "-o", "UserKnownHostsFile=" + custom_known_hosts(), "status"});
    ASSERT_EQ(r.exit_code, 0) << describe(r) << sshd_log();
    EXPECT_TRUE(contains_icase(r.out, "no job")) << describe(r);
    EXPECT_TRUE(logged_in());
}

TEST_F(ConnectTest, HostWithoutUserLogsInAsLocalUser) {
    trust_server_in(custom_known_hosts());
    ProcessResult r = env().run_mlt(
        {"ssh", "-h", "127.0.0.1:" + std::to_string(sshd().port()) + "/" + sshd().remote_dir(),
         "-i", sshd().client_key_path(), "-o", "UserKnownHostsFile=" + custom_known_hosts(),
         "status"});
    ASSERT_EQ(r.exit_code, 0) << describe(r) << sshd_log();
    EXPECT_TRUE(logged_in());
}

// A settings file whose `ssh:` section names the whole connection and the remote dir.
std::string connection_settings(const TestSshd& sshd, int port, const std::string& key,
                                const std::string& extra_lines = {}) {
    std::string yaml = "ssh:\n";
    yaml += "  remote_dir: " + sshd.remote_dir() + "\n";
    yaml += extra_lines;
    yaml += "  connection:\n";
    yaml += "    hostname: 127.0.0.1\n";
    yaml += "    port: " + std::to_string(port) + "\n";
    yaml += "    username: " + sshd.user() + "\n";
    yaml += "    key_filename: " + key + "\n";
    return yaml;
}

TEST_F(ConnectTest, SettingsFileSuppliesTheConnection) {
    trust_server_in(default_known_hosts());
    env().write_settings(connection_settings(sshd(), sshd().port(), sshd().client_key_path(),
                                             "  host_key_checking: yes\n"));
    make_finished_job("my_model", 0);
    ProcessResult r = env().run_mlt({"ssh", "status"});
    ASSERT_EQ(r.exit_code, 0) << describe(r) << sshd_log();
    EXPECT_TRUE(has_text(r.out, "my_model")) << "remote_dir of the settings not used";
    EXPECT_TRUE(logged_in());
}

TEST_F(ConnectTest, CommandLineBeatsSettings) {
    // Settings name a closed port and an unauthorized key; -p and -i must win.
    const std::string wrong_key = sshd().dir() + "/unauthorized_key";
    make_ssh_key(wrong_key);
    const ClosedPort closed;
    trust_server_in(default_known_hosts());
    env().write_settings(connection_settings(sshd(), closed.port(), wrong_key));
    ProcessResult r = env().run_mlt(
        {"ssh", "-p", std::to_string(sshd().port()), "-i", sshd().client_key_path(), "status"});
    ASSERT_EQ(r.exit_code, 0) << describe(r) << sshd_log();
    EXPECT_TRUE(contains_icase(r.out, "no job")) << describe(r);
    EXPECT_TRUE(logged_in());
}

TEST_F(ConnectTest, UnauthorizedKeyFailsWith255AndNamesMethods) {
    const std::string wrong_key = sshd().dir() + "/unauthorized_key";
    make_ssh_key(wrong_key);
    trust_server_in(custom_known_hosts());
    const std::size_t log_offset = sshd().log_size();
    ProcessResult r = env().run_mlt({"ssh", "-h", host_with_dir(), "-i", wrong_key, "-o",
                                     "UserKnownHostsFile=" + custom_known_hosts(), "status"});
    EXPECT_EQ(r.exit_code, kExitConnection) << describe(r) << sshd_log();
    EXPECT_TRUE(has_text(r.err, "publickey"));
    EXPECT_TRUE(is_one_error_line(r.err));
    EXPECT_EQ(sshd().connections_since(log_offset).size(), 1u) << "one attempt\n" << sshd_log();
    EXPECT_EQ(login_count(), 0u) << sshd_log();
}

TEST_F(ConnectTest, RefusedPortFailsWith255) {
    const ClosedPort closed;
    const int closed_port = closed.port();
    ProcessResult r = env().run_mlt({"ssh", "-h", sshd().user() + "@127.0.0.1", "-p",
                                     std::to_string(closed_port), "-i", sshd().client_key_path(),
                                     "-o", "UserKnownHostsFile=" + custom_known_hosts(), "status"});
    EXPECT_EQ(r.exit_code, kExitConnection) << describe(r);
    EXPECT_TRUE(is_one_error_line(r.err));
    EXPECT_TRUE(has_text(r.err, std::to_string(closed_port))) << "the error should say where";
}

TEST_F(ConnectTest, SilentServerHitsConnectTimeout) {
    // The TCP handshake succeeds but no SSH banner ever comes.
    SilentListener silent;
    ProcessResult r = env().run_mlt({"ssh", "-v", "-h", sshd().user() + "@127.0.0.1", "-p",
                                     std::to_string(silent.port()), "-i", sshd().client_key_path(),
                                     "-o", "ConnectTimeout=2", "-o",
                                     "UserKnownHostsFile=" + custom_known_hosts(), "status"});
    EXPECT_EQ(r.exit_code, kExitConnection) << describe(r);
    EXPECT_TRUE(is_one_error_line(without_debug_lines(r.err)));
    // Ended by the connect timeout, and that was ConnectTimeout's.
    EXPECT_TRUE(has_text(r.err, "Timeout connecting to")) << describe(r);
    EXPECT_TRUE(has_text(r.err, "connect timeout 2 s)")) << "ConnectTimeout=2 was not used\n"
                                                         << describe(r);
}

// Whether this CPU has AES and carry-less multiply instructions, read from /proc/cpuinfo
// (independently of how mlt asks the CPU).
bool cpuinfo_has_aes_gcm() {
    const std::string info = read_file("/proc/cpuinfo");
    std::size_t at = 0;
    while ((at = info.find('\n', at)) != std::string::npos) {
        const std::size_t end = info.find('\n', ++at);
        std::string line = info.substr(at, end - at) + " ";
        if (line.rfind("flags", 0) == 0)  // x86
            return has_text(line, " aes ") && has_text(line, " pclmulqdq ");
        if (line.rfind("Features", 0) == 0)  // arm64
            return has_text(line, " aes ") && has_text(line, " pmull ");
    }
    return false;
}

// The cipher mlt negotiated, from its -v line "authenticated to ... (cipher X out, Y in)".
std::string negotiated_cipher(const ProcessResult& r) {
    const std::string marker = "(cipher ";
    const std::size_t at = r.err.find(marker);
    if (at == std::string::npos) return "(no cipher line)";
    const std::size_t start = at + marker.size();
    return r.err.substr(start, r.err.find(' ', start) - start);
}

// Without -o Ciphers or a Ciphers line in the ssh config, AES-GCM goes first on a CPU with
// AES instructions (1.5-2x cheaper per byte than chacha20-poly1305 there, tests/bench), and
// libssh's order (chacha20-poly1305 first, as OpenSSH) elsewhere.
TEST_F(ConnectTest, CipherOrderPrefersAesGcmOnCpusWithAes) {
    ProcessResult r = run_status({"-v"});
    ASSERT_EQ(r.exit_code, 0) << describe(r) << sshd_log();
    EXPECT_EQ(negotiated_cipher(r),
              cpuinfo_has_aes_gcm() ? "aes128-gcm@openssh.com" : "chacha20-poly1305@openssh.com")
        << describe(r);
}

// -o Ciphers wins, then the ssh config's Ciphers; a list libssh cannot use is a usage error
// before any connection.
TEST_F(ConnectTest, CiphersFromTheCommandLineOrTheSshConfigWin) {
    ProcessResult r = run_status({"-v", "-o", "Ciphers=chacha20-poly1305@openssh.com"});
    ASSERT_EQ(r.exit_code, 0) << describe(r) << sshd_log();
    EXPECT_EQ(negotiated_cipher(r), "chacha20-poly1305@openssh.com") << describe(r);

    const std::string config = sshd().dir() + "/client_config";
    write_file(config,
               ssh_config_entry("elsewhere", sshd().port(), custom_known_hosts(),
                                "    Ciphers aes256-gcm@openssh.com\n"),
               0600);
    r = env().run_mlt(
        {"ssh", "-v", "-F", config, "-h", "elsewhere/" + sshd().remote_dir(), "status"});
    ASSERT_EQ(r.exit_code, 0) << describe(r) << sshd_log();
    EXPECT_EQ(negotiated_cipher(r), "aes256-gcm@openssh.com") << describe(r);

    const std::size_t log_offset = sshd().log_size();
    r = run_status({"-o", "Ciphers=rot13-cbc"});
    EXPECT_EQ(r.exit_code, kExitUsage) << describe(r);
    EXPECT_TRUE(is_one_error_line(r.err)) << describe(r);
    EXPECT_TRUE(has_text(r.err, "rot13-cbc")) << describe(r);
    EXPECT_TRUE(sshd().connections_since(log_offset).empty()) << sshd_log();
}

TEST_F(ConnectTest, MissingKeyFileIsUsageErrorWithoutConnecting) {
    const std::size_t log_offset = sshd().log_size();
    trust_server_in(custom_known_hosts());
    ProcessResult r = env().run_mlt({"ssh", "-h", host_with_dir(), "-i", "/nonexistent/id_key",
                                     "-o", "UserKnownHostsFile=" + custom_known_hosts(), "status"});
    EXPECT_EQ(r.exit_code, kExitUsage) << describe(r);
    EXPECT_TRUE(is_one_error_line(r.err));
    EXPECT_TRUE(has_text(r.err, "/nonexistent/id_key"));
    EXPECT_TRUE(sshd().connections_since(log_offset).empty()) << sshd_log();
}

TEST_F(ConnectTest, BadOptionValueIsUsageErrorWithoutConnecting) {
    const std::size_t log_offset = sshd().log_size();
    for (const char* option : {"StrictHostKeyChecking=maybe", "ConnectTimeout=abc"}) {
        ProcessResult r = run_status({"-o", option});
        EXPECT_EQ(r.exit_code, kExitUsage) << option << "\n" << describe(r);
        EXPECT_TRUE(is_one_error_line(r.err));
        EXPECT_TRUE(contains_icase(r.err, option)) << describe(r);
    }
    EXPECT_TRUE(sshd().connections_since(log_offset).empty()) << sshd_log();
}

TEST_F(ConnectTest, HostAliasFromHomeSshConfig) {
    trust_server_in(custom_known_hosts());
    write_file(env().ssh_dir() + "/config",
               ssh_config_entry("myalias", sshd().port(), custom_known_hosts()), 0600);
    env().write_settings("ssh:\n  remote_dir: " + sshd().remote_dir() + "\n");
    ProcessResult r = env().run_mlt({"ssh", "-h", "myalias", "status"});
    ASSERT_EQ(r.exit_code, 0) << describe(r) << sshd_log();
    EXPECT_TRUE(contains_icase(r.out, "no job")) << describe(r);
    EXPECT_TRUE(logged_in());
}

TEST_F(ConnectTest, PortOptionOverridesConfigPort) {
    trust_server_in(custom_known_hosts());
    const ClosedPort closed;
    write_file(env().ssh_dir() + "/config",
               ssh_config_entry("myalias", closed.port(), custom_known_hosts()), 0600);
    ProcessResult r = env().run_mlt({"ssh", "-h", "myalias/" + sshd().remote_dir(), "-p",
                                     std::to_string(sshd().port()), "status"});
    ASSERT_EQ(r.exit_code, 0) << describe(r) << sshd_log();
    EXPECT_TRUE(contains_icase(r.out, "no job")) << describe(r);
    EXPECT_TRUE(logged_in());
}

TEST_F(ConnectTest, ConfigFileGivenWithDashF) {
    trust_server_in(custom_known_hosts());
    const std::string config = sshd().dir() + "/client_config";
    write_file(config, ssh_config_entry("elsewhere", sshd().port(), custom_known_hosts()), 0600);
    ProcessResult r =
        env().run_mlt({"ssh", "-F", config, "-h", "elsewhere/" + sshd().remote_dir(), "status"});
    ASSERT_EQ(r.exit_code, 0) << describe(r) << sshd_log();
    EXPECT_TRUE(contains_icase(r.out, "no job")) << describe(r);
    EXPECT_TRUE(logged_in());
}

TEST_F(ConnectTest, ConfigFileGivenInSettings) {
    trust_server_in(custom_known_hosts());
    const std::string config = sshd().dir() + "/client_config";
    write_file(config, ssh_config_entry("fromsettings", sshd().port(), custom_known_hosts()), 0600);
    env().write_settings("ssh:\n  config_path: " + config +
                         "\n  remote_dir: " + sshd().remote_dir() + "\n");
    ProcessResult r = env().run_mlt({"ssh", "-h", "fromsettings", "status"});
    ASSERT_EQ(r.exit_code, 0) << describe(r) << sshd_log();
    EXPECT_TRUE(contains_icase(r.out, "no job")) << describe(r);
    EXPECT_TRUE(logged_in());
}

TEST_F(ConnectTest, UnknownSettingsKeyWarnsAndRuns) {
    env().write_settings("ssh:\n  remote_dir: " + sshd().remote_dir() + "\n  bogus_key: 1\n");
    ProcessResult r = run_status();
    ASSERT_EQ(r.exit_code, 0) << describe(r) << sshd_log();
    EXPECT_TRUE(has_text(r.err, "bogus_key"));
    EXPECT_TRUE(has_text(r.err, env().settings_path()));
}

TEST_F(ConnectTest, TildeInKeyFilenameMeansHome) {
    // $HOME, like MLTK's expanduser, so that a test (or a user) can point HOME elsewhere.
    const std::string key = env().ssh_dir() + "/id_settings";
    write_file(key, read_file(sshd().client_key_path()), 0600);
    trust_server_in(custom_known_hosts());
    env().write_settings("ssh:\n  connection:\n    key_filename: ~/.ssh/id_settings\n");
    ProcessResult r = env().run_mlt({"ssh", "-h", host_with_dir(), "-o",
                                     "UserKnownHostsFile=" + custom_known_hosts(), "status"});
    ASSERT_EQ(r.exit_code, 0) << describe(r) << sshd_log();
    EXPECT_TRUE(logged_in());
}

TEST_F(ConnectTest, DefaultKeyInHomeSshIsUsed) {
    // Like OpenSSH: without -i, ~/.ssh/id_ed25519 is tried.
    write_file(env().ssh_dir() + "/id_ed25519", read_file(sshd().client_key_path()), 0600);
    write_file(env().ssh_dir() + "/id_ed25519.pub", read_file(sshd().client_key_path() + ".pub"));
    trust_server_in(custom_known_hosts());
    ProcessResult r = env().run_mlt({"ssh", "-h", host_with_dir(), "-o",
                                     "UserKnownHostsFile=" + custom_known_hosts(), "status"});
    ASSERT_EQ(r.exit_code, 0) << describe(r) << sshd_log();
    EXPECT_TRUE(logged_in());
}

TEST_F(ConnectTest, MissingConfigFileIsUsageErrorWithoutConnecting) {
    const std::size_t log_offset = sshd().log_size();
    ProcessResult r = run_status({"-F", sshd().dir() + "/no_such_config"});
    EXPECT_EQ(r.exit_code, kExitUsage) << describe(r);
    EXPECT_TRUE(is_one_error_line(r.err));
    EXPECT_TRUE(has_text(r.err, "no_such_config"));
    EXPECT_TRUE(sshd().connections_since(log_offset).empty()) << sshd_log();
}

// An account that runs no commands: sshd's ForceCommand (or the account's login shell) is
// nologin, which prints its line on stdout and exits 1. The login itself succeeds, so this
// is a remote command that ran and failed (exit 1, not 255), and the error quotes the
// server's own line instead of only guessing at a missing shell.
class NologinTest : public TrainTest {
  protected:
    std::string sshd_extra_config() const override { return "ForceCommand /usr/sbin/nologin\n"; }

    static constexpr const char* kServerLine = "This account is currently not available.";

    void expect_refused(const ProcessResult& r) const {
        EXPECT_EQ(r.exit_code, kExitRemoteFailed) << describe(r) << sshd_log();
        EXPECT_TRUE(is_one_error_line(r.err));
        EXPECT_TRUE(has_text(r.err, kServerLine));
        EXPECT_TRUE(has_text(r.err, host()));
        // The line is the server's refusal, not a job's output.
        EXPECT_TRUE(lacks_text(r.out, kServerLine));
    }
};

TEST_F(NologinTest, EveryCommandQuotesTheServersLine) {
    ASSERT_TRUE(std::filesystem::exists("/usr/sbin/nologin"));
    write_user_settings();
    write_shell_model("nl", "echo trained\n");

    {
        SCOPED_TRACE("status");
        expect_refused(mlt({"ssh", "status"}));
        EXPECT_TRUE(logged_in()) << sshd_log();
    }
    {
        SCOPED_TRACE("logs");
        expect_refused(mlt({"ssh", "logs", "nl"}));
    }
    SCOPED_TRACE("train");
    const ProcessResult r = mlt({"ssh", "train", "nl"});
    expect_refused(r);
    // Nothing was uploaded: the remote dir is as the harness made it.
    EXPECT_TRUE(std::filesystem::is_empty(remote())) << describe(r);
}

}  // namespace
}  // namespace mlt_test
