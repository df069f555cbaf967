// ssh config entries as OpenSSH reads them: aliases of any spelling (`vast_ai`), their
// HostName/Port/User/IdentityFile over the settings, and clear errors for names that are no
// host names.
#include <gtest/gtest.h>

#include <string>

#include "harness/expect.h"
#include "harness/files.h"
#include "harness/net.h"
#include "harness/ssh_test.h"

namespace mlt_test {
namespace {

constexpr int kExitUsage = 2;

class SshConfigTest : public SshTest {
  protected:
    std::string config_path() const { return sshd().dir() + "/client_config"; }
    void write_config(const std::string& text) const { write_file(config_path(), text, 0600); }

    // The checks every refused name must pass: one `mlt: error:` line with exit 2 that names
    // `name`, never libssh's empty error, and no connection attempt.
    void expect_clear_refusal(const ProcessResult& r, const std::string& name,
                              std::size_t log_offset) {
        EXPECT_EQ(r.exit_code, kExitUsage) << describe(r);
        EXPECT_TRUE(is_one_error_line(r.err));
        EXPECT_TRUE(has_text(r.err, name));
        EXPECT_TRUE(lacks_text(r.err, "unknown libssh error"));
        EXPECT_TRUE(sshd().connections_since(log_offset).empty()) << sshd_log();
    }
};

TEST_F(SshConfigTest, AliasWithUnderscoreResolvesThroughItsEntry) {
    trust_server_in(custom_known_hosts());
    write_config(ssh_config_entry("utest_host", sshd().port(), custom_known_hosts()));
    ProcessResult r = env().run_mlt(
        {"ssh", "-F", config_path(), "-h", "utest_host/" + sshd().remote_dir(), "status"});
    ASSERT_EQ(r.exit_code, 0) << describe(r) << sshd_log();
    EXPECT_TRUE(contains_icase(r.out, "no job")) << describe(r);
    EXPECT_TRUE(logged_in());
}

// MLTK's own test: `-h utest_host` with a settings `connection` that names another host,
// port, user and an empty key_filename. The alias entry wins over the settings; '' is no key.
TEST_F(SshConfigTest, AliasEntryWinsOverTheSettingsConnection) {
    const ClosedPort closed;
    trust_server_in(custom_known_hosts());
    write_config(ssh_config_entry("utest_host", sshd().port(), custom_known_hosts()));
    env().write_settings(
        "ssh:\n  config_path: " + config_path() + "\n  remote_dir: " + sshd().remote_dir() +
        "\n  connection:\n    hostname: localhost\n    port: " + std::to_string(closed.port()) +
        "\n    key_filename: ''\n    username: nobody_here\n");
    ProcessResult r = env().run_mlt({"ssh", "-h", "utest_host", "status"});
    ASSERT_EQ(r.exit_code, 0) << describe(r) << sshd_log();
    EXPECT_TRUE(contains_icase(r.out, "no job")) << describe(r);
    EXPECT_TRUE(logged_in());
}

TEST_F(SshConfigTest, SettingsHostnameMayBeAnAliasWithUnderscore) {
    trust_server_in(custom_known_hosts());
    write_config(ssh_config_entry("vast_ai", sshd().port(), custom_known_hosts()));
    env().write_settings("ssh:\n  config_path: " + config_path() + "\n  remote_dir: " +
                         sshd().remote_dir() + "\n  connection:\n    hostname: vast_ai\n");
    ProcessResult r = env().run_mlt({"ssh", "status"});
    ASSERT_EQ(r.exit_code, 0) << describe(r) << sshd_log();
    EXPECT_TRUE(logged_in());
}

// The alias entry's ProxyJump names another `_` alias: libssh's own reading of the file must
// not trip over it, and the `ssh` that makes the jump resolves it in the same file.
TEST_F(SshConfigTest, ProxyJumpToAnAliasWithUnderscore) {
    trust_server_in(custom_known_hosts());
    write_config(ssh_config_entry("jump_box", sshd().port(), custom_known_hosts(),
                                  "    StrictHostKeyChecking yes\n    BatchMode yes\n") +
                 ssh_config_entry("gpu_box", sshd().port(), custom_known_hosts(),
                                  "    ProxyJump jump_box\n"));
    ProcessResult r = env().run_mlt(
        {"ssh", "-F", config_path(), "-h", "gpu_box/" + sshd().remote_dir(), "status"});
    ASSERT_EQ(r.exit_code, 0) << describe(r) << sshd_log();
    EXPECT_EQ(login_count(), 2u) << "the jump and the target\n" << sshd_log();
}

TEST_F(SshConfigTest, AliasWithoutHostNameIsAClearError) {
    write_config("Host other\n    HostName 127.0.0.1\n");
    const std::size_t log_offset = sshd().log_size();
    ProcessResult r = env().run_mlt({"ssh", "-F", config_path(), "-h", "vast_ai", "status"});
    expect_clear_refusal(r, "vast_ai", log_offset);
    EXPECT_TRUE(has_text(r.err, "'_'")) << "the reason";
    EXPECT_TRUE(has_text(r.err, config_path())) << "where it was looked up";
    EXPECT_TRUE(has_text(r.err, "HostName")) << "what to do";
}

TEST_F(SshConfigTest, HostNameThatIsNoHostNameNamesItsLine) {
    write_config("# gpu\nHost gpu\n    HostName gpu_box.example.com\n");
    const std::size_t log_offset = sshd().log_size();
    ProcessResult r = env().run_mlt({"ssh", "-F", config_path(), "-h", "gpu", "status"});
    expect_clear_refusal(r, "gpu_box.example.com", log_offset);
    EXPECT_TRUE(has_text(r.err, config_path() + ":3"));
}

TEST_F(SshConfigTest, OverlongHostIsAClearError) {
    const std::string label(70, 'a');
    const std::size_t log_offset = sshd().log_size();
    ProcessResult r = env().run_mlt({"ssh", "-h", label + ".example.com", "status"});
    expect_clear_refusal(r, label.substr(0, 20), log_offset);
    EXPECT_TRUE(has_text(r.err, "63")) << "the limit it breaks";

    std::string long_name;
    for (int i = 0; i < 30; ++i) long_name += "abcdefghi.";
    r = env().run_mlt({"ssh", "-h", long_name + "com", "status"});
    expect_clear_refusal(r, long_name.substr(0, 20), log_offset);
    EXPECT_TRUE(has_text(r.err, "253")) << "the limit it breaks";
}

// A value libssh refuses is named with its keyword and line, before any connection.
TEST_F(SshConfigTest, RefusedConfigValueNamesItsLine) {
    write_config(ssh_config_entry("gpu_box", sshd().port(), custom_known_hosts(),
                                  "    KexAlgorithms no-such-kex\n"));
    const std::size_t log_offset = sshd().log_size();
    ProcessResult r = env().run_mlt({"ssh", "-F", config_path(), "-h", "gpu_box", "status"});
    expect_clear_refusal(r, "KexAlgorithms no-such-kex at " + config_path() + ":7", log_offset);
}

}  // namespace
}  // namespace mlt_test
