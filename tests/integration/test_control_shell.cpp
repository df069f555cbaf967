// The control shell (src/ssh/control_shell.cpp) against a real sshd: framing of output that
// holds any bytes, exit statuses, a shell that survives its commands' `exit`, syntax errors
// and chatty login shells, and the fallback to exec channels; and the exec channels' count of
// the input the server took.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <string>

#include "harness/expect.h"
#include "harness/files.h"
#include "harness/ssh_test.h"
#include "harness/train_fixture.h"
#include "mlt/ssh/remote.h"
#include "mlt/ssh/session.h"
#include "mlt/util/shell.h"

namespace mlt_test {
namespace {

constexpr std::chrono::seconds kWait{60};

class ControlShellTest : public SshTest {
  protected:
    mlt::Session open() { return mlt::Session::open(session_spec()); }

    // Replaces authorized_keys with the client key restricted to `forced` (an OpenSSH
    // `command=` option), which sees the requested command in $SSH_ORIGINAL_COMMAND.
    void force_command(const std::string& forced) {
        std::string pub = read_file(sshd().client_key_path() + ".pub");
        std::string option = "command=\"";
        for (char c : forced) {
            if (c == '"' || c == '\\') option += '\\';
            option += c;
        }
        write_file(sshd().authorized_keys_path(), option + "\" " + pub, 0600);
    }

    // Every byte value, repeated to `size` bytes.
    static std::string all_bytes(size_t size) {
        std::string s(size, '\0');
        for (size_t i = 0; i < size; ++i) s[i] = static_cast<char>((i * 7 + i / 256) & 0xff);
        return s;
    }
};

TEST_F(ControlShellTest, OutputOfAnyBytesAndSizesArrivesExactly) {
    mlt::Session session = open();
    mlt::SessionRemote remote(session);
    // Streamed output has no cap; run() keeps up to kMaxRunOutput (test_bounded_output.cpp).
    const std::string data = all_bytes(3 * 1024 * 1024 + 5);
    const std::string file = sshd().dir() + "/bytes.bin";
    write_file(file, data, 0644);
    for (int round = 0; round < 3; ++round) {
        std::string out, err;
        const int status = remote.stream(
            "cat " + mlt::shell_quote(file) + "; echo oops >&2", {},
            [&](std::string_view d) { out.append(d); }, [&](std::string_view d) { err.append(d); });
        ASSERT_EQ(status, 0);
        EXPECT_TRUE(out == data) << "round " << round << ": " << out.size() << " bytes";
        EXPECT_EQ(err, "oops\n");
    }
    const std::string small = data.substr(0, mlt::kMaxRunOutput);
    write_file(file, small, 0644);
    mlt::RemoteOutput r = remote.run("cat " + mlt::shell_quote(file) + "; echo oops >&2");
    ASSERT_EQ(r.exit_status, 0);
    EXPECT_TRUE(r.out == small) << r.out.size() << " bytes";
    EXPECT_EQ(r.err, "oops\n");
    // Output that ends without a newline, or in something like the start of a frame marker.
    EXPECT_EQ(remote.run("printf 'no newline'").out, "no newline");
    EXPECT_EQ(remote.run("printf '\\n\\nmlt-'").out, "\n\nmlt-");
    EXPECT_EQ(remote.run("true").out, "");
}

TEST_F(ControlShellTest, ExitStatusesAndTheShellOutlivesExitCdAndExec) {
    mlt::Session session = open();
    mlt::SessionRemote remote(session);
    EXPECT_EQ(remote.run("exit 3").exit_status, 3);
    EXPECT_EQ(remote.run("false").exit_status, 1);
    EXPECT_EQ(remote.run("cd / && exit 255").exit_status, 255);
    const std::string home = remote.run("pwd").out;
    EXPECT_NE(home, "/\n") << "a cd must not outlive its command";
    EXPECT_EQ(remote.run("exec sh -c 'echo from exec; exit 4'").out, "from exec\n");
    EXPECT_EQ(remote.run("sh -c 'kill -KILL $$'").exit_status, 128 + 9);
    EXPECT_EQ(remote.run("read x; echo \"[$x]\"").out, "[]\n") << "stdin must be /dev/null";
    EXPECT_EQ(remote.run("echo still here").out, "still here\n");
}

TEST_F(ControlShellTest, InputWithAnyBytesSmallOrLarge) {
    mlt::Session session = open();
    mlt::SessionRemote remote(session);
    const std::string small = all_bytes(70000);
    mlt::RemoteOutput r = remote.run("cat", small);
    EXPECT_TRUE(r.out == small) << r.out.size() << " bytes, err " << r.err;

    // Larger than the inline limit: stream() gives it an exec channel of its own.
    const std::string large = all_bytes(mlt::SessionRemote::kInlineInput * 3 + 11);
    std::string out;
    int status = remote.stream(
        "wc -c && echo done", mlt::input_from(large), [&](std::string_view d) { out.append(d); },
        nullptr);
    EXPECT_EQ(status, 0);
    EXPECT_EQ(out, std::to_string(large.size()) + "\ndone\n");
}

// A remote command that stops reading early (tar unable to run zstd) still reports its own
// status and stderr, not a failed write.
TEST_F(ControlShellTest, ACommandThatExitsBeforeReadingItsInputReportsItsOwnError) {
    mlt::Session session = open();
    mlt::SessionRemote remote(session);
    const std::string large = all_bytes(32 * 1024 * 1024);
    std::string err;
    int status = remote.stream("echo 'cannot unpack' >&2; exit 2", mlt::input_from(large), nullptr,
                               [&](std::string_view d) { err.append(d); });
    EXPECT_EQ(status, 2);
    EXPECT_EQ(err, "cannot unpack\n");
    EXPECT_EQ(remote.run("echo alive").out, "alive\n");
}

TEST_F(ControlShellTest, ASyntaxErrorFailsThatCommandOnly) {
    mlt::Session session = open();
    mlt::SessionRemote remote(session);
    mlt::RemoteOutput r = remote.run("if then fi (");
    EXPECT_NE(r.exit_status, 0);
    EXPECT_FALSE(r.err.empty());
    EXPECT_EQ(remote.run("echo next").out, "next\n");
}

TEST_F(ControlShellTest, StreamedOutputArrivesWhileTheCommandRuns) {
    mlt::Session session = open();
    mlt::SessionRemote remote(session);
    // The command waits (bounded) for a file that the test creates only once it has seen the
    // first line, newline included: output held back until the command ends (or until more
    // comes) would time out instead.
    const std::string flag = sshd().dir() + "/seen";
    const std::string cmd = "echo first; i=0; while [ ! -e " + mlt::shell_quote(flag) +
                            " ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; "
                            "[ -e " +
                            mlt::shell_quote(flag) + " ] && echo second || echo timeout";
    std::string out;
    int status = remote.stream(
        cmd, nullptr,
        [&](std::string_view d) {
            out.append(d);
            if (out.find("first\n") != std::string::npos) write_file(flag, "", 0644);
        },
        nullptr);
    EXPECT_EQ(status, 0);
    EXPECT_EQ(out, "first\nsecond\n");
}

// A command sent ahead goes out with the next one (here the shell's first) and runs once;
// its reply, 1 MiB of any bytes that follow the first reply at once, waits for the run() of
// the same command and input. Then the shell goes on as before.
TEST_F(ControlShellTest, ACommandSentAheadRunsOnceAndItsReplyWaitsForIt) {
    mlt::Session session = open();
    mlt::SessionRemote remote(session);
    const std::string data = all_bytes(mlt::kMaxRunOutput - 3);  // as much as run() keeps
    const std::string file = sshd().dir() + "/ahead.bin", runs = sshd().dir() + "/ahead.runs";
    write_file(file, data, 0644);
    const std::string copy = mlt::shell_quote(sshd().dir() + "/ahead.copy");
    const std::string ahead = "cp " + mlt::shell_quote(file) + " " + copy + " && echo x >> " +
                              mlt::shell_quote(runs) + "; cat " + copy + "; cat >&2; exit 3";
    remote.run_ahead(ahead, "the input");
    EXPECT_EQ(remote.run("echo first").out, "first\n");
    // It ran before it was asked for: what it read then is what comes back, not the file now.
    ASSERT_TRUE(wait_until([&] { return std::filesystem::exists(runs); }, kWait))
        << "the command sent ahead did not run";
    write_file(file, "changed since", 0644);
    const mlt::RemoteOutput r = remote.run(ahead, "the input");
    EXPECT_EQ(r.exit_status, 3);
    EXPECT_TRUE(r.out == data) << r.out.size() << " bytes";
    EXPECT_EQ(r.err, "the input");
    EXPECT_EQ(read_file(runs), "x\n") << "it ran again: the reply sent ahead was not taken";
    EXPECT_EQ(remote.run("echo after").out, "after\n");
}

// A command sent ahead that nobody asks for (another command comes first, or the same one
// with other input) is never waited for, and its output is never taken for another
// command's: here it runs until the test ends, and the commands after it answer meanwhile.
TEST_F(ControlShellTest, ACommandSentAheadThatNobodyAsksForIsNotWaitedFor) {
    mlt::Session session = open();
    mlt::SessionRemote remote(session);
    EXPECT_EQ(remote.run("true").exit_status, 0);  // the shell runs already
    const std::string done = sshd().dir() + "/test.done";
    const std::string waits = "i=0; while [ ! -e " + mlt::shell_quote(done) +
                              " ] && [ $i -lt 600 ]; do i=$((i+1)); sleep 0.1; done; echo late";
    remote.run_ahead(waits, "");
    EXPECT_EQ(remote.run("echo first").out, "first\n");
    EXPECT_EQ(remote.run("echo now").out, "now\n");
    remote.run_ahead("echo ahead; cat", "one");
    EXPECT_EQ(remote.run("echo before").out, "before\n");
    EXPECT_EQ(remote.run("echo ahead; cat", "two").out, "ahead\ntwo");
    EXPECT_EQ(remote.run("echo second").out, "second\n");
    write_file(done, "", 0644);
}

// A command sent ahead whose carrier went over an exec channel (input too big for the
// shell) was never sent: asked for next, it runs once, and the shell goes on.
TEST_F(ControlShellTest, ACommandSentAheadThatFoundNoCarrierRunsOnceWhenAskedFor) {
    mlt::Session session = open();
    mlt::SessionRemote remote(session);
    EXPECT_EQ(remote.run("true").exit_status, 0);  // the shell runs already
    const std::string runs = sshd().dir() + "/ahead.runs";
    const std::string ahead = "echo x >> " + mlt::shell_quote(runs) + "; echo ran";
    remote.run_ahead(ahead, "");
    const std::string big(mlt::SessionRemote::kInlineInput + 1, 'b');
    std::string counted;
    size_t at = 0;
    const int status = remote.stream(
        "wc -c",
        [&](char* buffer, size_t capacity) {
            const size_t n = std::min(capacity, big.size() - at);
            std::memcpy(buffer, big.data() + at, n);
            at += n;
            return n;
        },
        [&](std::string_view d) { counted.append(d); }, nullptr);
    EXPECT_EQ(status, 0);
    EXPECT_EQ(std::stoul(counted), big.size());
    EXPECT_FALSE(std::filesystem::exists(runs)) << "it went with the exec channel's command";
    EXPECT_EQ(remote.run(ahead).out, "ran\n");
    EXPECT_EQ(remote.run("echo after").out, "after\n");
    EXPECT_EQ(read_file(runs), "x\n") << "it ran more than once";
}

// Commands sent ahead on a guess: one that is not asked for has its reply read and dropped,
// never taken for another command's; the next one asked for gives its reply (it ran once,
// before it was asked for); and the same shell goes on. The last two are dropped after the
// next command went out (its reader reads theirs first).
TEST_F(ControlShellTest, AGuessSentAheadThatIsNotAskedForIsSkippedAndTheShellGoesOn) {
    mlt::Session session = open();
    mlt::SessionRemote remote(session);
    const std::string shell_pid = remote.run("echo $$").out;
    const std::string runs = mlt::shell_quote(sshd().dir() + "/guess.runs");
    const std::string hit = "echo x >> " + runs + "; echo hit; cat";
    remote.run_ahead_on_guess("echo missed; echo missed >&2", "");
    remote.run_ahead_on_guess(hit, "in");
    remote.run_ahead_on_guess("echo missed too", "");
    remote.run_ahead_on_guess("echo missed again >&2; exit 4", "");
    EXPECT_EQ(remote.run("echo first").out, "first\n");
    const mlt::RemoteOutput r = remote.run(hit, "in");
    EXPECT_EQ(r.out, "hit\nin");
    EXPECT_EQ(r.err, "");
    const mlt::RemoteOutput other = remote.run("echo other");
    EXPECT_EQ(other.out, "other\n");
    EXPECT_EQ(remote.run("cat " + runs).out, "x\n") << "the guess that came true ran again";
    EXPECT_EQ(remote.run("echo $$").out, shell_pid) << "the shell was dropped";
}

TEST_F(ControlShellTest, WhatALoginShellPrintsFirstIsNotOutput) {
    force_command("echo banner; echo banner >&2; eval \"$SSH_ORIGINAL_COMMAND\"");
    mlt::Session session = open();
    mlt::SessionRemote remote(session);
    mlt::RemoteOutput r = remote.run("echo one; echo two >&2");
    EXPECT_EQ(r.out, "one\n");
    EXPECT_EQ(r.err, "two\n");
    EXPECT_EQ(remote.run("echo three").out, "three\n");
}

TEST_F(ControlShellTest, AServerThatRefusesTheShellGetsExecChannels) {
    // Runs anything but `exec sh`, as a restricted account might.
    force_command(
        "case \"$SSH_ORIGINAL_COMMAND\" in 'exec sh') exit 1;; esac; "
        "eval \"$SSH_ORIGINAL_COMMAND\"");
    mlt::Session session = open();
    mlt::SessionRemote remote(session);
    const std::string runs = sshd().dir() + "/ahead.runs";
    remote.run_ahead("echo x >> " + mlt::shell_quote(runs), "");  // goes nowhere: no shell
    mlt::RemoteOutput r = remote.run("echo via exec; exit 5");
    EXPECT_EQ(r.exit_status, 5);
    EXPECT_FALSE(std::filesystem::exists(runs));
    EXPECT_EQ(r.out, "via exec\n");
    EXPECT_EQ(remote.run("cat", std::string("a\0b", 3)).out, std::string("a\0b", 3));
}

// Without a control shell the cap on run()'s output holds as well: the exec channel of the
// command that sent too much is dropped, and the next command gets one of its own.
TEST_F(ControlShellTest, WithoutAShellOutputOverTheCapEndsThatCommandOnly) {
    force_command(
        "case \"$SSH_ORIGINAL_COMMAND\" in 'exec sh') exit 1;; esac; "
        "eval \"$SSH_ORIGINAL_COMMAND\"");
    mlt::Session session = open();
    mlt::SessionRemote remote(session);
    EXPECT_EQ(remote.run("echo via exec").out, "via exec\n");
    try {
        remote.run("head -c 5242880 /dev/zero");
        FAIL() << "5 MiB of output were taken";
    } catch (const mlt::Error& e) {
        EXPECT_NE(std::string(e.what()).find("the remote sent more than 1.0 MiB"),
                  std::string::npos)
            << e.what();
    }
    EXPECT_EQ(remote.run("echo alive").out, "alive\n");
}

// The shell's channel opened ahead (Remote::prepare, while mlt plans its first command) is the
// shell's: the first command starts it there, once, and a server that refuses the shell or
// runs no commands at all is told apart as without it.
TEST_F(ControlShellTest, AChannelOpenedAheadStartsTheShellAsAnyOther) {
    {
        mlt::Session session = open();
        mlt::SessionRemote remote(session);
        remote.prepare();
        remote.prepare();  // one open ahead, not two (ControlShellOneSessionTest)
        const std::string pid = remote.run("echo $PPID").out;
        EXPECT_EQ(remote.run("echo one; echo two >&2; exit 3").exit_status, 3);
        EXPECT_EQ(remote.run("echo $PPID").out, pid) << "not the same shell";
        remote.prepare();  // a shell runs: nothing to open
        EXPECT_EQ(remote.run("echo $PPID").out, pid);
    }
    force_command(
        "case \"$SSH_ORIGINAL_COMMAND\" in 'exec sh') exit 1;; esac; "
        "eval \"$SSH_ORIGINAL_COMMAND\"");
    {
        mlt::Session session = open();
        mlt::SessionRemote remote(session);
        remote.prepare();
        mlt::RemoteOutput r = remote.run("echo via exec; exit 5");
        EXPECT_EQ(r.exit_status, 5);
        EXPECT_EQ(r.out, "via exec\n");
    }
    force_command("echo 'This account is closed.'; exit 1");
    mlt::Session session = open();
    mlt::SessionRemote remote(session);
    remote.prepare();
    try {
        remote.run("echo never");
        ADD_FAILURE() << "a command ran";
    } catch (const mlt::Error& e) {
        EXPECT_TRUE(has_text(e.what(), "runs no commands (exit 1)")) << e.what();
        EXPECT_TRUE(has_text(e.what(), "This account is closed.")) << e.what();
    }
}

// With one session allowed per connection, the shell can only be the channel opened ahead.
class ControlShellOneSessionTest : public ControlShellTest {
  protected:
    std::string sshd_extra_config() const override { return "MaxSessions 1\n"; }
};

TEST_F(ControlShellOneSessionTest, TheShellIsTheChannelOpenedAhead) {
    mlt::Session session = open();
    mlt::SessionRemote remote(session);
    remote.prepare();
    remote.prepare();
    EXPECT_EQ(remote.run("echo one").out, "one\n");
    EXPECT_EQ(remote.run("echo two").out, "two\n");
}

TEST_F(ControlShellTest, AnAccountThatRunsNoCommandsIsRefusedWithTheServersWords) {
    // Like nologin, which says so and exits 1 whatever it is asked to run: its words are
    // neither a command's output nor lost, but the error, on this and every later command.
    force_command("echo 'This account is closed.'; echo 'Ask the admin.' >&2; exit 1");
    mlt::Session session = open();
    mlt::SessionRemote remote(session);
    for (int i = 0; i < 2; ++i) {
        SCOPED_TRACE(i);
        try {
            remote.run("echo never");
            ADD_FAILURE() << "a command ran";
        } catch (const mlt::Error& e) {
            EXPECT_EQ(e.code(), mlt::exit_code::kRemote);
            EXPECT_TRUE(has_text(e.what(), "runs no commands (exit 1)"));
            EXPECT_TRUE(has_text(e.what(), "This account is closed. | Ask the admin."));
        }
    }
}

// An upload's rate is what the server took, not what went into the channel: while the remote
// command reads nothing, the input sent (sshd's 2 MiB window of it) is not counted as taken;
// once the command has read it all, every byte is.
TEST_F(ControlShellTest, InputCountsAsTakenOnlyOnceTheServerTookIt) {
    mlt::Session session = open();
    mlt::SessionRemote remote(session);
    constexpr uint64_t kMiB = 1024 * 1024, kTotal = 8 * kMiB;
    const std::string gate = sshd().dir() + "/gate";
    uint64_t fed = 0, taken = 0, taken_at_window = kTotal;
    mlt::StreamJob job;
    // Reads one byte, then nothing until the gate opens: sshd passes on no more than a pipe
    // holds, and grants no window back meanwhile.
    job.command = "head -c 1 >/dev/null; while [ ! -e " + mlt::shell_quote(gate) +
                  " ]; do sleep 0.05; done; cat >/dev/null";
    job.input = [&](char* buffer, size_t capacity) -> size_t {
        if (fed >= 2 * kMiB && taken_at_window == kTotal) {
            taken_at_window = taken;  // a window's worth has gone into the channel
            write_file(gate, "");
        }
        const size_t n = static_cast<size_t>(std::min<uint64_t>(capacity, kTotal - fed));
        std::fill(buffer, buffer + n, 'x');
        fed += n;
        return n;
    };
    job.on_taken = [&](uint64_t n) { taken += n; };
    ASSERT_EQ(remote.stream_parallel({job}), std::vector<int>{0});
    EXPECT_LT(taken_at_window, kMiB) << "bytes still in the window were counted as taken";
    EXPECT_EQ(fed, kTotal);
    EXPECT_EQ(taken, kTotal);
}

}  // namespace
}  // namespace mlt_test
