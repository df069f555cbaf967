// A hostile host sends more than mlt should keep (issue 37, "unbounded remote output"): a
// `tar` that floods stderr, a listing of hundreds of MB, a `date` whose output never seems
// to end, a `cat` that floods stderr while the archive comes. mlt's memory (its own peak RSS)
// and its debug logs stay bounded, and it ends, on its own or on a SIGTERM, within a bounded
// wait. A non-zero exit is fine.
#include <gtest/gtest.h>
#include <signal.h>

#include <string>

#include "harness/expect.h"
#include "harness/files.h"
#include "harness/hostile_fixture.h"

namespace mlt_test {
namespace {

// How much each flood sends: well over the memory bound (and over 10 times the debug logs'
// cap), small enough for a quick test.
const std::string kFloodBytes = "300000000";

// A sh command that writes kFloodBytes of text lines to stderr.
std::string stderr_flood(const std::string& word) {
    return "  yes '" + word + ": a line of the flood from the host' | head -c " + kFloodBytes +
           " >&2";
}

const char* const kLogTraining =
    "mkdir -p \"$MLT_LOG_DIR\" && echo 'a log line' > \"$MLT_LOG_DIR/train.txt\"\n"
    "echo trained\n";

using HostileOutputTest = HostileTrainTest;

// Medium-high: a `tar` writing 800 MB to stderr took mlt to 2.8 GB RSS and a 300 MB
// ~/.mltk/cli_logs/mlt.log. Here 300 MB, while the log dir is pulled.
TEST_F(HostileOutputTest, TarFloodingStderrDuringTheLogPullIsBounded) {
    host().wrap_tool("tar", in_dir(deep_log_dir("m")) + " && " + has_arg("-cf"),
                     stderr_flood("tar"));
    shell_model("m", kLogTraining, deep_log_setting());
    const LaptopSnapshot before = snapshot({"m"});
    ProcessResult r = mlt({"ssh", "train", "m"}, kHostileWait);
    EXPECT_TRUE(host().triggered("tar")) << host().describe();
    expect_contained(r, before);
}

// Medium-high: an 800 MB listing took mlt to 1.48 GB. Here 300 MB of one record that never
// ends, in the listing of the log dir that `download` pulls.
TEST_F(HostileOutputTest, AListingOfHundredsOfMegabytesIsBounded) {
    shell_model("m", kLogTraining, deep_log_setting());
    ASSERT_EQ(mlt({"ssh", "train", "m"}).exit_code, 0);
    host().find_adding_output(in_dir(deep_log_dir("m")),
                              "    yes 'r 1 1700000000.0 1700000000.0 1 ./flood' | tr '\\n' '/' | "
                              "head -c " +
                                  kFloodBytes);
    const LaptopSnapshot before = snapshot({"m"});
    ProcessResult r = mlt({"ssh", "download", "m"}, kHostileWait);
    EXPECT_TRUE(host().triggered("find")) << host().describe();
    expect_contained(r, before);
    EXPECT_NE(r.exit_code, 0) << brief(r);
}

// Medium-high: `status` against a `date` printing 300 MB: 1.48 GB. The remote shell keeps what
// `$(date +%s)` prints before it prints the status line, so "forever" is 200 MB here (dash
// takes about 10 s to take in 100 MB).
TEST_F(HostileOutputTest, StatusAgainstADateThatPrintsOnAndOnIsBounded) {
    make_finished_job("m", 0);
    write_user_settings();
    host().add_tool("date", "if " + has_arg("+%s") +
                                "; then\n"
                                "  hostile_mark date\n"
                                "  yes 1700000000 | head -c 200000000" +
                                "; exit 0\n"
                                "fi\n"
                                "exec " +
                                HostileHost::real("date") + " \"$@\"\n");
    const LaptopSnapshot before = snapshot({"m"});
    ProcessResult r = mlt({"ssh", "status"}, kHostileWait);
    EXPECT_TRUE(host().triggered("date")) << host().describe();
    expect_contained(r, before);
}

// Medium-high: SIGTERM did nothing for over 4 minutes while a `tar` flooded stderr. Here the
// tar floods 300 MB and then sends nothing; the SIGTERM goes as soon as it starts.
TEST_F(HostileOutputTest, SigtermDuringAStderrFloodEndsMlt) {
    host().add_tool("tar", "if " + in_dir(deep_log_dir("m")) + " && " + has_arg("-cf") +
                               "; then\n"
                               "  hostile_mark tar\n" +
                               stderr_flood("tar") + "\n  " + host().stall() +
                               "\n"
                               "fi\n"
                               "exec " +
                               HostileHost::real("tar") + " \"$@\"\n");
    shell_model("m", kLogTraining, deep_log_setting());
    const LaptopSnapshot before = snapshot({"m"});
    auto run = start_mlt({"ssh", "train", "m"});
    const bool flooding = wait_until([&] { return host().triggered("tar"); }, kTrainTimeout);
    run->signal(SIGTERM);
    ProcessResult r = run->wait(kSignalWait);
    ASSERT_TRUE(flooding) << host().describe() << brief(r);
    expect_contained(r, before);
    EXPECT_EQ(r.exit_code, 143) << brief(r);
}

// New: the same during a listing (a command of the control shell, not a stream): `find`
// adds half a million well-formed records (nothing the gate may refuse, so that mlt is still
// reading when the signal comes) and then nothing, never ending its reply.
TEST_F(HostileOutputTest, SigtermDuringAListingFloodEndsMlt) {
    shell_model("m", kLogTraining, deep_log_setting());
    ASSERT_EQ(mlt({"ssh", "train", "m"}).exit_code, 0);
    host().find_adding_output(in_dir(deep_log_dir("m")),
                              "    awk 'BEGIN { for (i = 0; i < 500000; i++) printf \"r 1 "
                              "1700000000.0 1700000000.0 %d ./flood%d\\n\", i, i }' | "
                              "tr '\\n' '\\000'\n    " +
                                  host().stall());
    const LaptopSnapshot before = snapshot({"m"});
    auto run = start_mlt({"ssh", "download", "m"});
    const bool flooding = wait_until([&] { return host().triggered("find"); }, kTrainTimeout);
    run->signal(SIGTERM);
    ProcessResult r = run->wait(kSignalWait);
    ASSERT_TRUE(flooding) << host().describe() << brief(r);
    expect_contained(r, before);
    EXPECT_EQ(r.exit_code, 143) << brief(r);
}

// New: the `cat` that sends the archive floods stderr (300 MB) and then sends the archive
// whole: the archive may come, the flood must not be kept.
// The archive comes through `head -c SIZE`: a `head` that floods stderr meanwhile.
TEST_F(HostileOutputTest, CatFloodingStderrWhileTheArchiveComesIsBounded) {
    host().wrap_tool("head", args_contain("m.mltk.zip"), stderr_flood("head"));
    shell_model("m", "printf 'the archive' > \"$MLT_ARCHIVE\"\necho trained\n", deep_log_setting());
    const LaptopSnapshot before = snapshot({"m"});
    ProcessResult r = mlt({"ssh", "train", "m"}, kHostileWait);
    EXPECT_TRUE(host().triggered("head")) << host().describe();
    expect_contained(r, before);
}

}  // namespace
}  // namespace mlt_test
