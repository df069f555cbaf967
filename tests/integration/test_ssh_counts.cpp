// How much of the host's sshd a run uses: connections, channels and remote commands (each
// one a run of the remote user's login shell, which pays its profile). The counts of a cold
// and a warm run, with small files and with one big file, are pinned here, so that a change
// that opens more is seen; and a profile that prints to stdout or stderr changes nothing.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "../common/test_bytes.h"
#include "harness/expect.h"
#include "harness/files.h"
#include "harness/train_fixture.h"

namespace mlt_test {
namespace {

class SshCountsTest : public TrainTest {
  protected:
    void SetUp() override {
        TrainTest::SetUp();
        write_shell_model("m", "echo log > \"$MLT_LOG_DIR/log.txt\"; echo trained\n");
        write_file(project() + "/data.txt", "small\n");
        write_model_settings("m", "ssh:\n  train_cmd: \"sh {spec}\"\n  upload_files: [data.txt]\n");
        write_user_settings();
    }

    // The -v line of a train of m: "1 connection, 1 channel, 1 remote command".
    // The "ssh use" line of a `train -v`; its whole stderr stays in last_err_ for the message
    // of a count that differs (which channel came more, and why).
    std::string counts_of_train() {
        const ProcessResult r = mlt({"ssh", "train", "m", "-v"});
        last_err_ = r.err;
        EXPECT_EQ(r.exit_code, 0) << describe(r);
        EXPECT_TRUE(has_text(r.out, "trained")) << describe(r);
        const std::string mark = "mlt: debug: ssh use: ";
        const size_t at = r.err.rfind(mark);
        if (at == std::string::npos) return "no ssh use line in: " + r.err;
        const size_t end = r.err.find('\n', at);
        return r.err.substr(at + mark.size(), end - at - mark.size());
    }
    std::string last_err_;
};

TEST_F(SshCountsTest, AColdAndAWarmRunOfSmallFilesUseOneChannel) {
    // Everything of a run goes through the one control shell: the upload, the start, the
    // follow and the collection.
    EXPECT_EQ(counts_of_train(), "1 connection, 1 channel, 1 remote command") << last_err_;
    EXPECT_EQ(counts_of_train(), "1 connection, 1 channel, 1 remote command") << last_err_;
}

TEST_F(SshCountsTest, ABigFileGoesUpInOneStreamWhereMoreWouldNotPay) {
    // 40 MiB that compress, and the spec: over a near link one tar stream moves as fast as
    // several (one cipher a connection), so the cost model plans one; compressed it is small
    // enough to go through the control shell.
    write_file(project() + "/data.txt", std::string(40u << 20, 'x'));
    EXPECT_EQ(counts_of_train(), "1 connection, 1 channel, 1 remote command") << last_err_;
    // Unchanged: nothing but the control shell.
    EXPECT_EQ(counts_of_train(), "1 connection, 1 channel, 1 remote command") << last_err_;
    // A number of connections asked for: the fixed rules, a stream for each of the two
    // changed files, side by side: the first through the control shell, the other on a
    // channel of its own. That channel logs in where a login is cheap, and goes to the
    // channel listener where it is not (a channel more: the one that checks that sshd
    // forwards to it): a login measured on a loaded machine may be either, so the profile
    // here makes it slow (ChannelsBesideTheControlShellGoToTheListener...).
    write_file(sshd().remote_home() + "/.bashrc", "sleep 0.2\n");
    write_model_settings("m",
                         "ssh:\n  train_cmd: \"sh {spec}\"\n  upload_files: [data.txt]\n"
                         "  transfer: {connections: 1}\n");
    write_shell_model("m", "echo log > \"$MLT_LOG_DIR/log.txt\"; echo trained; true\n");
    write_file(project() + "/data.txt", std::string(40u << 20, 'y'));
    EXPECT_EQ(counts_of_train(), "1 connection, 3 channels, 1 remote command") << last_err_;
}

TEST_F(SshCountsTest, ChannelsBesideTheControlShellGoToTheListenerWhereTheLoginIsSlow) {
    // A profile that costs 0.2 s a login, and 40 MiB that do not compress sent in ranges over
    // two channels (the fixed rules of a number of connections): the first through the
    // control shell, the other to the channel listener, which runs it without a login (and
    // a channel that checks that sshd forwards to the listener).
    write_file(sshd().remote_home() + "/.bashrc", "sleep 0.2\n");
    write_model_settings("m",
                         "ssh:\n  train_cmd: \"sh {spec}\"\n  upload_files: [data.txt]\n"
                         "  transfer: {connections: 1}\n");
    const std::string data = mlt::test::noise_bytes(40u << 20, 7);
    write_file(project() + "/data.txt", data);
    EXPECT_EQ(counts_of_train(), "1 connection, 3 channels, 1 remote command") << last_err_;
    EXPECT_TRUE(read_or_empty(remote() + "/data.txt") == data);
}

TEST_F(SshCountsTest, AStreamThatDoesNotFitACommandGoesThroughTheControlShell) {
    // 1 MiB that does not compress: more than the control shell's inline input, so before the
    // stream took a channel of its own (a login more); now it follows its frame in chunks.
    const std::string data = mlt::test::noise_bytes(1u << 20, 5);
    write_file(project() + "/data.txt", data);
    EXPECT_EQ(counts_of_train(), "1 connection, 1 channel, 1 remote command") << last_err_;
    EXPECT_TRUE(read_or_empty(remote() + "/data.txt") == data);
    // The shell goes on in step: the next run's commands are its frames, as always.
    write_file(project() + "/data.txt", data + "more");
    EXPECT_EQ(counts_of_train(), "1 connection, 1 channel, 1 remote command") << last_err_;
    EXPECT_TRUE(read_or_empty(remote() + "/data.txt") == data + "more");
}

TEST_F(SshCountsTest, AHostWhoseHeadReadsAheadGetsTheStreamOverAChannel) {
    // A `head -c` that reads past its count (this machine's BusyBox) would leave the chunks
    // out of step: the frame finds out before any data goes, and the stream takes a channel.
    const std::string bin = sshd().remote_home() + "/bin";
    make_dir(bin, 0755);
    ASSERT_EQ(::symlink("/bin/busybox", (bin + "/head").c_str()), 0);
    write_file(sshd().remote_home() + "/.bashrc", "PATH=\"$HOME/bin:$PATH\"\n");
    const std::string data = mlt::test::noise_bytes(1u << 20, 6);
    write_file(project() + "/data.txt", data);
    EXPECT_EQ(counts_of_train(), "1 connection, 2 channels, 2 remote commands") << last_err_;
    EXPECT_TRUE(read_or_empty(remote() + "/data.txt") == data);
}

TEST_F(SshCountsTest, AStreamWhoseCommandFailsNeverRunsItsDataAsCommands) {
    // The upload's unpacking fails at once (a directory where its file goes), and the chunks
    // still come: they are read and dropped, never read by the shell as commands (the file
    // is one), and the next command of the shell runs as it should.
    const std::string marker = sshd().dir() + "/ran-as-a-command";
    std::string lines;
    while (lines.size() < (2u << 20)) lines += "touch '" + marker + "'\n";
    write_file(project() + "/data.txt", lines + mlt::test::noise_bytes(1u << 20, 7));
    std::filesystem::create_directories(remote() + "/data.txt/inside");
    const ProcessResult r = mlt({"ssh", "train", "m", "-v"});
    EXPECT_EQ(r.exit_code, 1) << describe(r);
    EXPECT_TRUE(has_text(r.err, "data.txt")) << describe(r);
    EXPECT_FALSE(path_exists(marker));
    ASSERT_EQ(::rmdir((remote() + "/data.txt/inside").c_str()), 0);
    ASSERT_EQ(::rmdir((remote() + "/data.txt").c_str()), 0);
    EXPECT_EQ(counts_of_train(), "1 connection, 1 channel, 1 remote command") << last_err_;
    EXPECT_FALSE(path_exists(marker));
}

// The control shell is `exec sh`: a host whose sh is bash (it reads a byte at a time) or
// BusyBox's ash streams the same.
class SshCountsShellTest : public SshCountsTest,
                           public ::testing::WithParamInterface<const char*> {};

TEST_P(SshCountsShellTest, AStreamGoesThroughTheControlShellWhateverItsSh) {
    const std::string bin = sshd().remote_home() + "/bin";
    make_dir(bin, 0755);
    ASSERT_EQ(::symlink(GetParam(), (bin + "/sh").c_str()), 0);
    write_file(sshd().remote_home() + "/.bashrc", "PATH=\"$HOME/bin:$PATH\"\n");
    const std::string data = mlt::test::noise_bytes(1u << 20, 8);
    write_file(project() + "/data.txt", data);
    EXPECT_EQ(counts_of_train(), "1 connection, 1 channel, 1 remote command") << last_err_;
    EXPECT_TRUE(read_or_empty(remote() + "/data.txt") == data);
}

INSTANTIATE_TEST_SUITE_P(Shells, SshCountsShellTest,
                         ::testing::Values("/bin/bash", "/bin/busybox"));

TEST_F(SshCountsTest, AReaderThatDiesMidStreamKillsTheShellBeforeItReadsData) {
    // The stream's reader dies at its second chunk (a `head` that kills it: as a fork that
    // fails, or the OOM killer, would). The shell must not read on: the rest of the chunk
    // is lines of `touch MARKER` starting on a chunk boundary, uncompressed.
    const std::string marker = sshd().dir() + "/ran";
    const std::string bin = sshd().remote_home() + "/bin";
    make_dir(bin, 0755);
    write_file(
        bin + "/head",
        "#!/bin/sh\n"
        "if [ \"$1\" = -c ] && [ \"$2\" -ge 1048576 ] 2>/dev/null; then\n"
        "  echo x >> \"$HOME/chunks\"\n"
        "  if [ \"$(wc -l < \"$HOME/chunks\")\" -eq 2 ]; then kill -9 \"$PPID\"; exit 1; fi\n"
        "fi\n"
        "exec /usr/bin/head \"$@\"\n",
        0755);
    write_file(sshd().remote_home() + "/.bashrc", "PATH=\"$HOME/bin:$PATH\"\n");
    std::string line = "touch '" + marker + "'";
    line.resize(63, ' ');
    std::string lines;
    while (lines.size() < (3u << 20)) lines += line + "\n";
    write_file(project() + "/data.txt", lines);
    write_model_settings("m",
                         "ssh:\n  train_cmd: \"sh {spec}\"\n  upload_files: [data.txt]\n"
                         "  compression: none\n");
    const ProcessResult r = mlt({"ssh", "train", "m", "-v"});
    EXPECT_NE(r.exit_code, 0) << describe(r);
    EXPECT_FALSE(path_exists(marker)) << describe(r);
    // Without the broken head, the next run goes through the control shell again.
    ASSERT_EQ(::unlink((bin + "/head").c_str()), 0);
    EXPECT_EQ(counts_of_train(), "1 connection, 1 channel, 1 remote command") << last_err_;
    EXPECT_FALSE(path_exists(marker));
}

TEST_F(SshCountsTest, AProfileThatPrintsChangesNothing) {
    // A common trap: a ~/.bashrc that greets on stdout and warns on stderr, for every command.
    write_file(sshd().remote_home() + "/.bashrc",
               "echo 'Welcome to the box'\necho 'conda: no env' >&2\n");
    EXPECT_EQ(counts_of_train(), "1 connection, 1 channel, 1 remote command") << last_err_;
    EXPECT_TRUE(path_exists(local_logs("m") + "/log.txt"));
    EXPECT_EQ(read_or_empty(remote() + "/data.txt"), "small\n");
}

// What a new channel costs before its command runs is measured on the control shell's start
// and said with -v: a profile that sleeps 0.4 s costs at least that (no upper bound: a loaded
// machine may take longer).
TEST_F(SshCountsTest, TheLoginCostIsMeasuredOnTheFirstChannel) {
    write_file(sshd().remote_home() + "/.bashrc", "sleep 0.4\n");
    const ProcessResult r = mlt({"ssh", "train", "m", "-v"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    const std::string mark = "costs ";
    const size_t line = r.err.find("a new channel on ");
    ASSERT_NE(line, std::string::npos) << describe(r);
    const size_t at = r.err.find(mark, line);
    ASSERT_NE(at, std::string::npos) << describe(r);
    const double cost = std::stod(r.err.substr(at + mark.size()));
    EXPECT_GE(cost, 0.35) << r.err.substr(line, 200);
}

}  // namespace
}  // namespace mlt_test
