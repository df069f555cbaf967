// The low findings of issue 37: a download_files pair that brings more bytes than the remote
// announced, tar entries with setuid/setgid and world-writable modes, range bytes that never
// match their hash (tampering, not "kept changing"), and training exit statuses that collide
// with mlt's own codes (255 for a lost connection, 2-6 for mlt's errors).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>

#include "harness/expect.h"
#include "harness/files.h"
#include "harness/hostile_fixture.h"

namespace mlt_test {
namespace {

using HostileLowTest = HostileTrainTest;

// Low: a `from|to` pair accepted 1 MB more than the size the remote announced. Here the
// `head` that sends it (mlt reads it with `head -c SIZE`) adds 1 MiB of zeros after the
// file's 1000 bytes.
TEST_F(HostileLowTest, APairSendingMoreBytesThanAnnouncedIsRefused) {
    host().wrap_tool("head", args_contain("out.bin"), "",
                     "  " + HostileHost::real("head") + " -c 1048576 /dev/zero");
    shell_model("m", "mkdir -p results && head -c 1000 /dev/urandom > results/out.bin\n",
                deep_log_setting(), "  download_files: [\"results/out.bin|got.bin\"]\n");
    const LaptopSnapshot before = snapshot({"m"}, {"got.bin"});
    ProcessResult r = mlt({"ssh", "train", "m"}, kHostileWait);
    EXPECT_TRUE(host().triggered("head")) << host().describe();
    expect_contained(r, before);
    struct stat st;
    const bool landed = ::lstat((project() + "/got.bin").c_str(), &st) == 0;
    EXPECT_FALSE(landed && st.st_size > 1000) << st.st_size << " bytes landed\n" << brief(r);
    EXPECT_NE(r.exit_code, 0) << brief(r);
    EXPECT_TRUE(contains_icase(r.err, "tamper"));
}

// Low: a tar entry's mode 06777 landed as 0777 in the spec dir. Here the host's `tar` packs
// the download_files glob's matches with --mode=6777.
TEST_F(HostileLowTest, ATarEntryWithMode6777LandsWithoutSetuidSetgidOrWorldWrite) {
    host().add_tool("tar", "if " + in_dir(remote()) + " && " + has_arg("-cf") +
                               "; then hostile_mark tar; exec " + HostileHost::real("tar") +
                               " --mode=6777 \"$@\"; fi\n"
                               "exec " +
                               HostileHost::real("tar") + " \"$@\"\n");
    shell_model("m", "mkdir -p results && echo result > results/out.txt\n", deep_log_setting(),
                "  download_files: [\"results/*.txt\"]\n");
    const LaptopSnapshot before = snapshot({"m"}, {"results"});
    ProcessResult r = mlt({"ssh", "train", "m"}, kHostileWait);
    EXPECT_TRUE(host().triggered("tar")) << host().describe();
    expect_contained(r, before);
    const int mode = file_mode(project() + "/results/out.txt");
    ASSERT_GE(mode, 0) << "not collected\n" << brief(r);
    EXPECT_EQ(mode & (S_ISUID | S_ISGID | S_IWOTH), 0)
        << "landed with mode 0" << std::oct << mode << "\n"
        << brief(r);
}

// Low: tampering was worded "kept changing". Here the host's `dd` sends other bytes than it
// hashes: every other call for a range (the range's bytes; then its hash reads the file
// honestly) turns the file's zeros into ones, on every try. The calls are counted per range
// (by dd's arguments): ranges go at once on several links, and one count for all of them
// raced.
TEST_F(HostileLowTest, RangeBytesThatNeverMatchTheirHashAreNamedTampering) {
    shell_model("m",
                "mkdir -p \"$MLT_LOG_DIR\" && head -c 34000000 /dev/zero > "
                "\"$MLT_LOG_DIR/big.bin\"\n",
                deep_log_setting());
    const std::string counter = host().state_file("dd-calls");
    host().add_tool("dd", "if " + args_contain("big.bin") + "; then\n  c='" + counter +
                              ".'$(printf '%s' \"$*\" | cksum | cut -d' ' -f1)\n"
                              "  n=$(cat \"$c\" 2>/dev/null || echo 0); echo $((n + 1)) > \"$c\"\n"
                              "  if [ $((n % 2)) = 0 ]; then\n"
                              "    hostile_mark dd\n    " +
                              HostileHost::real("dd") +
                              " \"$@\" | tr '\\0' '\\1'; exit 0\n"
                              "  fi\n"
                              "fi\n"
                              "exec " +
                              HostileHost::real("dd") + " \"$@\"\n");
    const LaptopSnapshot before = snapshot({"m"});
    ProcessResult r = mlt({"ssh", "train", "m"}, kHostileWait);
    EXPECT_TRUE(host().triggered("dd")) << host().describe();
    expect_contained(r, before);
    EXPECT_NE(r.exit_code, 0) << brief(r);
    EXPECT_TRUE(contains_icase(r.err, "tamper"));
    EXPECT_TRUE(lacks_text(r.err, "kept changing"));
}

// Low: a training that exits 255 made mlt exit 255, which the docs reserve for a lost
// connection: mlt exits 1 and says the training's own status.
TEST_F(HostileLowTest, ATrainingThatExits255MakesMltExit1AndSaySo) {
    shell_model("m", "echo trained\nexit 255\n", deep_log_setting());
    const LaptopSnapshot before = snapshot({"m"});
    ProcessResult r = mlt({"ssh", "train", "m"}, kHostileWait);
    expect_contained(r, before);
    EXPECT_EQ(r.exit_code, 1) << brief(r);
    EXPECT_TRUE(has_text(r.out + r.err, "the training exited 255")) << brief(r);
}

// New: 3 is mlt's "job conflict"; a training that exits 3 must not pass for one.
TEST_F(HostileLowTest, ATrainingThatExits3MakesMltExit1AndSaySo) {
    shell_model("m", "echo trained\nexit 3\n", deep_log_setting());
    const LaptopSnapshot before = snapshot({"m"});
    ProcessResult r = mlt({"ssh", "train", "m"}, kHostileWait);
    expect_contained(r, before);
    EXPECT_EQ(r.exit_code, 1) << brief(r);
    EXPECT_TRUE(has_text(r.out + r.err, "the training exited 3")) << brief(r);
}

// New: 143 stays what it is (a training ended by SIGTERM), as 129 and 130 do.
TEST_F(HostileLowTest, ATrainingThatExits143KeepsItsStatus) {
    shell_model("m", "echo trained\nexit 143\n", deep_log_setting());
    const LaptopSnapshot before = snapshot({"m"});
    ProcessResult r = mlt({"ssh", "train", "m"}, kHostileWait);
    expect_contained(r, before);
    EXPECT_EQ(r.exit_code, 143) << brief(r);
}

}  // namespace
}  // namespace mlt_test
