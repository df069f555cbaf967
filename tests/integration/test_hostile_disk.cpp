// A hostile host wastes the laptop's disk or clock (issue 37, "the disk and the clock"): a
// file bigger than the free space, side connections that freeze, a `tar` that drips, a
// `cat` that stops, and a log dir of very many tiny files. Each ends within a bounded wait
// with bounded memory, and leaves no big partial behind.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "harness/expect.h"
#include "harness/files.h"
#include "harness/hostile_fixture.h"

namespace mlt_test {
namespace {

namespace fs = std::filesystem;

constexpr std::uint64_t kMiB = 1024 * 1024;
constexpr std::uint64_t kGiB = 1024 * kMiB;

// The progress floor of these tests: a stream that moves less than 64 KiB/s over 3 s has
// stalled (transfer.min_rate and transfer.stall_seconds, being added beside this suite: on
// a build without them they are unknown keys).
const char* const kQuickFloor = "  transfer: {stall_seconds: 3, min_rate: 65536}\n";

const char* const kLogTraining =
    "mkdir -p \"$MLT_LOG_DIR\" && echo 'a log line' > \"$MLT_LOG_DIR/train.txt\"\n"
    "echo trained\n";

// The bytes on disk under `dir` (allocated blocks: a sparse partial counts as what it holds).
std::uint64_t disk_use(const std::string& dir) {
    std::uint64_t total = 0;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(dir, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        struct stat st;
        if (::lstat(it->path().c_str(), &st) == 0)
            total += static_cast<std::uint64_t>(st.st_blocks) * 512;
    }
    return total;
}

// Makes `n` tiny files under `dir`, in 100 subdirs: hard links (one file per subdir), since
// creating that many files is most of such a test's time on a loaded machine; each is listed,
// packed (tar --hard-dereference) and written locally as a file of its own all the same.
void make_tiny_files(const std::string& dir, int n) {
    make_dir(dir, 0755);
    for (int d = 0; d < 100; ++d) {
        const std::string sub = dir + "/d" + std::to_string(d);
        make_dir(sub, 0755);
        write_file(sub + "/f0", "tiny " + std::to_string(d));
        for (int f = 1; f < n / 100; ++f) {
            const std::string name = sub + "/f" + std::to_string(f);
            ASSERT_EQ(::link((sub + "/f0").c_str(), name.c_str()), 0) << name;
        }
    }
}

// How many regular files are in the 100 subdirs of make_tiny_files under `dir`.
std::size_t tiny_files_under(const std::string& dir) {
    std::size_t n = 0;
    for (int d = 0; d < 100; ++d) {
        std::error_code ec;
        for (auto it = fs::directory_iterator(dir + "/d" + std::to_string(d), ec);
             !ec && it != fs::directory_iterator(); it.increment(ec))
            n += it->is_regular_file(ec) ? 1 : 0;
    }
    return n;
}

class HostileDiskTest : public HostileTrainTest {
  protected:
    // An honest run of `m` (a shell model with the deep log dir), so that `download` finds
    // a finished job.
    void honest_run() {
        shell_model("m", kLogTraining, deep_log_setting());
        const ProcessResult r = mlt({"ssh", "train", "m"});
        ASSERT_EQ(r.exit_code, 0) << describe(r);
    }
};

// Medium: a 100 GiB sparse file in the log dir was pulled until mlt was killed (no
// free-space check), and its 2.5 GB partial stayed. Its size here is beyond the free space
// of the test's disk; the test stops mlt itself once 1 GiB landed.
TEST_F(HostileDiskTest, AFileBiggerThanTheFreeSpaceIsRefusedBeforeThePull) {
    honest_run();
    struct statvfs vfs;
    ASSERT_EQ(::statvfs(env().home().c_str(), &vfs), 0);
    const std::uint64_t free_bytes = static_cast<std::uint64_t>(vfs.f_bavail) * vfs.f_frsize;
    const std::uint64_t size = std::min(std::max(100 * kGiB, 2 * free_bytes), 8192 * kGiB);
    write_padded(deep_log_dir("m") + "/huge.bin", "", size);
    const LaptopSnapshot before = snapshot({"m"});
    auto run = start_mlt({"ssh", "download", "m"});
    std::uint64_t landed = 0;
    wait_until(
        [&] {
            landed = std::max(landed, disk_use(local_logs("m")));
            return landed > kGiB || !process_alive(run->pid());
        },
        kHostileWait);
    // Killed if still running; one that has exited (a zombie to process_alive) is reaped
    // and its output read to the end, which a zero wait could cut short under load.
    ProcessResult r =
        run->wait(process_alive(run->pid()) ? std::chrono::milliseconds(0) : kEffectTimeout);
    EXPECT_LT(landed, kGiB) << "mlt pulled over 1 GiB of a " << size / kGiB
                            << " GiB file into a disk with " << free_bytes / kGiB << " GiB free\n"
                            << brief(r);
    expect_contained(r, before);
    EXPECT_NE(r.exit_code, 0) << brief(r);
    EXPECT_TRUE(contains_icase(r.err, "space"));
    EXPECT_LT(disk_use(local_logs("m")), 64 * kMiB) << "a big partial was left behind";
}

// Medium: side connections that freeze after 2 MB stopped a ranged pull for good. Here every
// `dd` of a side link sends 2 MB of its range and then nothing, holding its channel open;
// the run's own connection is honest. The pull completes over it, or ends with a clear
// error, within a bounded wait.
// The side connections' commands are told apart by their SSH_CONNECTION, which the commands
// of the channel listener (run in the first connection's control shell's environment) do not
// have: this host forwards no unix sockets, so every channel is an exec channel.
class HostileDiskExecChannelsTest : public HostileDiskTest {
  protected:
    std::string sshd_extra_config() const override {
        return HostileDiskTest::sshd_extra_config() + "AllowStreamLocalForwarding no\n";
    }
};

// Medium: side connections that froze after 2 MB stopped a ranged pull for good. Their
// ranges go to the links that move (here the first one, which stays honest).
TEST_F(HostileDiskExecChannelsTest, SideConnectionsThatFreezeAfter2MbDoNotStopThePull) {
    honest_run();
    // 4 connections: ranges of 16 MiB from 32 MiB on, over side links too (a near link).
    shell_model("m", kLogTraining, deep_log_setting(),
                "  transfer: {connections: 4, stall_seconds: 3, min_rate: 65536}\n");
    write_padded(deep_log_dir("m") + "/big.bin", "checkpoint", 256 * kMiB);
    host().forget_first_connection();  // the honest run's: the download's is the first
    host().add_tool("dd", "if " + host().on_side_connection() +
                              "; then\n"
                              "  hostile_mark dd\n"
                              "  " +
                              HostileHost::real("dd") + " \"$@\" | head -c 2097152\n  " +
                              host().stall() +
                              "\n"
                              "fi\n"
                              "exec " +
                              HostileHost::real("dd") + " \"$@\"\n");
    const LaptopSnapshot before = snapshot({"m"});
    ProcessResult r = mlt({"ssh", "-v", "download", "m"}, kHostileWait);
    EXPECT_TRUE(host().triggered("dd")) << "no side link moved a range\n" << host().describe();
    expect_contained(r, before);
    if (r.exit_code == 0)
        EXPECT_EQ(sha256_of(local_logs("m") + "/big.bin"),
                  sha256_of(deep_log_dir("m") + "/big.bin"))
            << brief(r);
    else
        EXPECT_TRUE(contains_icase(r.err, "stall"));
}

// Medium: a `tar` that dripped one stderr byte every 5 s and no stdout kept the collection
// waiting forever, silently. Here a byte every 2 s, with a floor of 64 KiB/s over 3 s.
TEST_F(HostileDiskTest, ATarThatDripsStderrEndsTheCollectionNamingTheStall) {
    host().add_tool("tar", "if " + in_dir(deep_log_dir("m")) + " && " + has_arg("-cf") +
                               "; then\n"
                               "  hostile_mark tar\n"
                               "  cd '" +
                               host().dir() +
                               "' && while :; do printf . >&2; sleep 2; done\n"
                               "fi\n"
                               "exec " +
                               HostileHost::real("tar") + " \"$@\"\n");
    shell_model("m", kLogTraining, deep_log_setting(), kQuickFloor);
    const LaptopSnapshot before = snapshot({"m"});
    ProcessResult r = mlt({"ssh", "train", "m"}, kHostileWait);
    EXPECT_TRUE(host().triggered("tar")) << host().describe();
    expect_contained(r, before);
    EXPECT_NE(r.exit_code, 0) << brief(r);
    EXPECT_TRUE(contains_icase(r.err, "stall") || contains_icase(r.err, "trickl")) << brief(r);
}

// New: the `head` that sends the archive (mlt reads it with `head -c SIZE`) stops after 1 MB
// and holds its channel open: the collection ends with an error naming the stall, and no
// partial archive is named.
TEST_F(HostileDiskTest, ACatThatStopsMidArchiveEndsTheCollectionNamingTheStall) {
    host().add_tool("head", "if " + args_contain("m.mltk.zip") +
                                "; then\n"
                                "  hostile_mark head\n"
                                "  " +
                                HostileHost::real("head") + " \"$@\" | " +
                                HostileHost::real("head") + " -c 1048576\n  " + host().stall() +
                                "\n"
                                "fi\n"
                                "exec " +
                                HostileHost::real("head") + " \"$@\"\n");
    shell_model("m", "head -c 8388608 /dev/urandom > \"$MLT_ARCHIVE\"\necho trained\n",
                deep_log_setting(), kQuickFloor);
    const LaptopSnapshot before = snapshot({"m"});
    ProcessResult r = mlt({"ssh", "train", "m"}, kHostileWait);
    EXPECT_TRUE(host().triggered("head")) << host().describe();
    expect_contained(r, before);
    EXPECT_NE(r.exit_code, 0) << brief(r);
    EXPECT_TRUE(contains_icase(r.err, "stall"));
    EXPECT_FALSE(path_exists(local_archive("m"))) << brief(r);
}

// Medium: 200,000 tiny files took 175 MB RSS and were not collected in 120 s. Here 100,000
// (in 100 dirs; the 200,000 took 60 s to pull and up to 150 s to create here, past a test's
// time limit) are collected in time, and the peak RSS stays under 64 MiB (and the
// sanitizer's headroom): under 440 bytes per file over an honest run's 20 MiB, where keeping
// the listing and a few maps of every path took about 1 KiB per file (119 MiB).
// Medium: 200,000 tiny files took 175 MB and were not collected in 120 s. Here 100,000 (hard
// links of 100 files, so that the host's disk is spared): a pull holds its listing and one
// batch of names beyond it.
TEST_F(HostileDiskTest, ManyTinyFilesAreCollectedWithBoundedMemory) {
    honest_run();
    make_tiny_files(deep_log_dir("m"), 100000);
    const LaptopSnapshot before = snapshot({"m"});
    ProcessResult r = mlt({"ssh", "download", "m"}, kHostileWait);
    expect_contained(r, before);
    RecordProperty("peak_rss_kib", std::to_string(r.peak_rss_kib));  // the figure, in the XML
    EXPECT_LE(r.peak_rss_kib, 64 * 1024 + sanitizer_headroom_kib()) << brief(r);
    EXPECT_EQ(r.exit_code, 0) << brief(r);
    EXPECT_EQ(tiny_files_under(local_logs("m")), 100000u);
}

}  // namespace
}  // namespace mlt_test
