// `train --sync-every S`: checkpoints come home while the job trains, pulled on a second
// connection, so that console lines keep flowing while a big checkpoint is pulled; a pull cut
// by a dropped link goes on after the reconnect; everything is collected once at the end.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <thread>

#include "harness/expect.h"
#include "harness/fault_relay.h"
#include "harness/files.h"
#include "harness/train_fixture.h"

namespace mlt_test {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr uint64_t kMiB = 1024 * 1024;

// A shell model that saves one checkpoint of `bytes` random bytes into its log dir (written
// aside, then renamed in, as a careful trainer does), says "checkpoint saved", then prints
// numbered lines ("line N", ten a second) until the file `gate` exists, and ends.
std::string checkpoint_model(const std::string& gate, uint64_t bytes) {
    return "cd \"$MLT_LOG_DIR\"\n"
           "head -c " +
           std::to_string(bytes) +
           " /dev/urandom > ../big.tmp\n"
           "mv ../big.tmp big.ckpt\n"
           "echo 'checkpoint saved'\n"
           "i=0; while [ ! -f '" +
           gate +
           "' ] && [ $i -lt 3000 ]; do i=$((i+1)); echo \"line $i\"; sleep 0.1; done\n"
           "echo finished\n";
}

// The highest N of the lines "line N" in `text`; 0 when there is none.
int last_line(const std::string& text) {
    const size_t at = text.rfind("\nline ");
    return at == std::string::npos ? 0 : std::atoi(text.c_str() + at + 6);
}

// The size of the partial local copy of big.ckpt under the staging dir (its resumable
// temporary file); 0 when there is none.
uint64_t partial_size(const std::string& staging) {
    std::error_code ec;
    uint64_t size = 0;
    for (const auto& e : fs::directory_iterator(staging, ec))
        if (e.path().filename().string().find("big.ckpt") != std::string::npos)
            size = std::max<uint64_t>(size, e.file_size(ec));
    return size;
}

// How many ranges of big.ckpt's partial copy under the staging dir are done (the lines of
// its state file after the first).
int done_ranges(const std::string& staging) {
    const std::string state = read_or_empty(staging + "/.big.ckpt.mlt-ranges.state");
    const auto lines = static_cast<int>(std::count(state.begin(), state.end(), '\n'));
    return std::max(0, lines - 1);
}

// What a test saw while the checkpoint was pulled.
struct PullWatch {
    bool seen_partial = false;  // the staging copy was seen growing, not yet whole
    int lines_during = 0;       // console lines that arrived while it was partial
    double pull_seconds = 0;    // from the first partial look to the published file
    double largest_gap = 0;     // between two new console lines, while pulling
};

class SyncEveryTest : public TrainTest {
  protected:
    void SetUp() override {
        TrainTest::SetUp();
        write_model_settings("m", "ssh:\n  train_cmd: \"sh {spec}\"\n");
    }

    std::string gate() const { return remote() + "/gate"; }

    // Points the settings at `relay` (in front of sshd) and trusts the server there.
    void go_through(const FaultRelay& relay) {
        env().write_settings(base_settings(false) + "  connection:\n    hostname: 127.0.0.1\n" +
                             "    port: " + std::to_string(relay.port()) +
                             "\n    username: " + sshd().user() + "\n    key_filename: \"" +
                             sshd().client_key_path() + "\"\n  compression: none\n");
        append_file(default_known_hosts(), "[127.0.0.1]:" + std::to_string(relay.port()) + " " +
                                               sshd().host_key_type_and_blob() + "\n");
    }

    // Watches the run until big.ckpt (`bytes`) is published locally; calls `mid_pull` once,
    // when a range of the partial copy is done.
    PullWatch watch_pull(BackgroundProcess& run, uint64_t bytes,
                         const std::function<void()>& mid_pull = {}) const {
        const std::string staging = local_logs("m") + "/.mlt-pull";
        const std::string published = local_logs("m") + "/big.ckpt";
        PullWatch w;
        int first_line = -1, line = last_line(run.out());
        Clock::time_point first_partial, line_at = Clock::now();
        bool called = false;
        const auto deadline = Clock::now() + kTrainTimeout;
        while (!path_exists(published) && Clock::now() < deadline) {
            const uint64_t before = partial_size(staging);
            const int now = last_line(run.out());
            const uint64_t after = partial_size(staging);
            const auto t = Clock::now();
            if (now != line) {
                if (w.seen_partial)
                    w.largest_gap =
                        std::max(w.largest_gap, std::chrono::duration<double>(t - line_at).count());
                line = now;
                line_at = t;
            }
            if (before > 0 && before < bytes && first_line < 0) {
                first_line = now;
                first_partial = t;
                w.seen_partial = true;
            }
            if (first_line >= 0 && after > 0 && after < bytes)
                w.lines_during = std::max(w.lines_during, now - first_line);
            if (mid_pull && !called && done_ranges(staging) > 0) {
                called = true;
                mid_pull();
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        if (w.seen_partial)
            w.pull_seconds = std::chrono::duration<double>(Clock::now() - first_partial).count();
        return w;
    }

    // The end every run here must reach: exit 0, the checkpoint whole, each console line once,
    // nothing left in the staging dir, and the final collection found it already home.
    void expect_collected_once(const ProcessResult& r) const {
        ASSERT_EQ(r.exit_code, 0) << describe(r) << job_state("m");
        const std::string logs = local_logs("m");
        EXPECT_EQ(sha256_of(logs + "/big.ckpt"), sha256_of(remote_logs_root() + "/m/big.ckpt"));
        EXPECT_FALSE(path_exists(logs + "/.mlt-pull")) << describe(r);
        EXPECT_TRUE(has_text(r.out, "(1 unchanged)")) << "pulled again at the end?\n"
                                                      << describe(r);
        const std::string console = read_or_empty(local_console("m"));
        EXPECT_EQ(console, read_or_empty(job_file("m", "console.log")));
        const int lines = last_line(console);
        EXPECT_GT(lines, 0) << console;
        for (int i = 1; i <= lines; ++i)
            EXPECT_EQ(count_lines(r.out, "line " + std::to_string(i)), 1u) << i << "\n" << r.out;
        EXPECT_EQ(count_lines(r.out, "finished"), 1u) << r.out;
    }
};

// A checkpoint comes home while the job still runs (it waits for the gate), and the final
// collection does not pull it again.
TEST_F(SyncEveryTest, ACheckpointComesHomeWhileTheJobStillRuns) {
    write_shell_model("m", checkpoint_model(gate(), 300000));
    write_user_settings();
    auto run = start_mlt({"ssh", "train", "m", "--sync-every", "1"});
    const std::string local = local_logs("m") + "/big.ckpt";
    ASSERT_TRUE(wait_until([&] { return path_exists(local); }, kTrainTimeout))
        << run->out() << run->err();
    EXPECT_EQ(job_exit_status("m"), -1) << "the job still runs";
    EXPECT_EQ(sha256_of(local), sha256_of(remote_logs_root() + "/m/big.ckpt"));
    ASSERT_TRUE(run->wait_for_output("line 2\n", kTrainTimeout)) << run->out();
    write_file(gate(), "");
    ProcessResult r = run->wait(kTrainTimeout);
    expect_collected_once(r);
    EXPECT_EQ(lines_starting(r.err, "mlt: synced ").size(), 1u)
        << "one line (a minute apart at most) where stderr is no terminal:\n"
        << r.err;
    EXPECT_TRUE(has_text(r.err, " while training: 1 file, 293.0 KiB in " + local_logs("m")))
        << r.err;
}

// A big checkpoint (through a relay that paces each connection, so that the pull takes a
// few seconds on any machine) is pulled while console lines keep arriving: they do not wait
// for it.
TEST_F(SyncEveryTest, LinesKeepComingWhileABigCheckpointIsPulled) {
    const uint64_t bytes = 96 * kMiB;
    FaultRelay relay(sshd().port());
    relay.set_rate(24 * kMiB);  // about 4 s for the checkpoint
    go_through(relay);
    write_shell_model("m", checkpoint_model(gate(), bytes));
    auto run = start_mlt({"ssh", "train", "m", "--sync-every", "1"});
    ASSERT_TRUE(run->wait_for_output("checkpoint saved", kTrainTimeout)) << run->err();
    const PullWatch w = watch_pull(*run, bytes);
    EXPECT_TRUE(w.seen_partial) << run->err();
    EXPECT_GE(w.lines_during, 2) << "console lines held back by the pull?\n" << run->out();
    write_file(gate(), "");
    expect_collected_once(run->wait(kTrainTimeout));
}

// The link drops (all connections: the run's and the pull's) in the middle of the pull: both
// reconnect, the pull continues inside the file, and everything arrives once. The file has
// 6 ranges, and 4 connections move them at once (a number of connections: ranges from 32 MiB
// also over loopback, a near link), so the cut comes once one is done, while others still
// move.
TEST_F(SyncEveryTest, APullCutByADroppedLinkContinuesAfterTheReconnect) {
    const uint64_t bytes = 96 * kMiB;
    FaultRelay relay(sshd().port());
    relay.set_rate(24 * kMiB);
    go_through(relay);
    write_shell_model("m", checkpoint_model(gate(), bytes));
    auto run = start_mlt({"ssh", "train", "m", "--sync-every", "1", "--connections", "4"});
    ASSERT_TRUE(run->wait_for_output("checkpoint saved", kTrainTimeout)) << run->err();
    const PullWatch w = watch_pull(*run, bytes, [&] { relay.cut(); });
    EXPECT_TRUE(w.seen_partial) << run->err();
    EXPECT_EQ(relay.cuts(), 1u) << run->err();
    ASSERT_TRUE(path_exists(local_logs("m") + "/big.ckpt")) << run->err();
    ASSERT_TRUE(run->wait_for_output("line " + std::to_string(last_line(run->out()) + 2) + "\n",
                                     kTrainTimeout))
        << "the follow goes on after the cut\n"
        << run->out() << run->err();
    write_file(gate(), "");
    ProcessResult r = run->wait(kTrainTimeout);
    expect_collected_once(r);
    EXPECT_TRUE(has_text(r.err, "lost while following the log; reconnecting")) << r.err;
    EXPECT_TRUE(has_text(r.err, "resumed " + local_logs("m") + "/.mlt-pull/big.ckpt after "))
        << "the pull went on inside the file\n"
        << r.err;
}

// The bench: a 1 GiB checkpoint (MLT_TEST_SYNC_BYTES to change it) pulled at full
// loopback speed while lines flow (about 15 s here; it needs 3 GiB of free disk, and says
// so when they are not there); prints how long it took and the largest gap between two
// console lines seen meanwhile (not asserted: the machine's load decides).

TEST_F(SyncEveryTest, AOneGibCheckpointIsPulledWhileLinesFlow) {
    const char* env_bytes = std::getenv("MLT_TEST_SYNC_BYTES");
    const uint64_t bytes = env_bytes ? std::strtoull(env_bytes, nullptr, 10) : 1024 * kMiB;
    ASSERT_GT(bytes, 32 * kMiB) << "MLT_TEST_SYNC_BYTES: more than 32 MiB, to be pulled resumably";
    const fs::space_info space = fs::space(sshd().dir());
    ASSERT_GE(space.available, 3 * bytes)
        << "the test needs 3x " << bytes << " bytes free under " << sshd().dir()
        << " (the remote checkpoint, the pulled one and its staging copy)";
    write_shell_model("m", checkpoint_model(gate(), bytes));
    write_user_settings();
    auto run = start_mlt({"ssh", "train", "m", "--sync-every", "1"});
    ASSERT_TRUE(run->wait_for_output("checkpoint saved", scaled(std::chrono::seconds(120))))
        << run->err();
    const PullWatch w = watch_pull(*run, bytes);
    std::cout << "sync-every bench: " << bytes << " bytes pulled in about " << w.pull_seconds
              << " s; largest gap between console lines meanwhile " << w.largest_gap << " s; "
              << w.lines_during << " lines arrived during the pull\n";
    EXPECT_TRUE(w.seen_partial) << run->err();
    EXPECT_GE(w.lines_during, 1) << run->out();
    write_file(gate(), "");
    expect_collected_once(run->wait(kTrainTimeout));
}

}  // namespace
}  // namespace mlt_test
