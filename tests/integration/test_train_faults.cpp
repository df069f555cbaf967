// `mlt ssh ... train` through a FaultRelay in front of the real sshd: the link is cut (reset)
// or stalled (black-holed) inside each phase, or the client is killed with SIGKILL there and
// the run is picked up with --resume. Every run must end with the training's exit status 0,
// the archive equal to what the remote recorded, each console line exactly once on the
// terminal and in the local copy, one job and one shutdown, and never an earlier run's
// archive.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "harness/expect.h"
#include "harness/fault_relay.h"
#include "harness/files.h"
#include "harness/openssh.h"
#include "harness/train_fixture.h"

namespace mlt_test {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kLines = 12;
constexpr uint64_t kBig = 24ull * 1024 * 1024;
constexpr uint64_t kTrigger = 8ull * 1024 * 1024;  // well inside a kBig transfer

// A shell model: prints lines 1..5, waits (bounded) for the file `gate` in the remote dir,
// prints lines 6..kLines, and writes an archive of kBig random bytes. It counts its
// launches; shutdown_cmds count theirs.
std::string gated_model() {
    return "echo launched >> launches.txt\n"
           "i=1; while [ $i -le " +
           std::to_string(kLines) +
           " ]; do\n"
           "  echo \"line $i/" +
           std::to_string(kLines) +
           "\"\n"
           "  if [ $i -eq 5 ]; then n=0; while [ ! -f gate ] && [ $n -lt 2400 ]; do sleep 0.05; "
           "n=$((n+1)); done; fi\n"
           "  i=$((i+1))\n"
           "done\n"
           "head -c " +
           std::to_string(kBig) + " /dev/urandom > \"$MLT_ARCHIVE\"\n";
}

class TrainFaultTest : public TrainTest {
  protected:
    void SetUp() override {
        TrainTest::SetUp();
        relay_ = std::make_unique<FaultRelay>(sshd().port());
        write_shell_model("m", gated_model());
        write_model_settings("m",
                             "ssh:\n  train_cmd: \"sh {spec}\"\n"
                             "  upload_files: [big.bin]\n"
                             "  shutdown_cmds: [\"echo shut >> shutdowns.txt\"]\n");
        // Incompressible, so the bytes on the wire are the file's.
        ProcessResult r = run_process(
            {"/bin/sh", "-c", "head -c " + std::to_string(kBig) + " /dev/urandom > \"$1\"", "sh",
             project() + "/big.bin"},
            current_environment(), kEffectTimeout);
        ASSERT_EQ(r.exit_code, 0) << describe(r);
        // The settings point at the relay, not at sshd.
        env().write_settings(base_settings(false) +
                             "  connection:\n"
                             "    hostname: 127.0.0.1\n"
                             "    port: " +
                             std::to_string(relay_->port()) +
                             "\n"
                             "    username: " +
                             sshd().user() +
                             "\n"
                             "    key_filename: \"" +
                             sshd().client_key_path() +
                             "\"\n"
                             "  compression: none\n");
        trust_relay();
    }
    void TearDown() override {
        relay_.reset();
        TrainTest::TearDown();
    }

    // known_hosts names the server by the port the client used: the relay's.
    void trust_relay() const {
        append_file(default_known_hosts(), "[127.0.0.1]:" + std::to_string(relay_->port()) + " " +
                                               sshd().host_key_type_and_blob() + "\n");
    }

    void open_gate() const { write_file(remote() + "/gate", ""); }

    // Waits for the hold file of MLT_TEST_HOLD, then lets mlt go on.
    ::testing::AssertionResult wait_held(const std::string& file) const {
        if (wait_until([&] { return path_exists(file); }, kEffectTimeout))
            return ::testing::AssertionSuccess();
        return ::testing::AssertionFailure() << "mlt never reached the hold point " << file;
    }

    // What every run through a fault must leave: `out` is everything it printed on stdout
    // (all processes of the run together).
    void expect_good_run(const std::string& out) const {
        const std::string console = read_or_empty(local_console("m"));
        EXPECT_EQ(console, read_or_empty(job_file("m", "console.log")));
        for (int i = 1; i <= kLines; ++i) {
            const std::string line = "line " + std::to_string(i) + "/" + std::to_string(kLines);
            EXPECT_EQ(count_lines(out, line), 1u) << line << " on the terminal:\n" << out;
            EXPECT_EQ(count_lines(console, line), 1u) << line << " in the local copy:\n" << console;
        }
        const std::string remote_sha = trim(read_or_empty(job_file("m", "sha256")));
        EXPECT_EQ(remote_sha.size(), 64u) << job_state("m");
        EXPECT_EQ(sha256_of(local_archive("m")), remote_sha);
        EXPECT_EQ(sha256_of(remote() + "/m.mltk.zip"), remote_sha);
        EXPECT_EQ(read_or_empty(remote() + "/launches.txt"), "launched\n") << "one job";
        EXPECT_EQ(read_or_empty(remote() + "/shutdowns.txt"), "shut\n") << "one shutdown";
        EXPECT_EQ(sha256_of(remote() + "/big.bin"), sha256_of(project() + "/big.bin"));
        EXPECT_FALSE(path_exists(job_file("m", "lock"))) << job_state("m");
        auto runs = history();
        ASSERT_FALSE(runs.empty());
        EXPECT_EQ(runs.back()["status"], "success") << read_or_empty(history_path());
        EXPECT_EQ(runs.back()["id"], trim(read_or_empty(job_file("m", "run_id"))));
    }

    std::unique_ptr<FaultRelay> relay_;
};

// A cut at `when`, then the run goes on by itself.
TEST_F(TrainFaultTest, ACutWhileUploadingIsReconnectedAndTheUploadContinues) {
    relay_->cut_after(Direction::up, kTrigger);
    auto run = start_mlt({"ssh", "train", "m"});
    ASSERT_TRUE(relay_->wait_fired(kTrainTimeout)) << run->out() << run->err();
    ASSERT_TRUE(wait_console("m", "line 5/"));
    open_gate();
    ProcessResult r = run->wait(kTrainTimeout);
    ASSERT_EQ(r.exit_code, 0) << describe(r) << job_state("m");
    EXPECT_TRUE(has_text(r.err, "lost while uploading; reconnecting (attempt 1")) << describe(r);
    EXPECT_TRUE(has_text(r.err, "is back after")) << describe(r);
    EXPECT_EQ(relay_->cuts(), 1u);
    expect_good_run(r.out);
}

TEST_F(TrainFaultTest, ACutWhileStartingStartsTheJobOnce) {
    const std::string hold = sshd().dir() + "/hold";
    env().set("MLT_TEST_HOLD", "starting the job:" + hold);
    auto run = start_mlt({"ssh", "train", "m"});
    ASSERT_TRUE(wait_held(hold)) << run->out() << run->err();
    relay_->cut();
    ::unlink(hold.c_str());
    ASSERT_TRUE(wait_console("m", "line 5/"));
    open_gate();
    ProcessResult r = run->wait(kTrainTimeout);
    ASSERT_EQ(r.exit_code, 0) << describe(r) << job_state("m");
    EXPECT_TRUE(has_text(r.err, "lost while starting the job; reconnecting")) << describe(r);
    expect_good_run(r.out);
}

TEST_F(TrainFaultTest, AReplyLostAfterTheJobWasLaunchedStartsItOnce) {
    // Held at the start: nothing moves until the start command goes up. Its reply is the
    // first byte down, and the relay swallows it: the job is launched, mlt does not know.
    const std::string hold = sshd().dir() + "/hold";
    env().set("MLT_TEST_HOLD", "starting the job:" + hold);
    auto run = start_mlt({"ssh", "train", "m"});
    ASSERT_TRUE(wait_held(hold)) << run->out() << run->err();
    relay_->stall_after(Direction::down, 1);
    ::unlink(hold.c_str());
    ASSERT_TRUE(relay_->wait_fired(kTrainTimeout)) << run->out() << run->err();
    ASSERT_TRUE(wait_console("m", "line 5/")) << "the start command did not run";
    relay_->cut();
    relay_->resume();
    open_gate();
    ProcessResult r = run->wait(kTrainTimeout);
    ASSERT_EQ(r.exit_code, 0) << describe(r) << job_state("m");
    EXPECT_TRUE(has_text(r.err, "lost while starting the job; reconnecting")) << describe(r);
    expect_good_run(r.out);  // launches.txt: once
}

TEST_F(TrainFaultTest, ACutWhileFollowingContinuesAtTheExactByte) {
    auto run = start_mlt({"ssh", "train", "m"});
    ASSERT_TRUE(run->wait_for_output("line 3/", kTrainTimeout)) << run->out() << run->err();
    relay_->cut();
    open_gate();
    ProcessResult r = run->wait(kTrainTimeout);
    ASSERT_EQ(r.exit_code, 0) << describe(r) << job_state("m");
    EXPECT_TRUE(has_text(r.err, "lost while following the log; reconnecting")) << describe(r);
    expect_good_run(r.out);
}

// The link gone for good (the relay takes connections and forwards nothing, so each attempt
// lasts its connect timeout): mlt gives up after --reconnect-timeout plus at most the attempt
// under way, and its line says which timeout ended it.
TEST_F(TrainFaultTest, ALinkGoneForGoodGivesUpAfterTheReconnectTimeoutAndSaysSo) {
    auto run =
        start_mlt({"ssh", "-o", "ConnectTimeout=2", "train", "m", "--reconnect-timeout", "3"});
    ASSERT_TRUE(run->wait_for_output("line 3/", kTrainTimeout)) << run->out() << run->err();
    relay_->stall();
    relay_->cut();
    ProcessResult r = run->wait(kTrainTimeout);
    open_gate();  // the job, left running, may end
    EXPECT_EQ(r.exit_code, 255) << describe(r);
    const auto errors = lines_starting(r.err, "mlt: error: ");
    ASSERT_EQ(errors.size(), 1u) << describe(r);
    EXPECT_TRUE(
        has_text(errors.front(), "lost while following the log; gave up reconnecting after"))
        << errors.front();
    EXPECT_TRUE(has_text(errors.front(), "(reconnect timeout 3 s)")) << errors.front();
    EXPECT_TRUE(has_text(errors.front(), "the remote job keeps running")) << errors.front();
    // Backing off 1 s, then 2 s: a third attempt would start after the 3 s.
    EXPECT_TRUE(has_text(r.err, "reconnecting (attempt 1,")) << describe(r);
    EXPECT_TRUE(lacks_text(r.err, "reconnecting (attempt 3,")) << describe(r);
}

// host_key_checking: no with a changed key (a cloud host that reuses its address for a new
// instance): the run works, and its reconnects are accepted because they present the key of
// the first connection; the warning comes once, known_hosts stays as it was.
TEST_F(TrainFaultTest, AChangedHostKeyAcceptedByNoSurvivesAReconnect) {
    const std::string old_key = sshd().dir() + "/old_host_key";
    make_ssh_key(old_key);
    const std::string known = "[127.0.0.1]:" + std::to_string(relay_->port()) + " " +
                              key_type_and_blob(read_file(old_key + ".pub")) + "\n";
    write_file(default_known_hosts(), known);
    append_file(env().settings_path(), "  host_key_checking: no\n");
    auto run = start_mlt({"ssh", "train", "m"});
    ASSERT_TRUE(run->wait_for_output("line 3/", kTrainTimeout)) << run->out() << run->err();
    relay_->cut();
    open_gate();
    ProcessResult r = run->wait(kTrainTimeout);
    ASSERT_EQ(r.exit_code, 0) << describe(r) << job_state("m");
    EXPECT_TRUE(has_text(r.err, "lost while following the log; reconnecting")) << describe(r);
    EXPECT_EQ(count_occurrences(r.err, "has CHANGED"), 1u) << describe(r);
    EXPECT_EQ(read_file(default_known_hosts()), known);
    expect_good_run(r.out);
}

TEST_F(TrainFaultTest, ACutWhileCollectingResumesThePull) {
    auto run = start_mlt({"ssh", "train", "m"});
    ASSERT_TRUE(run->wait_for_output("line 5/", kTrainTimeout)) << run->out() << run->err();
    // Armed now: from here on the console sends a few hundred bytes, then the archive comes.
    relay_->cut_after(Direction::down, kTrigger);
    open_gate();
    ASSERT_TRUE(relay_->wait_fired(kTrainTimeout)) << run->out() << run->err();
    ProcessResult r = run->wait(kTrainTimeout);
    ASSERT_EQ(r.exit_code, 0) << describe(r) << job_state("m");
    EXPECT_TRUE(has_text(r.err, "lost while collecting the results; reconnecting")) << describe(r);
    EXPECT_TRUE(has_text(r.err, "resumed " + local_archive("m") + " after")) << describe(r);
    expect_good_run(r.out);
}

// The temporary local copy of the archive is changed while it arrives (another process, a
// bad disk): the hash is checked on the file the rename would put in place, not on the bytes
// as they came, so the damaged copy never becomes the archive; --resume then collects it.
TEST_F(TrainFaultTest, AnArchiveDamagedLocallyWhileArrivingIsNotPutInPlace) {
    auto run = start_mlt({"ssh", "train", "m"});
    ASSERT_TRUE(run->wait_for_output("line 5/", kTrainTimeout)) << run->out() << run->err();
    relay_->set_rate(kBig / 8);  // the archive takes about 8 s to arrive
    open_gate();
    const std::string prefix = ".m.mltk.zip.mlt-resume-";
    std::string partial;
    ASSERT_TRUE(wait_until(
        [&] {
            std::error_code ec;
            for (const auto& e : std::filesystem::directory_iterator(project(), ec)) {
                const std::string name = e.path().filename().string();
                if (name.compare(0, prefix.size(), prefix) == 0 && e.file_size(ec) >= 4096)
                    partial = e.path().string();
            }
            return !partial.empty();
        },
        kTrainTimeout))
        << run->out() << run->err();
    const int fd = ::open(partial.c_str(), O_WRONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0) << partial;
    const ssize_t wrote = ::pwrite(fd, "DAMAGED!", 8, 0);
    ::close(fd);
    ASSERT_EQ(wrote, 8) << partial;
    relay_->set_rate(0);
    ProcessResult r = run->wait(kTrainTimeout);
    EXPECT_EQ(r.exit_code, 1) << describe(r) << job_state("m");
    EXPECT_TRUE(has_text(r.err, "the downloaded m.mltk.zip does not match its remote sha256"))
        << describe(r);
    EXPECT_FALSE(path_exists(local_archive("m"))) << describe(r);

    ProcessResult resumed = mlt({"ssh", "train", "m", "--resume"});
    ASSERT_EQ(resumed.exit_code, 0) << describe(resumed) << job_state("m");
    EXPECT_EQ(sha256_of(local_archive("m")), trim(read_or_empty(job_file("m", "sha256"))));
}

// Over the 60 s budget of an integration test by its nature (a 45 s stall): its suite's name
// ends in SlowTest, which ctest labels `slow` (tests/CMakeLists.txt).
using TrainFaultSlowTest = TrainFaultTest;

TEST_F(TrainFaultSlowTest, AFortyFiveSecondStallIsNoticedAndTheRunGoesOn) {
    auto run = start_mlt({"ssh", "train", "m"});
    ASSERT_TRUE(run->wait_for_output("line 5/", kTrainTimeout)) << run->out() << run->err();
    const auto stalled = Clock::now();
    relay_->stall();
    // Noticed by the keepalives (default: 30 s of silence) while the link is still silent.
    EXPECT_TRUE(
        run->wait_for_output("lost while following the log", std::chrono::seconds(40), true))
        << run->err();
    // The fault lasts 45 s, whatever mlt does meanwhile.
    wait_until([] { return false; }, std::chrono::duration_cast<std::chrono::milliseconds>(
                                         std::chrono::seconds(45) - (Clock::now() - stalled)));
    relay_->resume();
    open_gate();
    ProcessResult r = run->wait(kTrainTimeout);
    ASSERT_EQ(r.exit_code, 0) << describe(r) << job_state("m");
    EXPECT_TRUE(has_text(r.err, "is back after")) << describe(r);
    expect_good_run(r.out);
}

// SIGKILL of the client at a point of each phase, then `train --resume` finishes the run.
class TrainKillTest : public TrainFaultTest {
  protected:
    // Kills `run` (SIGKILL), lets the relay forward again, and resumes; returns what both
    // printed on stdout.
    std::string kill_and_resume(std::unique_ptr<BackgroundProcess> run, bool gate_now = true) {
        run->signal(SIGKILL);
        ProcessResult killed = run->wait(kEffectTimeout);
        EXPECT_EQ(killed.exit_code, 128 + SIGKILL) << describe(killed);
        EXPECT_TRUE(path_exists(job_file("m", "lock"))) << "the run's state must stay";
        relay_->cut();  // what the killed client left in the relay goes too
        relay_->resume();
        if (gate_now) open_gate();
        ProcessResult resumed = mlt({"ssh", "train", "m", "--resume"});
        EXPECT_EQ(resumed.exit_code, 0) << describe(resumed) << job_state("m");
        return killed.out + resumed.out;
    }
};

TEST_F(TrainKillTest, KilledWhileUploadingTheResumeContinuesThatRun) {
    relay_->stall_after(Direction::up, kTrigger);
    auto run = start_mlt({"ssh", "train", "m"});
    ASSERT_TRUE(relay_->wait_fired(kTrainTimeout)) << run->out() << run->err();
    const std::string id = trim(read_or_empty(job_file("m", "run_id")));
    ASSERT_FALSE(id.empty()) << job_state("m");
    EXPECT_FALSE(path_exists(job_file("m", "pid"))) << "the job started before its upload ended";
    const std::string out = kill_and_resume(std::move(run));
    EXPECT_EQ(trim(read_or_empty(job_file("m", "run_id"))), id) << "--resume started another run";
    expect_good_run(out);
}

TEST_F(TrainKillTest, KilledWhileStartingTheResumeStartsItOnce) {
    const std::string hold = sshd().dir() + "/hold";
    env().set("MLT_TEST_HOLD", "starting the job:" + hold);
    auto run = start_mlt({"ssh", "train", "m"});
    ASSERT_TRUE(wait_held(hold)) << run->out() << run->err();
    env().unset("MLT_TEST_HOLD");
    const std::string out = kill_and_resume(std::move(run));
    ::unlink(hold.c_str());
    expect_good_run(out);
}

TEST_F(TrainKillTest, KilledWhileFollowingTheResumeShowsTheRestOnce) {
    auto run = start_mlt({"ssh", "train", "m"});
    ASSERT_TRUE(run->wait_for_output("line 5/", kTrainTimeout)) << run->out() << run->err();
    expect_good_run(kill_and_resume(std::move(run)));
}

TEST_F(TrainKillTest, KilledWhileCollectingTheResumeFinishesThePull) {
    auto run = start_mlt({"ssh", "train", "m"});
    ASSERT_TRUE(run->wait_for_output("line 5/", kTrainTimeout)) << run->out() << run->err();
    relay_->stall_after(Direction::down, kTrigger);
    open_gate();
    ASSERT_TRUE(relay_->wait_fired(kTrainTimeout)) << run->out() << run->err();
    expect_good_run(kill_and_resume(std::move(run), false));
}

TEST_F(TrainFaultTest, ASecondResumeOfARunFollowedHereIsRefused) {
    ProcessResult started = mlt({"ssh", "train", "m", "--no-wait"});
    ASSERT_EQ(started.exit_code, 0) << describe(started);
    auto first = start_mlt({"ssh", "train", "m", "--resume"});
    ASSERT_TRUE(first->wait_for_output("reattaching", kTrainTimeout))
        << first->out() << first->err();
    ProcessResult second = mlt({"ssh", "train", "m", "--resume"});
    EXPECT_EQ(second.exit_code, 3) << describe(second);
    EXPECT_TRUE(is_one_error_line(second.err));
    EXPECT_TRUE(has_text(second.err, "another mlt on this machine is working on m"))
        << describe(second);
    open_gate();
    ProcessResult r = first->wait(kTrainTimeout);
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    expect_good_run(started.out + r.out + second.out);
}

TEST_F(TrainFaultTest, ARunWithoutAnArchiveNeverPresentsThePreviousOne) {
    open_gate();
    ProcessResult r = mlt({"ssh", "train", "m"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    const std::string first_sha = sha256_of(local_archive("m"));
    ASSERT_FALSE(first_sha.empty());
    write_shell_model("m", "echo 'this run writes no archive'; exit 9\n");
    r = mlt({"ssh", "train", "m"});
    EXPECT_EQ(r.exit_code, 9) << describe(r);
    EXPECT_TRUE(has_text(r.out, "no archive")) << describe(r);
    EXPECT_EQ(sha256_of(local_archive("m")), first_sha) << "the local archive was replaced";
    EXPECT_FALSE(path_exists(remote() + "/m.mltk.zip"))
        << "the old remote archive was left in place";
    EXPECT_EQ(sha256_of(job_file("m", "previous/m.mltk.zip")), first_sha);
    r = mlt({"ssh", "status", "m"});
    EXPECT_TRUE(has_text(r.out, trim(read_or_empty(job_file("m", "run_id"))))) << describe(r);
}

// Each line is decided once and shown once across a reconnect: val_loss 0.5 (the best), 0.6
// and 0.7, then the link is cut; the host's guard decides 0.8, the third value without a new
// best, and stops the job; mlt reconnects by itself, follows on at the exact byte and names the
// rule's line.
TEST_F(TrainFaultTest, ARuleSeesEachLineOnceAcrossAReconnect) {
    write_shell_model("ruled",
                      "sleep 120 &\n"
                      "echo $! >> pids.txt\n"
                      "echo $$ >> pids.txt\n"
                      "echo val_loss=0.5; echo val_loss=0.6; echo val_loss=0.7\n"
                      "n=0; while [ ! -f gate ] && [ $n -lt 2400 ]; do sleep 0.05; "
                      "n=$((n+1)); done\n"
                      "echo val_loss=0.8\n"
                      "wait\n");
    write_model_settings("ruled",
                         "ssh:\n  train_cmd: \"sh {spec}\"\n"
                         "  watch: {stop_when: [{metric: 'val_loss=([0-9.]+)', patience: 3}]}\n");
    auto run = start_mlt({"ssh", "train", "ruled"});
    ASSERT_TRUE(run->wait_for_output("val_loss=0.7", kTrainTimeout)) << run->out() << run->err();
    relay_->cut();
    open_gate();
    const ProcessResult r = run->wait(kTrainTimeout);
    EXPECT_EQ(r.exit_code, 6) << describe(r) << job_state("ruled");
    EXPECT_TRUE(has_text(r.err, "lost while following the log; reconnecting")) << describe(r);
    EXPECT_TRUE(has_text(r.out + r.err, "(line: 'val_loss=0.8'; the guard on ")) << describe(r);
    for (const char* line : {"val_loss=0.5", "val_loss=0.6", "val_loss=0.7", "val_loss=0.8"})
        EXPECT_EQ(count_lines(r.out, line), 1u) << line << " on the terminal:\n" << r.out;
    EXPECT_EQ(relay_->cuts(), 1u);
    EXPECT_TRUE(wait_pids_gone(remote() + "/pids.txt")) << "the job's group lives on";
}

class TrainLeaveTest : public TrainFaultTest, public ::testing::WithParamInterface<int> {};

TEST_P(TrainLeaveTest, TermAndHupLeaveTheJobRunningForResume) {
    const int sig = GetParam();
    auto run = start_mlt({"ssh", "train", "m"});
    ASSERT_TRUE(run->wait_for_output("line 5/", kTrainTimeout)) << run->out() << run->err();
    const long pgid = job_pgid("m");
    run->signal(sig);
    ProcessResult left = run->wait(kEffectTimeout);
    EXPECT_EQ(left.exit_code, 128 + sig) << describe(left);
    EXPECT_TRUE(has_text(left.err, "STILL RUNNING")) << describe(left);
    EXPECT_TRUE(has_text(left.err, "train m --resume")) << describe(left);
    EXPECT_FALSE(group_members(pgid).empty()) << "the job was stopped";
    EXPECT_TRUE(path_exists(job_file("m", "lock")));
    EXPECT_FALSE(path_exists(remote() + "/shutdowns.txt"));
    open_gate();
    ProcessResult resumed = mlt({"ssh", "train", "m", "--resume"});
    ASSERT_EQ(resumed.exit_code, 0) << describe(resumed);
    expect_good_run(left.out + resumed.out);
}

INSTANTIATE_TEST_SUITE_P(Signals, TrainLeaveTest, ::testing::Values(SIGTERM, SIGHUP),
                         [](const ::testing::TestParamInfo<int>& sig) {
                             return std::string(sig.param == SIGTERM ? "SIGTERM" : "SIGHUP");
                         });

}  // namespace
}  // namespace mlt_test
