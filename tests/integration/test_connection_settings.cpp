// The `connection:` keys MLTK passes to paramiko: password, passphrase, timeout,
// look_for_keys, allow_agent honoured; the others warned about once.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "harness/expect.h"
#include "harness/files.h"
#include "harness/net.h"
#include "harness/openssh.h"
#include "harness/train_fixture.h"

namespace mlt_test {
namespace {

constexpr int kExitUsage = 2;
constexpr int kExitConnection = 255;
constexpr const char* kSecret = "pw-S3CRET-42";

class ConnectionSettingsTest : public SshTest {
  protected:
    // sshd takes passwords too (first value wins), so that a password attempt is logged:
    // "Failed password for USER". No password is known to it, so none succeeds.
    std::string sshd_extra_config() const override { return "PasswordAuthentication yes\n"; }

    // Settings whose `connection` names the test server, plus `lines` (indented for it).
    void write_connection(const std::string& lines, int port = 0) {
        env().write_settings("ssh:\n  remote_dir: " + sshd().remote_dir() +
                             "\n  connection:\n    hostname: 127.0.0.1\n    port: " +
                             std::to_string(port ? port : sshd().port()) +
                             "\n    username: " + sshd().user() + "\n" + lines);
    }
    // `mlt ssh -o UserKnownHostsFile=<trusted> extra... status`.
    ProcessResult status(const std::vector<std::string>& extra = {}) {
        trust_server_in(custom_known_hosts());
        std::vector<std::string> args = {"ssh", "-o", "UserKnownHostsFile=" + custom_known_hosts()};
        args.insert(args.end(), extra.begin(), extra.end());
        args.push_back("status");
        return env().run_mlt(args);
    }
    std::size_t failed_passwords(std::size_t log_offset) const {
        return count_occurrences(sshd().log_text().substr(log_offset),
                                 "Failed password for " + sshd().user() + " ");
    }
};

// Password authentication cannot succeed against the test server (it knows no password), so
// this shows that the password is sent, and that it shows up nowhere, even with -v.
TEST_F(ConnectionSettingsTest, PasswordIsUsedForPasswordAuthAndNeverShown) {
    write_connection(std::string("    password: \"") + kSecret + "\"\n");
    const std::size_t log_offset = sshd().log_size();
    ProcessResult r = status({"-v"});
    EXPECT_EQ(r.exit_code, kExitConnection) << describe(r) << sshd_log();
    EXPECT_EQ(failed_passwords(log_offset), 1u) << sshd_log();
    EXPECT_TRUE(has_text(r.err, "password")) << "the methods tried";
    EXPECT_TRUE(lacks_text(r.out + r.err, kSecret));
    EXPECT_TRUE(lacks_text(sshd().log_text(), kSecret));
}

// OpenSSH's `no` with a changed host key: connect, but keys only; the password stays home.
TEST_F(ConnectionSettingsTest, ChangedHostKeyWithNoNeverSendsThePassword) {
    const std::string wrong_key = sshd().dir() + "/unauthorized_key";
    make_ssh_key(wrong_key);
    const std::string old_key = sshd().dir() + "/old_host_key";
    make_ssh_key(old_key);
    write_connection("    key_filename: " + wrong_key + "\n    password: \"" + kSecret + "\"\n");
    // The same run against a known key does send it: the check below can fail.
    std::size_t log_offset = sshd().log_size();
    ProcessResult r = status({"-o", "StrictHostKeyChecking=no"});
    EXPECT_EQ(r.exit_code, kExitConnection) << describe(r);
    EXPECT_EQ(failed_passwords(log_offset), 1u) << sshd_log();

    write_file(custom_known_hosts(), "[127.0.0.1]:" + std::to_string(sshd().port()) + " " +
                                         key_type_and_blob(read_file(old_key + ".pub")) + "\n");
    log_offset = sshd().log_size();
    r = env().run_mlt({"ssh", "-o", "UserKnownHostsFile=" + custom_known_hosts(), "-o",
                       "StrictHostKeyChecking=no", "status"});
    EXPECT_EQ(r.exit_code, kExitConnection) << describe(r);
    EXPECT_TRUE(has_text(r.err, "has CHANGED")) << describe(r);
    EXPECT_TRUE(has_text(r.err, "not password or keyboard-interactive")) << describe(r);
    EXPECT_EQ(failed_passwords(log_offset), 0u) << sshd_log();
    EXPECT_TRUE(lacks_text(r.out + r.err, kSecret));

    // With the right key the run goes on.
    write_connection("    key_filename: " + sshd().client_key_path() + "\n");
    r = env().run_mlt({"ssh", "-o", "UserKnownHostsFile=" + custom_known_hosts(), "-o",
                       "StrictHostKeyChecking=no", "status"});
    EXPECT_EQ(r.exit_code, 0) << describe(r) << sshd_log();
    EXPECT_TRUE(logged_in());
}

TEST_F(ConnectionSettingsTest, LookForKeysFalseSkipsTheDefaultKeys) {
    write_file(env().ssh_dir() + "/id_ed25519", read_file(sshd().client_key_path()), 0600);
    write_file(env().ssh_dir() + "/id_ed25519.pub", read_file(sshd().client_key_path() + ".pub"));
    write_connection("    look_for_keys: true\n");
    ProcessResult r = status();
    ASSERT_EQ(r.exit_code, 0) << describe(r) << sshd_log();
    ASSERT_EQ(login_count(), 1u);

    write_connection("    look_for_keys: false\n");
    r = status();
    EXPECT_EQ(r.exit_code, kExitConnection) << describe(r);
    EXPECT_TRUE(is_one_error_line(r.err));
    EXPECT_TRUE(lacks_text(r.err, "id_ed25519")) << describe(r);
    EXPECT_EQ(login_count(), 1u) << sshd_log();
}

TEST_F(ConnectionSettingsTest, AllowAgentFalseLeavesTheAgentAlone) {
    const std::string sock = sshd().dir() + "/agent.sock";
    BackgroundProcess agent({"ssh-agent", "-D", "-a", sock}, tool_environment(), sshd().dir());
    ASSERT_TRUE(wait_until([&] { return path_exists(sock); }, kEffectTimeout)) << agent.err();
    std::vector<std::string> add_env = tool_environment();
    add_env.push_back("SSH_AUTH_SOCK=" + sock);
    ProcessResult add = run_process({"ssh-add", sshd().client_key_path()}, add_env, kToolTimeout);
    ASSERT_EQ(add.exit_code, 0) << describe(add);
    env().set("SSH_AUTH_SOCK", sock);

    write_connection("");
    ProcessResult r = status();
    ASSERT_EQ(r.exit_code, 0) << "the agent's key should log in\n" << describe(r) << sshd_log();
    ASSERT_EQ(login_count(), 1u);

    write_connection("    allow_agent: false\n");
    r = status();
    EXPECT_EQ(r.exit_code, kExitConnection) << describe(r);
    // What was tried (the hint after it may still advise an agent).
    const std::string tried = r.err.substr(0, r.err.find("(pass a key"));
    EXPECT_TRUE(has_text(tried, "default keys")) << describe(r);
    EXPECT_TRUE(lacks_text(tried, "agent")) << describe(r);
    EXPECT_EQ(login_count(), 1u) << sshd_log();
}

TEST_F(ConnectionSettingsTest, TimeoutBoundsTheConnect) {
    SilentListener silent;
    write_connection("    key_filename: " + sshd().client_key_path() + "\n    timeout: 2\n",
                     silent.port());
    // Ended by libssh's connect timeout (the listener never answers nor closes), the one of
    // the settings (the default is 15 s).
    ProcessResult r = status({"-v"});
    EXPECT_EQ(r.exit_code, kExitConnection) << describe(r);
    EXPECT_TRUE(is_one_error_line(without_debug_lines(r.err)));
    EXPECT_TRUE(has_text(r.err, "Timeout connecting to")) << describe(r);
    EXPECT_TRUE(has_text(r.err, "connect timeout 2 s)")) << "timeout: 2 was not used\n"
                                                         << describe(r);

    // -o ConnectTimeout wins over the settings.
    write_connection("    key_filename: " + sshd().client_key_path() + "\n    timeout: 60\n",
                     silent.port());
    r = status({"-v", "-o", "ConnectTimeout=2"});
    EXPECT_EQ(r.exit_code, kExitConnection) << describe(r);
    EXPECT_TRUE(has_text(r.err, "Timeout connecting to")) << describe(r);
    EXPECT_TRUE(has_text(r.err, "connect timeout 2 s)")) << "-o ConnectTimeout=2 did not win\n"
                                                         << describe(r);
}

TEST_F(ConnectionSettingsTest, PassphraseDecryptsTheKeyWithoutAsking) {
    const std::string key = sshd().dir() + "/encrypted_key";
    make_ssh_key(key, "ed25519", "key-pass-7", "encrypted");
    sshd().authorize_key_file(key + ".pub");
    // No terminal and no askpass: without the settings' secret this is exit 2.
    write_connection("    key_filename: " + key + "\n    passphrase: key-pass-7\n");
    ProcessResult r = status();
    ASSERT_EQ(r.exit_code, 0) << describe(r) << sshd_log();
    EXPECT_EQ(login_count(), 1u);

    // As paramiko: the password decrypts a key when no passphrase is given.
    write_connection("    key_filename: " + key + "\n    password: key-pass-7\n");
    r = status();
    ASSERT_EQ(r.exit_code, 0) << describe(r) << sshd_log();
    EXPECT_EQ(login_count(), 2u);

    write_connection("    key_filename: " + key + "\n    passphrase: wrong-pass-9\n");
    const std::size_t log_offset = sshd().log_size();
    r = status();
    EXPECT_EQ(r.exit_code, kExitUsage) << describe(r);
    EXPECT_TRUE(is_one_error_line(r.err));
    EXPECT_TRUE(has_text(r.err, key));
    EXPECT_TRUE(has_text(r.err, "ssh.connection.passphrase"));
    EXPECT_TRUE(lacks_text(r.err, "wrong-pass-9"));
    EXPECT_TRUE(sshd().connections_since(log_offset).empty()) << sshd_log();
}

// train/logs/stop/download read the user settings twice (for model_paths, then with the
// model's sidecar): each warning must still appear once, also when the model is not found.
class SettingsWarningTest : public TrainTest {};

TEST_F(SettingsWarningTest, EachWarningOncePerRun) {
    write_shell_model("m", "echo hi\n");
    write_user_settings("    compress: true\n    banner_timeout: 30\n    bogus_key: 1\n");
    write_model_settings("m", "ssh:\n  typo_setting: 1\n");
    ProcessResult r = mlt({"ssh", "stop", "m"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    for (const char* key :
         {"ssh.connection.compress is a paramiko option",
          "ssh.connection.banner_timeout is a paramiko option",
          "unknown setting ssh.connection.bogus_key", "unknown setting ssh.typo_setting"}) {
        EXPECT_EQ(count_occurrences(r.err, key), 1u) << key << "\n" << describe(r);
    }

    // A model not found: an error for train; stop acts on the bare name (its spec need not
    // be here).
    r = mlt({"ssh", "train", "no_such_model"});
    EXPECT_EQ(r.exit_code, kExitUsage) << describe(r);
    EXPECT_EQ(count_occurrences(r.err, "ssh.connection.compress is a paramiko option"), 1u)
        << describe(r);
    r = mlt({"ssh", "stop", "no_such_model"});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_EQ(count_occurrences(r.err, "ssh.connection.compress is a paramiko option"), 1u)
        << describe(r);
}

}  // namespace
}  // namespace mlt_test
