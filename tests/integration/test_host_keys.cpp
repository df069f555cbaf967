// Host key verification against known_hosts: yes / accept-new (default) / no.
#include <gtest/gtest.h>

#include <functional>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "harness/expect.h"
#include "harness/files.h"
#include "harness/openssh.h"
#include "harness/ssh_test.h"
#include "harness/temp_dir.h"

namespace mlt_test {
namespace {

constexpr int kExitHostKey = 4;

class HostKeyTest : public SshTest {
  protected:
    // `mlt ssh -h ... -i client_key [-o UserKnownHostsFile=known_hosts] extra... status`.
    ProcessResult status_with(const std::string& known_hosts,
                              const std::vector<std::string>& extra = {}) {
        std::vector<std::string> args = {"ssh", "-h", host_with_dir(), "-i",
                                         sshd().client_key_path()};
        if (!known_hosts.empty()) {
            args.push_back("-o");
            args.push_back("UserKnownHostsFile=" + known_hosts);
        }
        args.insert(args.end(), extra.begin(), extra.end());
        args.push_back("status");
        return env().run_mlt(args);
    }

    // "[127.0.0.1]:PORT" as known_hosts and ssh-keygen -F name the server.
    std::string host_pattern() const { return "[127.0.0.1]:" + std::to_string(sshd().port()); }

    // True when OpenSSH finds an entry for the server in `known_hosts` (plain or hashed).
    bool openssh_knows_server(const std::string& known_hosts) {
        ProcessResult r = run_process({"ssh-keygen", "-F", host_pattern(), "-f", known_hosts},
                                      tool_environment(), kToolTimeout);
        return r.exit_code == 0;
    }

    // "ssh-ed25519 AAAA..." of a new key that is not the server's.
    std::string other_key_blob(const std::string& name) {
        const std::string path = sshd().dir() + "/" + name;
        make_ssh_key(path);
        return key_type_and_blob(read_file(path + ".pub"));
    }
};

TEST_F(HostKeyTest, StrictYesRefusesUnknownHostAndShowsFingerprint) {
    const std::string known_hosts = custom_known_hosts();
    const std::string before = "[elsewhere.example]:22 " + other_key_blob("k1") + "\n";
    write_file(known_hosts, before);
    ProcessResult r = status_with(known_hosts, {"-o", "StrictHostKeyChecking=yes"});
    EXPECT_EQ(r.exit_code, kExitHostKey) << describe(r);
    EXPECT_TRUE(has_text(r.err, sshd().host_key_fingerprint()));
    EXPECT_TRUE(is_one_error_line(r.err));
    EXPECT_EQ(read_file(known_hosts), before) << "known_hosts must not change";
    EXPECT_TRUE(lacks_text(sshd().log_text(), "Accepted publickey")) << "no auth before the check";
}

TEST_F(HostKeyTest, StrictYesWithoutKnownHostsFileRefuses) {
    const std::string known_hosts = custom_known_hosts();
    ProcessResult r = status_with(known_hosts, {"-o", "StrictHostKeyChecking=yes"});
    EXPECT_EQ(r.exit_code, kExitHostKey) << describe(r);
    EXPECT_TRUE(has_text(r.err, sshd().host_key_fingerprint()));
    EXPECT_FALSE(path_exists(known_hosts));
}

TEST_F(HostKeyTest, AcceptNewIsDefaultAndRecordsTheHostOnce) {
    const std::string known_hosts = custom_known_hosts();
    ProcessResult first = status_with(known_hosts);
    ASSERT_EQ(first.exit_code, 0) << describe(first) << sshd_log();
    EXPECT_TRUE(logged_in());
    EXPECT_TRUE(contains_icase(first.out, "no job")) << describe(first);
    EXPECT_TRUE(has_text(first.err, sshd().host_key_fingerprint()));
    ASSERT_TRUE(path_exists(known_hosts));
    const std::string recorded = read_file(known_hosts);
    EXPECT_TRUE(openssh_knows_server(known_hosts)) << recorded;
    EXPECT_TRUE(has_text(recorded, sshd().host_key_type_and_blob()));

    ProcessResult second = status_with(known_hosts);
    ASSERT_EQ(second.exit_code, 0) << describe(second);
    EXPECT_TRUE(lacks_text(second.err, sshd().host_key_fingerprint())) << "notice repeated";
    EXPECT_EQ(read_file(known_hosts), recorded) << "known_hosts written again";
}

TEST_F(HostKeyTest, RecordedEntryIsTrustedByOpenSsh) {
    const std::string known_hosts = custom_known_hosts();
    ProcessResult r = status_with(known_hosts, {"-o", "StrictHostKeyChecking=accept-new"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    ProcessResult ssh =
        env().run(sshd().openssh_argv(sshd().client_key_path(), known_hosts, "true", "yes"));
    EXPECT_EQ(ssh.exit_code, 0) << "OpenSSH rejects mlt's known_hosts entry\n"
                                << describe(ssh) << read_file(known_hosts);
}

TEST_F(HostKeyTest, DefaultKnownHostsIsInHome) {
    ProcessResult r = status_with("");
    ASSERT_EQ(r.exit_code, 0) << describe(r) << sshd_log();
    ASSERT_TRUE(path_exists(default_known_hosts())) << "nothing written to $HOME/.ssh/known_hosts";
    EXPECT_TRUE(openssh_knows_server(default_known_hosts())) << read_file(default_known_hosts());
}

TEST_F(HostKeyTest, EntryWrittenByOpenSshIsTrusted) {
    const std::string known_hosts = custom_known_hosts();
    ProcessResult ssh = env().run(sshd().openssh_argv(sshd().client_key_path(), known_hosts));
    ASSERT_EQ(ssh.exit_code, 0) << describe(ssh);
    ProcessResult r = status_with(known_hosts, {"-o", "StrictHostKeyChecking=yes"});
    EXPECT_EQ(r.exit_code, 0) << describe(r) << read_file(known_hosts);
    EXPECT_EQ(login_count(), 2u) << sshd_log();
}

TEST_F(HostKeyTest, HashedEntryIsTrusted) {
    const std::string known_hosts = custom_known_hosts();
    trust_server_in(known_hosts);
    ProcessResult hash =
        run_process({"ssh-keygen", "-H", "-f", known_hosts}, tool_environment(), kToolTimeout);
    ASSERT_EQ(hash.exit_code, 0) << describe(hash);
    ASSERT_TRUE(lacks_text(read_file(known_hosts), "127.0.0.1"));
    ProcessResult r = status_with(known_hosts, {"-o", "StrictHostKeyChecking=yes"});
    EXPECT_EQ(r.exit_code, 0) << describe(r) << read_file(known_hosts);
    EXPECT_TRUE(logged_in());
}

// yes and accept-new (the default) refuse a key that differs from the recorded one,
// pointing at the offending known_hosts line and at the command that removes it.
class ChangedHostKeyTest : public HostKeyTest, public ::testing::WithParamInterface<std::string> {};

TEST_P(ChangedHostKeyTest, IsRefusedNamingTheLine) {
    const std::string known_hosts = custom_known_hosts();
    std::string content = "# hosts of the test\n";
    content += "[elsewhere.example]:22 " + other_key_blob("k1") + "\n";
    content += host_pattern() + " " + other_key_blob("k2") + "\n";
    write_file(known_hosts, content);
    std::vector<std::string> extra;
    if (!GetParam().empty()) extra = {"-o", "StrictHostKeyChecking=" + GetParam()};
    ProcessResult r = status_with(known_hosts, extra);
    EXPECT_EQ(r.exit_code, kExitHostKey) << describe(r);
    EXPECT_TRUE(has_text(r.err, known_hosts + ":3"));
    EXPECT_TRUE(has_text(r.err, "ssh-keygen -R '" + host_pattern() + "' -f " + known_hosts));
    EXPECT_TRUE(is_one_error_line(r.err));
    EXPECT_EQ(read_file(known_hosts), content) << "known_hosts must not change";
    EXPECT_TRUE(lacks_text(sshd().log_text(), "Accepted publickey")) << "authenticated anyway";
}

INSTANTIATE_TEST_SUITE_P(Policies, ChangedHostKeyTest, ::testing::Values("", "yes", "accept-new"),
                         [](const ::testing::TestParamInfo<std::string>& policy) {
                             if (policy.param.empty()) return std::string("default");
                             std::string name = policy.param;
                             for (char& c : name) {
                                 if (c == '-') c = '_';
                             }
                             return name;
                         });

// The command in the message is the exact one: run as printed, it removes the stale entry
// and the next run records the new key. (For the default file it has no -f when $HOME is the
// home of the password database, which a test's temporary HOME is not: unit tested.)
TEST_F(HostKeyTest, ChangedKeyMessageHasTheCommandThatFixesIt) {
    const std::string old_key = other_key_blob("k_old");
    for (const bool default_file : {false, true}) {
        SCOPED_TRACE(default_file ? "~/.ssh/known_hosts" : "custom known_hosts");
        const std::string known_hosts = default_file ? default_known_hosts() : custom_known_hosts();
        write_file(known_hosts, host_pattern() + " " + old_key + "\n");
        ProcessResult r = status_with(default_file ? "" : known_hosts);
        ASSERT_EQ(r.exit_code, kExitHostKey) << describe(r);
        const std::size_t at = r.err.find("ssh-keygen -R ");
        ASSERT_NE(at, std::string::npos) << describe(r);
        const std::string command = r.err.substr(at, r.err.find(';', at) - at);
        EXPECT_TRUE(has_text(command, "'" + host_pattern() + "'"));
        ProcessResult fix = env().run({"/bin/sh", "-c", command});
        ASSERT_EQ(fix.exit_code, 0) << command << "\n" << describe(fix);
        EXPECT_FALSE(openssh_knows_server(known_hosts)) << read_file(known_hosts);
        r = status_with(default_file ? "" : known_hosts);
        EXPECT_EQ(r.exit_code, 0) << describe(r);
        EXPECT_TRUE(has_text(read_file(known_hosts), sshd().host_key_type_and_blob()));
    }
}

// OpenSSH's `StrictHostKeyChecking no`: a changed key is accepted with a warning, known_hosts
// stays as it is; from settings or -o.
TEST_F(HostKeyTest, NoAcceptsAChangedKeyWithAWarning) {
    const std::string known_hosts = custom_known_hosts();
    const std::string content = host_pattern() + " " + other_key_blob("k_old") + "\n";
    write_file(known_hosts, content);
    ProcessResult r = status_with(known_hosts, {"-o", "StrictHostKeyChecking=no"});
    ASSERT_EQ(r.exit_code, 0) << describe(r) << sshd_log();
    EXPECT_TRUE(contains_icase(r.out, "no job")) << describe(r);
    EXPECT_TRUE(has_text(r.err, "has CHANGED")) << describe(r);
    EXPECT_TRUE(has_text(r.err, sshd().host_key_fingerprint())) << describe(r);
    EXPECT_TRUE(has_text(r.err, known_hosts + ":1")) << describe(r);
    EXPECT_EQ(read_file(known_hosts), content) << "known_hosts must not change";
    EXPECT_EQ(login_count(), 1u) << sshd_log();

    env().write_settings("ssh:\n  host_key_checking: no\n");
    r = status_with(known_hosts);
    ASSERT_EQ(r.exit_code, 0) << describe(r) << sshd_log();
    EXPECT_TRUE(has_text(r.err, "has CHANGED")) << describe(r);
    EXPECT_EQ(read_file(known_hosts), content) << "known_hosts must not change";
}

TEST_F(HostKeyTest, NoConnectsToUnknownHostWithoutRecording) {
    const std::string known_hosts = custom_known_hosts();
    ProcessResult r = status_with(known_hosts, {"-o", "StrictHostKeyChecking=no"});
    ASSERT_EQ(r.exit_code, 0) << describe(r) << sshd_log();
    EXPECT_TRUE(contains_icase(r.out, "no job")) << describe(r);
    EXPECT_TRUE(logged_in());
    EXPECT_FALSE(path_exists(known_hosts)) << read_file(known_hosts);

    const std::string existing = "# keep me\n";
    write_file(known_hosts, existing);
    r = status_with(known_hosts, {"-o", "StrictHostKeyChecking=no"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_EQ(read_file(known_hosts), existing);
}

TEST_F(HostKeyTest, SettingsPolicyAppliesAndCommandLineWins) {
    const std::string known_hosts = custom_known_hosts();
    env().write_settings("ssh:\n  host_key_checking: yes\n");
    ProcessResult strict = status_with(known_hosts);
    EXPECT_EQ(strict.exit_code, kExitHostKey) << describe(strict);
    EXPECT_FALSE(path_exists(known_hosts));

    ProcessResult relaxed = status_with(known_hosts, {"-o", "StrictHostKeyChecking=accept-new"});
    EXPECT_EQ(relaxed.exit_code, 0) << describe(relaxed);
    EXPECT_TRUE(path_exists(known_hosts) && openssh_knows_server(known_hosts));
}

TEST_F(HostKeyTest, CreatesHomeSshForDefaultKnownHosts) {
    remove_tree(env().ssh_dir());
    ProcessResult r = status_with("");
    ASSERT_EQ(r.exit_code, 0) << describe(r) << sshd_log();
    EXPECT_EQ(file_mode(env().ssh_dir()), 0700);
    EXPECT_TRUE(path_exists(default_known_hosts()) && openssh_knows_server(default_known_hosts()));
}

// Precedence (docs/settings.md): the ~/.ssh/config entry of the -h alias beats settings/defaults.
TEST_F(HostKeyTest, SshConfigStrictYesRefusesUnknownHost) {
    const std::string known_hosts = custom_known_hosts();
    write_file(
        env().ssh_dir() + "/config",
        ssh_config_entry("strict", sshd().port(), known_hosts, "    StrictHostKeyChecking yes\n"),
        0600);
    ProcessResult r = env().run_mlt({"ssh", "-h", "strict/" + sshd().remote_dir(), "status"});
    EXPECT_EQ(r.exit_code, kExitHostKey) << describe(r);
    EXPECT_TRUE(has_text(r.err, sshd().host_key_fingerprint()));
    EXPECT_FALSE(path_exists(known_hosts)) << read_file(known_hosts);
}

TEST_F(HostKeyTest, SshConfigStrictNoDoesNotRecord) {
    const std::string known_hosts = custom_known_hosts();
    write_file(
        env().ssh_dir() + "/config",
        ssh_config_entry("lax", sshd().port(), known_hosts, "    StrictHostKeyChecking no\n"),
        0600);
    ProcessResult r = env().run_mlt({"ssh", "-h", "lax/" + sshd().remote_dir(), "status"});
    ASSERT_EQ(r.exit_code, 0) << describe(r) << sshd_log();
    EXPECT_TRUE(logged_in());
    EXPECT_FALSE(path_exists(known_hosts)) << read_file(known_hosts);
}

TEST_F(HostKeyTest, CommandLineBeatsSshConfigPolicy) {
    const std::string known_hosts = custom_known_hosts();
    write_file(
        env().ssh_dir() + "/config",
        ssh_config_entry("lax", sshd().port(), known_hosts, "    StrictHostKeyChecking no\n"),
        0600);
    ProcessResult r = env().run_mlt(
        {"ssh", "-h", "lax/" + sshd().remote_dir(), "-o", "StrictHostKeyChecking=yes", "status"});
    EXPECT_EQ(r.exit_code, kExitHostKey) << describe(r);
    EXPECT_FALSE(path_exists(known_hosts)) << read_file(known_hosts);
}

// OpenSSH refuses a key marked `@revoked` in known_hosts, whatever else the file says.
TEST_F(HostKeyTest, RevokedKeyIsRefused) {
    const std::string known_hosts = custom_known_hosts();
    const std::string revoked = "@revoked * " + sshd().host_key_type_and_blob() + "\n";
    const std::string both = revoked + sshd().known_hosts_line() + "\n";
    write_file(known_hosts, both);
    ProcessResult r = status_with(known_hosts, {"-o", "StrictHostKeyChecking=yes"});
    EXPECT_EQ(r.exit_code, kExitHostKey) << describe(r);
    EXPECT_TRUE(is_one_error_line(r.err));
    EXPECT_EQ(login_count(), 0u) << sshd_log();

    write_file(known_hosts, revoked);
    r = status_with(known_hosts);  // accept-new must not add a revoked key either
    EXPECT_EQ(r.exit_code, kExitHostKey) << describe(r);
    EXPECT_EQ(read_file(known_hosts), revoked);
    EXPECT_EQ(login_count(), 0u) << sshd_log();
}

// A known_hosts line about the server that cannot be read (truncated, an unknown key type, no
// key, a hashed line cut short; or a `*` line) must not hide the valid line that holds the
// server's OLD key: libssh stops at the first unreadable line and reads the host as unknown,
// so accept-new recorded the new key and connected. OpenSSH skips such a line and refuses.
struct BrokenLine {
    std::string name;
    // The line, from the host pattern as known_hosts writes it ("[127.0.0.1]:PORT"), the
    // plain line of a valid key for the server, and that line hashed by ssh-keygen -H.
    std::function<std::string(const std::string& pattern, const std::string& valid,
                              const std::string& hashed)>
        make;
};

void PrintTo(const BrokenLine& line, std::ostream* os) {
    *os << line.name;
}

std::string first_words(const std::string& line, int words) {
    std::size_t at = 0;
    for (int i = 0; i < words && at != std::string::npos; ++i) {
        at = line.find(' ', at == 0 ? 0 : at + 1);
    }
    return at == std::string::npos ? line : line.substr(0, at);
}

std::vector<BrokenLine> broken_lines() {
    return {
        {"truncated_key", [](const std::string&, const std::string& valid,
                             const std::string&) { return valid.substr(0, valid.size() - 30); }},
        {"unknown_key_type",
         [](const std::string& pattern, const std::string& valid, const std::string&) {
             return pattern + " ssh-mlt-unknown@example.com " + valid.substr(valid.rfind(' ') + 1);
         }},
        {"no_key", [](const std::string& pattern, const std::string&,
                      const std::string&) { return pattern + " ssh-ed25519"; }},
        {"star_pattern_truncated",
         [](const std::string&, const std::string& valid, const std::string&) {
             return "* ssh-ed25519 " + valid.substr(valid.rfind(' ') + 1, 20);
         }},
        {"hashed_truncated", [](const std::string&, const std::string&,
                                const std::string& hashed) { return first_words(hashed, 2); }},
        {"hashed_host_only", [](const std::string&, const std::string&,
                                const std::string& hashed) { return first_words(hashed, 1); }},
    };
}

class BrokenKnownHostsLineTest
    : public HostKeyTest,
      public ::testing::WithParamInterface<std::tuple<BrokenLine, bool>> {
  protected:
    // `line` hashed as ssh-keygen -H writes it.
    std::string hashed(const std::string& line) {
        const std::string path = sshd().dir() + "/to_hash";
        write_file(path, line + "\n");
        ProcessResult r =
            run_process({"ssh-keygen", "-H", "-f", path}, tool_environment(), kToolTimeout);
        EXPECT_EQ(r.exit_code, 0) << describe(r);
        std::string text = read_file(path);
        while (!text.empty() && text.back() == '\n') text.pop_back();
        EXPECT_EQ(text.rfind("|1|", 0), 0u) << text;
        return text;
    }
    // The broken line of this case, made from a line that holds the server's current key.
    std::string broken() {
        const std::string current = sshd().known_hosts_line();
        return std::get<0>(GetParam()).make(host_pattern(), current, hashed(current));
    }
    bool old_key_hashed() const { return std::get<1>(GetParam()); }
};

TEST_P(BrokenKnownHostsLineTest, DoesNotHideAChangedKey) {
    const std::string known_hosts = custom_known_hosts();
    std::string old_line = host_pattern() + " " + other_key_blob("k_old");
    if (old_key_hashed()) old_line = hashed(old_line);
    const std::string bad = broken();
    for (const bool broken_first : {true, false}) {
        SCOPED_TRACE(broken_first ? "broken line first" : "broken line after the old key");
        const std::string content = "# test hosts\n" +
                                    (broken_first ? bad + "\n" + old_line : old_line + "\n" + bad) +
                                    "\n";
        write_file(known_hosts, content);
        ProcessResult r = status_with(known_hosts);
        EXPECT_EQ(r.exit_code, kExitHostKey) << describe(r) << content;
        EXPECT_TRUE(has_text(r.err, "CHANGED")) << describe(r);
        EXPECT_TRUE(has_text(r.err, known_hosts + (broken_first ? ":3" : ":2")))
            << "the old key's line is named\n"
            << describe(r);
        EXPECT_TRUE(has_text(r.err, known_hosts + (broken_first ? ":2" : ":3")))
            << "the unreadable line is named in a warning\n"
            << describe(r);
        EXPECT_EQ(read_file(known_hosts), content) << "known_hosts must not change";
        EXPECT_EQ(login_count(), 0u) << sshd_log();
        // OpenSSH decides the same on the same file.
        ProcessResult ssh = env().run(sshd().openssh_argv(sshd().client_key_path(), known_hosts));
        EXPECT_EQ(ssh.exit_code, 255) << "OpenSSH accepts this file?\n" << describe(ssh);
        EXPECT_EQ(read_file(known_hosts), content);
    }
}

// StrictHostKeyChecking yes: the server's valid line counts whatever unreadable line follows.
TEST_P(BrokenKnownHostsLineTest, DoesNotHideTheValidKeyUnderYes) {
    const std::string known_hosts = custom_known_hosts();
    std::string valid = sshd().known_hosts_line();
    if (old_key_hashed()) valid = hashed(valid);
    const std::string content = valid + "\n" + broken() + "\n";
    write_file(known_hosts, content);
    ProcessResult r = status_with(known_hosts, {"-o", "StrictHostKeyChecking=yes"});
    EXPECT_EQ(r.exit_code, 0) << describe(r) << content;
    EXPECT_TRUE(logged_in());
    EXPECT_EQ(read_file(known_hosts), content);
}

// accept-new with only an unreadable line for the server records the key once, not on every
// connection.
TEST_P(BrokenKnownHostsLineTest, AcceptNewRecordsTheKeyOnce) {
    if (old_key_hashed()) return;  // the hashed old line plays no part here: one run suffices
    const std::string known_hosts = custom_known_hosts();
    const std::string content = broken() + "\n";
    write_file(known_hosts, content);
    ProcessResult first = status_with(known_hosts);
    ASSERT_EQ(first.exit_code, 0) << describe(first);
    const std::string recorded = read_file(known_hosts);
    EXPECT_TRUE(has_text(recorded, sshd().host_key_type_and_blob())) << recorded;
    for (int i = 0; i < 2; ++i) {
        ProcessResult again = status_with(known_hosts);
        ASSERT_EQ(again.exit_code, 0) << describe(again);
        EXPECT_EQ(read_file(known_hosts), recorded) << "the key was recorded again";
    }
}

INSTANTIATE_TEST_SUITE_P(Lines, BrokenKnownHostsLineTest,
                         ::testing::Combine(::testing::ValuesIn(broken_lines()), ::testing::Bool()),
                         [](const ::testing::TestParamInfo<std::tuple<BrokenLine, bool>>& p) {
                             return std::get<0>(p.param).name +
                                    (std::get<1>(p.param) ? "_old_key_hashed" : "_old_key_plain");
                         });

// A `*` line with another valid key covers the server too: OpenSSH reads it as a changed key.
TEST_F(HostKeyTest, AStarLineWithAnotherKeyIsAChangedKey) {
    const std::string known_hosts = custom_known_hosts();
    const std::string content = "* " + other_key_blob("k_star") + "\n";
    write_file(known_hosts, content);
    ProcessResult r = status_with(known_hosts);
    EXPECT_EQ(r.exit_code, kExitHostKey) << describe(r);
    EXPECT_TRUE(has_text(r.err, known_hosts + ":1")) << describe(r);
    EXPECT_EQ(read_file(known_hosts), content);
    ProcessResult ssh = env().run(sshd().openssh_argv(sshd().client_key_path(), known_hosts));
    EXPECT_EQ(ssh.exit_code, 255) << describe(ssh);
}

// A line for the server under a pattern list with a negation, as OpenSSH reads it.
TEST_F(HostKeyTest, PatternListsAndNegationsAreReadAsOpenSshReadsThem) {
    const std::string known_hosts = custom_known_hosts();
    const std::string blob = sshd().host_key_type_and_blob();
    write_file(known_hosts,
               "other.example,[127.0.0.*]:" + std::to_string(sshd().port()) + " " + blob + "\n");
    ProcessResult r = status_with(known_hosts, {"-o", "StrictHostKeyChecking=yes"});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    write_file(known_hosts, "*,!" + host_pattern() + " " + blob + "\n");
    r = status_with(known_hosts, {"-o", "StrictHostKeyChecking=yes"});
    EXPECT_EQ(r.exit_code, kExitHostKey) << "a negated pattern excludes the host\n" << describe(r);
}

// The system-wide file (GlobalKnownHostsFile, /etc/ssh/ssh_known_hosts by default) counts as
// ssh counts it: its key is known, its other key is a changed one.
TEST_F(HostKeyTest, TheSystemWideFileCountsToo) {
    const std::string known_hosts = custom_known_hosts();
    const std::string global = sshd().dir() + "/global_known_hosts";
    write_file(env().ssh_dir() + "/config",
               ssh_config_entry(
                   "sys", sshd().port(), known_hosts,
                   "    StrictHostKeyChecking yes\n    GlobalKnownHostsFile " + global + "\n"),
               0600);
    write_file(global, sshd().known_hosts_line() + "\n");
    ProcessResult r = env().run_mlt({"ssh", "-h", "sys/" + sshd().remote_dir(), "status"});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_FALSE(path_exists(known_hosts)) << "nothing to record";

    write_file(global, "# system\n" + host_pattern() + " " + other_key_blob("k_sys") + "\n");
    r = env().run_mlt({"ssh", "-h", "sys/" + sshd().remote_dir(), "-o",
                       "StrictHostKeyChecking=accept-new", "status"});
    EXPECT_EQ(r.exit_code, kExitHostKey) << describe(r);
    EXPECT_TRUE(has_text(r.err, global + ":2")) << describe(r);
    EXPECT_FALSE(path_exists(known_hosts)) << "a changed key was recorded";
}

}  // namespace
}  // namespace mlt_test
