// Big files as ranges over several connections (issue 21), against the real sshd: both ways
// whole and verified; a cut mid-file moves only the ranges not done, counted in bytes through
// the fault relay; a server that refuses extra connections (MaxStartups 2) still gets all.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "harness/expect.h"
#include "harness/fault_relay.h"
#include "harness/files.h"
#include "harness/test_sshd.h"
#include "harness/train_fixture.h"

namespace fs = std::filesystem;

namespace mlt_test {
namespace {

constexpr uint64_t kMiB = 1024 * 1024;

// `size` bytes that do not compress (a fixed-seed PRNG), so that they go as ranges.
void write_noise(const std::string& path, uint64_t size, unsigned seed) {
    std::mt19937_64 gen(seed);
    std::string data(size, '\0');
    for (uint64_t i = 0; i + 8 <= size; i += 8) {
        const uint64_t v = gen();
        for (int b = 0; b < 8; ++b) data[i + b] = static_cast<char>(v >> (8 * b));
    }
    write_file(path, data);
}

int64_t mtime_ns(const std::string& path) {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) return -1;
    return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}

// Files named like the partial files of a ranged transfer under `dir`.
std::vector<std::string> range_leftovers(const std::string& dir) {
    std::vector<std::string> found;
    if (!fs::exists(dir)) return found;
    for (const auto& e : fs::recursive_directory_iterator(dir))
        if (e.path().filename().string().find(".mlt-ranges") != std::string::npos)
            found.push_back(e.path().string());
    return found;
}

class TrainRangesTest : public TrainTest {
  protected:
    // A model whose upload is big.bin and whose job copies it into its log dir.
    void copy_model(const std::string& extra_settings = {}) {
        write_shell_model("m", "cp big.bin \"$MLT_LOG_DIR/out.bin\" && echo copied\n");
        write_model_settings(
            "m", "ssh:\n  train_cmd: \"sh {spec}\"\n  upload_files: [big.bin]\n" + extra_settings);
        write_user_settings();
    }
    // Trusts `port` (a relay in front of the test sshd) in known_hosts.
    void trust_port(uint16_t port) {
        append_file(default_known_hosts(), "[127.0.0.1]:" + std::to_string(port) + " " +
                                               sshd().host_key_type_and_blob() + "\n");
    }
    std::string via(uint16_t port) const {
        return sshd().user() + "@127.0.0.1:" + std::to_string(port);
    }
};

TEST_F(TrainRangesTest, ABigFileGoesUpAndComesHomeInRangesOverSeveralConnections) {
    write_noise(project() + "/big.bin", 80 * kMiB + 12345, 1);
    copy_model();
    ProcessResult r = mlt({"ssh", "-v", "train", "m", "--connections", "3"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    const std::string sum = sha256_of(project() + "/big.bin");
    EXPECT_EQ(sha256_of(remote() + "/big.bin"), sum);
    EXPECT_EQ(sha256_of(local_logs("m") + "/out.bin"), sum);
    // Both ways in ranges: 6 of them, 2 at a time per connection over a near link (loopback)
    // and 4 over a far one (a loaded machine can answer slowly), so over 3 or 2 connections.
    EXPECT_TRUE(has_text(r.err, "pushed " + project() + "/big.bin: 6 range(s)")) << r.err;
    EXPECT_TRUE(has_text(r.err, ", 3 link(s)") || has_text(r.err, ", 2 link(s)")) << r.err;
    EXPECT_TRUE(has_text(r.err, "out.bin: 6 range(s), 0 kept from before")) << r.err;
    EXPECT_EQ(mtime_ns(remote() + "/big.bin"), mtime_ns(project() + "/big.bin"));
    EXPECT_EQ(range_leftovers(remote()), std::vector<std::string>{});
    EXPECT_EQ(range_leftovers(local_logs("m")), std::vector<std::string>{});
}

// A workspace with a big file and many small ones: the small files' tar streams go over a
// connection of their own beside the big file's ranges, and everything arrives.
TEST_F(TrainRangesTest, SmallFilesGoBesideTheRangesOverAConnectionOfTheirOwn) {
    const std::string ws = project() + "/ws";
    fs::create_directories(ws + "/small");
    write_noise(ws + "/big.bin", 40 * kMiB, 4);
    for (int i = 0; i < 300; ++i)
        write_noise(ws + "/small/f" + std::to_string(i) + ".bin", 40 * 1024, 10 + i);
    write_shell_model("m", "echo trained\n");
    write_model_settings("m", "ssh:\n  train_cmd: \"sh {spec}\"\n");
    write_user_settings();
    ProcessResult r = mlt({"ssh", "-v", "train", "m", "--workspace", ws, "--connections", "3"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(has_text(r.err, "go beside the ranges, over a connection of their own")) << r.err;
    EXPECT_TRUE(has_text(r.err, "pushed " + ws + "/big.bin: 3 range(s)")) << r.err;
    EXPECT_EQ(sha256_of(remote() + "/big.bin"), sha256_of(ws + "/big.bin"));
    for (int i = 0; i < 300; ++i) {
        const std::string name = "/small/f" + std::to_string(i) + ".bin";
        ASSERT_EQ(sha256_of(remote() + name), sha256_of(ws + name)) << name;
    }
    EXPECT_EQ(range_leftovers(remote()), std::vector<std::string>{});
}

// The ranges whose hash the remote wrote (<partial>.d/INDEX.sha) under `dir`: each landed.
size_t ranges_landed(const std::string& dir) {
    size_t n = 0;
    if (!fs::exists(dir)) return n;
    for (const auto& e : fs::recursive_directory_iterator(dir))
        if (e.path().extension() == ".sha" &&
            e.path().parent_path().string().find(".mlt-ranges") != std::string::npos)
            ++n;
    return n;
}

// "pushed PATH: N range(s), K kept from before" (-v): K, or -1 when the line is not there.
long kept_from_before(const std::string& err, const std::string& path) {
    const std::string head = "pushed " + path + ": ";
    const size_t at = err.find(head);
    if (at == std::string::npos) return -1;
    const size_t comma = err.find(", ", at + head.size());
    if (comma == std::string::npos) return -1;
    return std::strtol(err.c_str() + comma + 2, nullptr, 10);
}

TEST_F(TrainRangesTest, AnUploadCutMidFileSendsOnlyTheRangesNotDoneAfterTheReconnect) {
    write_noise(project() + "/big.bin", 144 * kMiB, 2);
    copy_model("  reconnect_timeout: 60\n");
    FaultRelay relay(sshd().port());
    trust_port(relay.port());
    // The link stalls after 136 MiB of the 9 ranges of 16 MiB; the test waits until the
    // remote wrote the hash of a range (whichever channels took them, at least one range
    // is whole in 136 MiB: 8 started ranges hold under 128), then cuts. The ranges landed
    // by then must not go again. (A cut with no wait raced the remote's hashing of the
    // ranges that had just arrived: the reconnect could find some hashes not yet written.)
    relay.stall_after(Direction::up, 136 * kMiB);
    auto run =
        start_mlt({"ssh", "-v", "-h", via(relay.port()), "train", "m", "--connections", "1"});
    ASSERT_TRUE(relay.wait_fired(kTrainTimeout)) << run->out() << run->err();
    ASSERT_TRUE(wait_until([&] { return ranges_landed(remote()) >= 1; }, kEffectTimeout))
        << run->err();
    const size_t landed = ranges_landed(remote());
    const uint64_t before_cut = relay.bytes(Direction::up);
    relay.cut();
    relay.resume();
    ProcessResult r = run->wait(kTrainTimeout);
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_GE(relay.cuts(), 1u);
    EXPECT_EQ(sha256_of(remote() + "/big.bin"), sha256_of(project() + "/big.bin"));
    const long kept = kept_from_before(r.err, project() + "/big.bin");
    EXPECT_GE(kept, static_cast<long>(landed)) << "a range that had landed was not kept\n" << r.err;
    // After the cut at most the ranges not landed go, with the new connection's few KiB.
    EXPECT_LT(relay.bytes(Direction::up) - before_cut, (9 - landed) * 16 * kMiB + 4 * kMiB)
        << "a range that had landed was sent again (" << landed << " had landed)";
    EXPECT_EQ(range_leftovers(remote()), std::vector<std::string>{});
}

TEST_F(TrainRangesTest, ADownloadCutMidFileMovesOnlyTheRangesNotDoneNextTime) {
    write_shell_model("m", "echo nothing\n");
    write_model_settings("m", "ssh:\n  train_cmd: \"sh {spec}\"\n  transfer: {connections: 1}\n");
    write_user_settings();
    ASSERT_EQ(mlt({"ssh", "train", "m"}).exit_code, 0);
    write_noise(remote_logs_root() + "/m/big.bin", 96 * kMiB, 3);
    FaultRelay relay(sshd().port());
    trust_port(relay.port());
    // As up, 2 commands of 3 ranges or 3 of 2: however the 80 MiB before the cut were shared
    // among them, at least 3 ranges arrived, and at least 2 with their hashes.
    relay.cut_after(Direction::down, 80 * kMiB);
    ProcessResult cut = mlt({"ssh", "-h", via(relay.port()), "download", "m"});
    EXPECT_EQ(cut.exit_code, 255) << describe(cut);
    EXPECT_FALSE(fs::exists(local_logs("m") + "/big.bin"));
    const uint64_t before = relay.bytes(Direction::down);
    ProcessResult r = mlt({"ssh", "-h", via(relay.port()), "download", "m"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_EQ(sha256_of(local_logs("m") + "/big.bin"),
              sha256_of(remote_logs_root() + "/m/big.bin"));
    EXPECT_LT(relay.bytes(Direction::down) - before, 96 * kMiB - 16 * kMiB)
        << "the ranges that had arrived were moved again";
    EXPECT_EQ(range_leftovers(local_logs("m")), std::vector<std::string>{});
}

// A login profile that prints on every command (a `~/.bashrc` that echoes, as some rented
// images have): the ranges' commands run under it, and their bytes still arrive exact.
TEST_F(TrainRangesTest, ALoginProfileThatPrintsDoesNotCorruptTheRanges) {
    write_file(sshd().remote_home() + "/.bashrc", "echo 'welcome from the profile'\n");
    write_shell_model("m", "echo nothing\n");
    write_model_settings("m", "ssh:\n  train_cmd: \"sh {spec}\"\n  transfer: {connections: 2}\n");
    write_user_settings();
    ASSERT_EQ(mlt({"ssh", "train", "m"}).exit_code, 0);
    write_noise(remote_logs_root() + "/m/big.bin", 40 * kMiB, 5);
    ProcessResult r = mlt({"ssh", "-v", "download", "m"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(has_text(r.err, "big.bin: 3 range(s)")) << r.err;
    EXPECT_EQ(sha256_of(local_logs("m") + "/big.bin"),
              sha256_of(remote_logs_root() + "/m/big.bin"));
}

// sshd drops unauthenticated connections beyond MaxStartups: the ones mlt has carry the
// file, and the refusals are no error.
class TrainRangesStartupsTest : public TrainRangesTest {
  protected:
    std::string sshd_extra_config() const override { return "MaxStartups 2\n"; }
};

TEST_F(TrainRangesStartupsTest, AServerThatRefusesMoreConnectionsStillGetsTheWholeFile) {
    write_noise(project() + "/big.bin", 64 * kMiB, 4);
    copy_model();
    ProcessResult r = mlt({"ssh", "train", "m", "--connections", "8"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    const std::string sum = sha256_of(project() + "/big.bin");
    EXPECT_EQ(sha256_of(remote() + "/big.bin"), sum);
    EXPECT_EQ(sha256_of(local_logs("m") + "/out.bin"), sum);
}

}  // namespace
}  // namespace mlt_test
