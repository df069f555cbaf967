// The hostile-host harness itself (issue 37): every command of a plain run goes through the
// ForceCommand wrapper and its tools, the snapshot names what changed, and the peak RSS of a
// plain run is what the memory bound of the attack tests is measured against.
#include <gtest/gtest.h>
#include <unistd.h>

#include <iostream>
#include <string>
#include <vector>

#include "harness/expect.h"
#include "harness/files.h"
#include "harness/hostile_fixture.h"
#include "harness/openssh.h"

namespace mlt_test {
namespace {

using HostileHarnessTest = HostileTrainTest;

// The tools mlt's commands use on a plain run, each wrapped so that it only records that it
// ran: a run through them must behave as without them.
void wrap_passively(const HostileHost& host) {
    for (const char* tool : {"find", "tar", "sha256sum", "date", "cat"})
        host.wrap_tool(tool, "true", "");
}

TEST_F(HostileHarnessTest, EveryCommandOfAPlainRunGoesThroughTheWrapperAndItsTools) {
    wrap_passively(host());
    shell_model("plain",
                "mkdir -p \"$MLT_LOG_DIR\" && echo 'a log line' > \"$MLT_LOG_DIR/train.txt\"\n"
                "printf 'archive bytes' > \"$MLT_ARCHIVE\"\n"
                "echo trained\n",
                deep_log_setting());
    plant_bashrc();
    const LaptopSnapshot before = snapshot({"plain"});
    ProcessResult r = mlt({"ssh", "train", "plain"});
    ASSERT_EQ(r.exit_code, 0) << describe(r) << host().describe();
    EXPECT_EQ(read_or_empty(local_logs("plain") + "/train.txt"), "a log line\n");
    EXPECT_EQ(read_or_empty(local_archive("plain")), "archive bytes");
    // The control shell, the listing, the log pull's tar, the archive's cat and the job's
    // sha256sum all ran on the host's PATH.
    bool control_shell = false;
    for (const auto& c : host().commands()) control_shell = control_shell || c == "exec sh";
    EXPECT_TRUE(control_shell) << host().describe();
    for (const char* tool : {"find", "tar", "sha256sum", "date", "cat"})
        EXPECT_TRUE(host().triggered(tool)) << tool << "\n" << host().describe();
    expect_contained(r, before);
    std::cout << "[ baseline ] peak RSS of a plain train: " << r.peak_rss_kib << " KiB\n";
    RecordProperty("plain_train_peak_rss_kib", std::to_string(r.peak_rss_kib));
}

// A plain `download` of a 40 MiB log file (the ranged path) and 2,000 small ones (a tar
// stream): the peak RSS of a normal pull, next to the bound.
TEST_F(HostileHarnessTest, APlainDownloadOfABigAndManySmallFilesStaysWellWithinTheBound) {
    wrap_passively(host());
    shell_model("pull", "echo trained\n", deep_log_setting());
    ASSERT_EQ(mlt({"ssh", "train", "pull"}).exit_code, 0);
    const std::string logs = deep_log_dir("pull");
    make_dir(logs, 0755);
    make_dir(logs + "/small", 0755);
    write_file(logs + "/big.bin", std::string(40 * 1024 * 1024, 'b'));
    for (int i = 0; i < 2000; ++i)
        write_file(logs + "/small/f" + std::to_string(i) + ".txt", "small " + std::to_string(i));
    const LaptopSnapshot before = snapshot({"pull"});
    ProcessResult r = mlt({"ssh", "download", "pull"});
    ASSERT_EQ(r.exit_code, 0) << describe(r) << host().describe();
    EXPECT_EQ(sha256_of(local_logs("pull") + "/big.bin"), sha256_of(logs + "/big.bin"));
    EXPECT_EQ(read_or_empty(local_logs("pull") + "/small/f1999.txt"), "small 1999");
    expect_contained(r, before);
    std::cout << "[ baseline ] peak RSS of a plain download: " << r.peak_rss_kib << " KiB\n";
    RecordProperty("plain_download_peak_rss_kib", std::to_string(r.peak_rss_kib));
}

// The snapshot's diff is what the attack tests rely on: it names a file that appeared, one
// that vanished, one whose bytes changed, one whose mode changed and a file that became a
// symlink, and it leaves out what is allowed.
TEST_F(HostileHarnessTest, TheSnapshotNamesEveryPathThatAppearedVanishedOrChanged) {
    const std::string home = env().home();
    write_file(home + "/stays.txt", "same");
    write_file(home + "/goes.txt", "bye");
    write_file(home + "/edited.txt", "before");
    write_file(home + "/mode.txt", "m", 0644);
    write_file(home + "/linked.txt", "l");
    write_user_settings();  // ~/.mltk
    const LaptopSnapshot before = snapshot({"m"});
    ASSERT_TRUE(nothing_changed(before, before.again()));
    write_file(home + "/new.txt", "hi");
    ::unlink((home + "/goes.txt").c_str());
    write_file(home + "/edited.txt", "after!");
    write_file(home + "/mode.txt", "m", 04755);
    ::unlink((home + "/linked.txt").c_str());
    ASSERT_EQ(::symlink("/etc/passwd", (home + "/linked.txt").c_str()), 0);
    make_dir(home + "/.mltk/models", 0755);  // on the way to the model's own dir
    make_dir(local_logs("m"), 0755);         // the model's own dir: allowed
    write_file(local_logs("m") + "/log.txt", "allowed");
    write_file(local_archive("m"), "allowed");
    const auto diff = nothing_changed(before, before.again());
    ASSERT_FALSE(diff);
    const std::string text = diff.message();
    EXPECT_TRUE(has_text(text, "appeared: " + home + "/new.txt"));
    EXPECT_TRUE(has_text(text, "vanished: " + home + "/goes.txt"));
    EXPECT_TRUE(has_text(text, "changed:  " + home + "/edited.txt"));
    EXPECT_TRUE(has_text(text, "changed:  " + home + "/mode.txt (file 1 bytes 0644"));
    EXPECT_TRUE(has_text(text, "-> symlink -> /etc/passwd"));
    EXPECT_TRUE(lacks_text(text, "stays.txt"));
    EXPECT_TRUE(lacks_text(text, "log.txt"));
    EXPECT_TRUE(lacks_text(text, "appeared: " + local_archive("m")));
}

// The peak RSS a run reports is the program's own: not the test binary's memory at the time
// it was started (a forked child's first peak is its parent's RSS), and not lower than what
// the program itself held.
TEST(HostileHarnessMemory, ThePeakRssOfARunIsTheProgramsOwn) {
    std::vector<char> ballast(300u * 1024 * 1024, 'x');  // the test binary: 300 MiB resident
    const ProcessResult small = run_process({"true"}, current_environment(), kToolTimeout);
    ASSERT_EQ(small.exit_code, 0) << describe(small);
    EXPECT_GE(small.peak_rss_kib, 0);
    EXPECT_LT(small.peak_rss_kib, 64 * 1024) << "the test binary's 300 MiB counted";
    EXPECT_EQ(ballast[12345], 'x');
    const ProcessResult big =
        run_process({"python3", "-c", "b = b'y' * (200 * 1024 * 1024); print(len(b))"},
                    current_environment(), kToolTimeout);
    ASSERT_EQ(big.exit_code, 0) << describe(big);
    EXPECT_GE(big.peak_rss_kib, 200 * 1024) << "a program's own 200 MiB not counted";
}

}  // namespace
}  // namespace mlt_test
