// A clean terminal: what a training writes to its console reaches mlt's stdout without the
// sequences that act on the terminal (clipboard, title, clear screen, alt screen), with its
// text, colours and progress bars; the local console copy keeps every byte, and
// --raw-console passes everything. `status` shows the remote's names and run ids escaped.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness/expect.h"
#include "harness/files.h"
#include "harness/train_fixture.h"

namespace mlt_test {
namespace {

// The training's console: coloured text and a progress bar around an OSC 52 clipboard
// write, a window title, a clear screen, the alt screen, a DCS and a C1 CSI (as UTF-8).
const char* const kHostileModel =
    "printf 'epoch 1/1 \\033[1;32mok\\033[0m\\n'\n"
    "printf '\\033]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaAo=\\007'\n"
    "printf '\\033]0;pwned title\\007'\n"
    "printf '\\033[2J\\033[H\\033[?1049h'\n"
    "printf '\\033Pq#0;2;0;0;0\\033\\\\'\n"
    "printf '\\302\\2332J'\n"
    "printf ' 10%%\\r 50%%\\r100%%\\033[K\\n'\n"
    "printf 'training done\\n'\n";

// What of it shows: text, SGR, \r and erase in line.
const std::vector<std::string> kShown = {"epoch 1/1 \x1b[1;32mok\x1b[0m\n",
                                         " 10%\r 50%\r100%\x1b[K\n", "training done\n"};
// What never shows without --raw-console.
const std::vector<std::string> kDropped = {"\x1b]",    "Y3VybCBldmls", "pwned title", "\x1b[2J",
                                           "\x1b[H",   "\x1b[?1049h",  "\x1bP",       "\x07",
                                           "\xc2\x9b", "2J",           "shut-title"};
// The same sequences as the training wrote them.
const std::vector<std::string> kRaw = {"\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaAo=\x07",
                                       "\x1b]0;pwned title\x07", "\x1b[2J\x1b[H\x1b[?1049h",
                                       "\x1bPq#0;2;0;0;0\x1b\\",
                                       "\xc2\x9b"
                                       "2J"};

::testing::AssertionResult shows_clean(const ProcessResult& r) {
    for (const auto& text : kShown)
        if (r.out.find(text) == std::string::npos)
            return ::testing::AssertionFailure()
                   << "stdout lacks " << ::testing::PrintToString(text) << "\n"
                   << describe(r);
    for (const auto& text : kDropped)
        if ((r.out + r.err).find(text) != std::string::npos)
            return ::testing::AssertionFailure()
                   << "output has " << ::testing::PrintToString(text) << "\n"
                   << describe(r);
    return ::testing::AssertionSuccess();
}

::testing::AssertionResult shows_raw(const ProcessResult& r) {
    for (const auto& text : kRaw)
        if (r.out.find(text) == std::string::npos)
            return ::testing::AssertionFailure()
                   << "stdout lacks " << ::testing::PrintToString(text) << "\n"
                   << describe(r);
    return ::testing::AssertionSuccess();
}

class ConsoleTerminalTest : public TrainTest {
  protected:
    void SetUp() override {
        TrainTest::SetUp();
        write_user_settings();
        write_shell_model("hostile", kHostileModel);
        // shutdown_cmds' output reaches the terminal the same way.
        write_model_settings("hostile",
                             "ssh:\n  train_cmd: \"sh {spec}\"\n"
                             "  shutdown_cmds: [\"printf '\\\\033]0;%s-%s\\\\007"
                             "shutdown said hi\\\\n' shut title\"]\n");
    }
    // The remote console log of the last run, as the job wrote it.
    std::string remote_console() const { return read_or_empty(job_file("hostile", "console.log")); }
};

TEST_F(ConsoleTerminalTest, TrainShowsTextAndColoursButNoTerminalSequences) {
    ProcessResult r = mlt({"ssh", "train", "hostile"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(shows_clean(r));
    EXPECT_TRUE(has_text(r.out, "\nshutdown said hi\n"));  // its title dropped (shows_clean)
    // The local copy is the remote's log, byte for byte.
    const std::string copy = read_or_empty(local_console("hostile"));
    EXPECT_EQ(copy, remote_console());
    for (const auto& text : kRaw) EXPECT_TRUE(has_text(copy, text));
}

TEST_F(ConsoleTerminalTest, TrainWithRawConsolePassesEverything) {
    // Before MODEL, and after it among the training's words: both are mlt's.
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"ssh", "train", "--raw-console", "hostile"},
          std::vector<std::string>{"ssh", "train", "hostile", "--raw-console"}}) {
        ProcessResult r = mlt(args);
        ASSERT_EQ(r.exit_code, 0) << describe(r);
        EXPECT_TRUE(shows_raw(r));
        EXPECT_TRUE(has_text(r.out, "\x1b]0;shut-title\x07shutdown said hi\n"));
        EXPECT_TRUE(lacks_text(remote_console(), "--raw-console")) << "passed to the training";
        EXPECT_EQ(read_or_empty(local_console("hostile")), remote_console());
    }
}

TEST_F(ConsoleTerminalTest, LogsAndLogsFollowAreFilteredLikeTrain) {
    ProcessResult trained = mlt({"ssh", "train", "hostile"});
    ASSERT_EQ(trained.exit_code, 0) << describe(trained);
    ProcessResult r = mlt({"ssh", "logs", "hostile"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(shows_clean(r));
    r = mlt({"ssh", "logs", "hostile", "-f"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(shows_clean(r));
    r = mlt({"ssh", "logs", "hostile", "--raw-console"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_EQ(r.out, remote_console());
    r = mlt({"ssh", "logs", "-f", "--raw-console", "hostile"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_EQ(r.out, remote_console());
}

// The job's lines come while mlt follows: a sequence cut between two reads is still whole
// to the filter.
TEST_F(ConsoleTerminalTest, LogsFollowFiltersAJobStillWriting) {
    write_shell_model("hostile",
                      "printf 'first line\\n\\033]0;'\n"
                      "while [ ! -e gate ]; do sleep 0.05; done\n"
                      "printf 'cut title\\007after the gate \\033[31mred\\033[0m\\n'\n");
    ProcessResult started = mlt({"ssh", "train", "hostile", "--no-wait"});
    ASSERT_EQ(started.exit_code, 0) << describe(started);
    ASSERT_TRUE(wait_console("hostile", "first line"));
    auto follow = start_mlt({"ssh", "logs", "hostile", "-f"});
    ASSERT_TRUE(follow->wait_for_output("first line", kEffectTimeout)) << follow->out();
    write_file(remote() + "/gate", "");
    ProcessResult r = follow->wait(kTrainTimeout);
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(has_text(r.out, "first line\nafter the gate \x1b[31mred\x1b[0m\n"));
    EXPECT_TRUE(lacks_text(r.out + r.err, "cut title"));
    EXPECT_TRUE(lacks_text(r.out + r.err, "\x1b]"));
}

// A remote whose job dir name, lock and run_id file hold escape sequences (its root wrote
// them): status prints them escaped.
TEST_F(ConsoleTerminalTest, StatusPrintsRemoteNamesAndRunIdsEscaped) {
    const std::string jobs = remote() + "/.mlt";
    make_dir(jobs, 0755);
    make_dir(jobs + "/locked", 0755);
    write_file(jobs + "/locked/lock",
               "run=r1\x1b]52;c;aGk=\x07\x1b[2J\nphase=running\nstarted=1700000000\n");
    const std::string odd = jobs +
                            "/title\x1b]0;pwned\x07"
                            "dir";
    make_dir(odd, 0755);
    write_file(odd + "/run_id",
               "r2\x1b[?1049h\xc2\x9b"
               "2J\n");
    ProcessResult r = mlt({"ssh", "status"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(lacks_text(r.out + r.err, "\x1b"));
    EXPECT_TRUE(lacks_text(r.out + r.err, "\x07"));
    EXPECT_TRUE(lacks_text(r.out + r.err, "\xc2\x9b"));
    EXPECT_TRUE(has_text(r.out, "r1\\x1b]52;c;aGk=\\x07\\x1b[2J"));
    EXPECT_TRUE(has_text(r.out, "title\\x1b]0;pwned\\x07dir"));
    EXPECT_TRUE(has_text(r.out, "r2\\x1b[?1049h\\xc2\\x9b2J"));
}

}  // namespace
}  // namespace mlt_test
