// Self-tests of the integration harness: processes, ptys, temp dirs and the real sshd.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <string>

#include "harness/expect.h"
#include "harness/files.h"
#include "harness/mlt_env.h"
#include "harness/openssh.h"
#include "harness/process.h"
#include "harness/temp_dir.h"
#include "harness/test_sshd.h"
#include "harness/train_fixture.h"

namespace mlt_test {
namespace {

using std::chrono::seconds;

TEST(HarnessProcess, CapturesOutputExitCodeAndStdin) {
    ProcessResult r = run_process({"sh", "-c", "cat; echo oops >&2; exit 3"}, tool_environment(),
                                  seconds(10), "hello\n");
    EXPECT_EQ(r.exit_code, 3) << describe(r);
    EXPECT_EQ(r.out, "hello\n");
    EXPECT_EQ(r.err, "oops\n");
    EXPECT_FALSE(r.timed_out);
}

TEST(HarnessProcess, ReportsSignalAsExitCode) {
    ProcessResult r = run_process({"sh", "-c", "kill -9 $$"}, tool_environment(), seconds(10));
    EXPECT_EQ(r.exit_code, 128 + 9) << describe(r);
}

TEST(HarnessProcess, KillsTheWholeGroupOnTimeout) {
    ProcessResult r = run_process({"sh", "-c", "sleep 60 & echo $!; sleep 60; echo never"},
                                  tool_environment(), std::chrono::milliseconds(300));
    EXPECT_TRUE(r.timed_out);
    EXPECT_EQ(r.exit_code, -1);
    // Cut at the bound, not waited for: the shell never got past its sleep, and the sleep it
    // left in the background (which holds the output open) went with the group.
    EXPECT_TRUE(lacks_text(r.out, "never")) << describe(r);
    const long background = std::atol(r.out.c_str());
    ASSERT_GT(background, 0) << describe(r);
    EXPECT_TRUE(wait_until([&] { return !process_alive(background); }, seconds(10)));
}

TEST(HarnessProcess, MissingProgramExits127) {
    ProcessResult r = run_process({"/nonexistent/program"}, tool_environment(), seconds(10));
    EXPECT_EQ(r.exit_code, 127);
    EXPECT_TRUE(has_text(r.err, "exec failed"));
}

TEST(HarnessProcess, HasNoControllingTerminal) {
    ProcessResult r = run_process(
        {"sh", "-c", "if (true </dev/tty) 2>/dev/null; then echo tty; else echo none; fi"},
        tool_environment(), seconds(10));
    EXPECT_EQ(trim(r.out), "none") << describe(r);
}

TEST(HarnessPty, PlaysScriptAndWaitsForEchoOff) {
    PtyResult r = run_in_pty(
        {"sh", "-c",
         "printf 'Name: '; read n; stty -echo; printf 'Secret: '; read s; stty echo; "
         "echo; echo \"got $n/$s\"; exit 7"},
        tool_environment(), seconds(10), {{"Name: ", "bob\n"}, {"Secret: ", "s3cr3t\n", true}});
    EXPECT_EQ(r.exit_code, 7) << describe(r);
    EXPECT_EQ(r.steps_done, 2u);
    EXPECT_TRUE(has_text(r.output, "got bob/s3cr3t"));
    // The secret was typed after echo went off: it shows only in the final line.
    EXPECT_EQ(count_occurrences(r.output, "s3cr3t"), 1u) << r.output;
}

TEST(HarnessPty, TimesOutWhenPromptNeverComes) {
    PtyResult r = run_in_pty({"sh", "-c", "sleep 60"}, tool_environment(),
                             std::chrono::milliseconds(300), {{"never", "x\n"}});
    EXPECT_TRUE(r.timed_out);
    EXPECT_EQ(r.steps_done, 0u);
}

TEST(HarnessTempDir, IsRemovedRecursively) {
    std::string path;
    {
        TempDir dir;
        path = dir.path();
        make_dir(dir.file("a"), 0700);
        write_file(dir.file("a/b"), "x");
        make_dir(dir.file("locked"), 0700);
        write_file(dir.file("locked/f"), "y");
        make_dir(dir.file("locked"), 0500);
        ASSERT_TRUE(path_exists(dir.file("a/b")));
        ASSERT_EQ(path.front(), '/');
    }
    EXPECT_FALSE(path_exists(path));
}

TEST(HarnessSshd, OpenSshClientLogsIn) {
    TestSshd sshd;
    MltEnv env(sshd.home());
    const std::string known_hosts = sshd.home() + "/.ssh/known_hosts";
    ProcessResult r =
        env.run(sshd.openssh_argv(sshd.client_key_path(), known_hosts, "echo ok"), seconds(30));
    ASSERT_EQ(r.exit_code, 0) << describe(r) << "\nsshd log:\n" << sshd.log_text();
    EXPECT_EQ(trim(r.out), "ok");
    EXPECT_TRUE(has_text(sshd.log_text(), "Accepted publickey for " + sshd.user()));
    // OpenSSH recorded exactly the line the harness predicts.
    EXPECT_TRUE(has_text(read_file(known_hosts), sshd.known_hosts_line()));
    EXPECT_EQ(sshd.host_key_fingerprint().rfind("SHA256:", 0), 0u);
}

TEST(HarnessSshd, RejectsAnUnauthorizedKey) {
    TestSshd sshd;
    MltEnv env(sshd.home());
    const std::string other = sshd.dir() + "/other_key";
    make_ssh_key(other);
    ProcessResult r = env.run(sshd.openssh_argv(other, sshd.home() + "/kh"), seconds(30));
    EXPECT_EQ(r.exit_code, 255) << describe(r);
    EXPECT_TRUE(has_text(r.err, "Permission denied (publickey)"));
}

TEST(HarnessSshd, CountsClientConnections) {
    TestSshd sshd;
    MltEnv env(sshd.home());
    const std::size_t before = sshd.log_size();
    EXPECT_TRUE(sshd.connections_since(before).empty()) << sshd.log_text();
    ProcessResult r = env.run(sshd.openssh_argv(sshd.client_key_path(), sshd.home() + "/kh"));
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_EQ(sshd.connections_since(before).size(), 1u) << sshd.log_text();
}

TEST(HarnessSshd, TwoServersRunSideBySide) {
    TestSshd first;
    TestSshd second;
    EXPECT_NE(first.port(), second.port());
    EXPECT_NE(first.host_key_fingerprint(), second.host_key_fingerprint());
}

}  // namespace
}  // namespace mlt_test
