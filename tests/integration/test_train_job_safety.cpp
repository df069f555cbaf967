// The job protocol against what an unlucky user or a hostile training does: a `stop` whose
// reply is late while a new run starts, a job that lives on without its lock, a training
// that leaves its process group, an archive the run did not write, a full remote disk, a
// stop of a finished job, and a KILL that mlt itself sent.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "harness/expect.h"
#include "harness/fault_relay.h"
#include "harness/files.h"
#include "harness/mlt_env.h"
#include "harness/process.h"
#include "harness/train_fixture.h"

namespace mlt_test {
namespace {

constexpr int kExitConflict = 3;

class TrainJobSafetyTest : public TrainTest {
  protected:
    void SetUp() override {
        TrainTest::SetUp();
        write_user_settings();
    }
    void TearDown() override {
        relay_.reset();
        TrainTest::TearDown();
        if (!mounted_.empty())
            run_process({"/bin/umount", "-l", mounted_}, {}, std::chrono::seconds(30));
    }
    // Writes a shell model trained with `sh {spec}`.
    void shell_model(const std::string& stem, const std::string& script) const {
        write_shell_model(stem, script);
        write_model_settings(stem, "ssh:\n  train_cmd: \"sh {spec}\"\n");
    }
    // A relay in front of sshd, trusted under its port; `-p port()` sends mlt through it.
    std::string start_relay() {
        relay_ = std::make_unique<FaultRelay>(sshd().port());
        append_file(default_known_hosts(), "[127.0.0.1]:" + std::to_string(relay_->port()) + " " +
                                               sshd().host_key_type_and_blob() + "\n");
        return std::to_string(relay_->port());
    }
    // A real small disk (tmpfs, `size`) as the remote dir; unmounted in TearDown. Fails the
    // test when it cannot be mounted.
    ::testing::AssertionResult mount_remote_disk(const std::string& size) {
        ProcessResult m =
            run_process({"/bin/mount", "-t", "tmpfs", "-o", "size=" + size, "tmpfs", remote()}, {},
                        std::chrono::seconds(30));
        if (m.exit_code != 0)
            return ::testing::AssertionFailure()
                   << "the test needs to mount a tmpfs (root): " << describe(m);
        mounted_ = remote();
        return ::testing::AssertionSuccess();
    }
    // Fills the remote disk to the last byte (head fails with "No space left").
    void fill_remote_disk() const {
        run_process(
            {"/bin/sh", "-c", "head -c 100000000 /dev/zero > \"$1\"", "sh", remote() + "/fill.bin"},
            current_environment(), kEffectTimeout);
    }
    std::string lock_run(const std::string& model) const {
        for (const auto& line : split_lines(read_or_empty(job_file(model, "lock"))))
            if (line.rfind("run=", 0) == 0) return line.substr(4);
        return "";
    }

    std::unique_ptr<FaultRelay> relay_;
    std::string mounted_;
};

// The first run, once TERMed, ends only when `gate` appears (so that a test can hold the
// stop there); with the argument `second` it prints and waits for `gate2`.
const char* const kRacerModel =
    "if [ \"$1\" = second ]; then echo 'second run'; i=0; while [ ! -f gate2 ] && [ $i -lt 400 ]; "
    "do sleep 0.05; i=$((i+1)); done; exit 0; fi\n"
    "trap 'echo term >> terms.txt; i=0; while [ ! -f gate ] && [ $i -lt 400 ]; do sleep 0.05; "
    "i=$((i+1)); done; exit 5' TERM\n"
    "echo 'first run'\n"
    "i=0; while [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done\n";

// Issue 16, item 2: a `stop` whose reply comes late (a slow link) must not release the lock
// of a run started meanwhile; the release belongs to the run it stopped.
TEST_F(TrainJobSafetyTest, ALateStopKeepsTheLockOfTheRunStartedMeanwhile) {
    shell_model("racer", kRacerModel);
    ProcessResult r = mlt({"ssh", "train", "racer", "--no-wait"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    ASSERT_TRUE(wait_console("racer", "first run"));
    const std::string port = start_relay();
    auto stop = start_mlt({"ssh", "-p", port, "stop", "racer"});
    ASSERT_TRUE(wait_until([&] { return path_exists(remote() + "/terms.txt"); }, kEffectTimeout))
        << stop->err() << job_state("racer");
    relay_->stall();  // the stop's reply (and whatever it sends next) waits in the relay
    write_file(remote() + "/gate", "");
    ASSERT_TRUE(wait_job_finished("racer")) << job_state("racer");

    // Meanwhile another mlt starts a new run.
    r = mlt({"ssh", "train", "racer", "--force", "--no-wait", "--", "second"});
    ASSERT_EQ(r.exit_code, 0) << describe(r) << job_state("racer");
    ASSERT_TRUE(wait_console("racer", "second run")) << job_state("racer");
    const std::string second = trim(read_or_empty(job_file("racer", "run_id")));
    ASSERT_EQ(lock_run("racer"), second) << job_state("racer");

    relay_->resume();
    ProcessResult s = stop->wait(kTrainTimeout);
    EXPECT_EQ(s.exit_code, 0) << describe(s);
    EXPECT_EQ(lock_run("racer"), second) << "the late stop released the new run's lock\n"
                                         << job_state("racer");
    // The new run keeps the model: a third run is refused.
    r = mlt({"ssh", "train", "racer", "--", "second"});
    EXPECT_EQ(r.exit_code, kExitConflict) << describe(r) << job_state("racer");
    write_file(remote() + "/gate2", "");
}

// A shell model whose training waits in a child `sleep`, recording its pid in pids.txt.
const char* const kBlockingModel =
    "if [ \"$1\" = quick ]; then echo 'quick run'; exit 0; fi\n"
    "sleep 1000 &\n"
    "echo $! >> pids.txt\n"
    "echo 'blocking'\n"
    "wait\n";

// Issue 16, item 2: whatever removed the lock, a job that still runs keeps its model.
TEST_F(TrainJobSafetyTest, ANewRunIsRefusedWhileTheOldJobRunsWithoutItsLock) {
    shell_model("blocker", kBlockingModel);
    ProcessResult r = mlt({"ssh", "train", "blocker", "--no-wait"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    ASSERT_TRUE(wait_console("blocker", "blocking"));
    const long pgid = job_pgid("blocker");
    const std::string first = trim(read_or_empty(job_file("blocker", "run_id")));
    ASSERT_EQ(::unlink(job_file("blocker", "lock").c_str()), 0);

    r = mlt({"ssh", "train", "blocker", "--", "quick"});
    EXPECT_EQ(r.exit_code, kExitConflict) << describe(r) << job_state("blocker");
    EXPECT_TRUE(contains_icase(r.err, "running job")) << describe(r);
    EXPECT_TRUE(lacks_text(r.out, "quick run")) << describe(r);
    EXPECT_EQ(trim(read_or_empty(job_file("blocker", "run_id"))), first) << job_state("blocker");
    EXPECT_FALSE(group_members(pgid).empty()) << "the running job was touched";

    r = mlt({"ssh", "status", "blocker"});
    EXPECT_TRUE(has_text(r.out, "running")) << describe(r);
    // --force still takes it over.
    r = mlt({"ssh", "train", "blocker", "--force", "--", "quick"});
    EXPECT_EQ(r.exit_code, 0) << describe(r) << job_state("blocker");
    EXPECT_TRUE(has_text(r.out, "quick run")) << describe(r);
    EXPECT_TRUE(wait_group_gone(pgid));
}

// The training starts a process that leaves the job's process group and session (setsid),
// as some launchers and daemonised savers do; once `late` appears it writes the archive.
// With `quick`, it prints and waits (bounded: 5 s) for that archive to be written.
const char* const kEscapingModel =
    "if [ \"$1\" = quick ]; then echo 'quick run'; i=0; while [ ! -f escaped-done ] && "
    "[ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done; exit 0; fi\n"
    "setsid sh -c 'echo $$ > escaper.pid; i=0; while [ ! -f late ] && [ $i -lt 1200 ]; do "
    "sleep 0.05; i=$((i+1)); done; [ -f late ] || exit 0; printf late > late.w && "
    "/usr/bin/python3 -m zipfile -c \"$MLT_ARCHIVE\" late.w; : > escaped-done' "
    "< /dev/null > /dev/null 2>&1 &\n"
    "i=0; while [ ! -s escaper.pid ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done\n"
    "echo 'escaped'\n"
    "i=0; while [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done\n";

// Issue 16, item 3: `stop` ends every process of the job, also one that left its process
// group; it cannot deliver an archive to the next run.
TEST_F(TrainJobSafetyTest, StopEndsAProcessThatLeftTheGroupAndItsArchiveIsNotTheNextRuns) {
    shell_model("escaper", kEscapingModel);
    ProcessResult r = mlt({"ssh", "train", "escaper", "--no-wait"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    ASSERT_TRUE(wait_console("escaper", "escaped"));
    const long escaper = std::strtol(read_or_empty(remote() + "/escaper.pid").c_str(), nullptr, 10);
    ASSERT_GT(escaper, 1);
    ASSERT_TRUE(process_alive(escaper));
    const std::vector<long> group = group_members(job_pgid("escaper"));
    ASSERT_EQ(std::find(group.begin(), group.end(), escaper), group.end()) << "it left the group";

    r = mlt({"ssh", "stop", "escaper"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(wait_until([&] { return !process_alive(escaper); }, kEffectTimeout))
        << "the process that left the group survived the stop";
    r = mlt({"ssh", "status", "escaper"});
    EXPECT_TRUE(lacks_text(r.out, "running")) << describe(r);

    // The next run writes no archive; whatever the escaped process does meanwhile is not
    // delivered as its result.
    auto next = start_mlt({"ssh", "train", "escaper", "--", "quick"});
    ASSERT_TRUE(next->wait_for_output("quick run", kTrainTimeout)) << next->err();
    write_file(remote() + "/late", "");
    ProcessResult n = next->wait(kTrainTimeout);
    EXPECT_EQ(n.exit_code, 0) << describe(n);
    EXPECT_FALSE(path_exists(local_archive("escaper"))) << "another run's archive delivered\n"
                                                        << describe(n);
}

// A training that leaves processes behind: one in the job's group, one that left it and
// ignores TERM. Both hold what the job held (a GPU, the bill) until mlt ends them.
const char* const kLeavingModel =
    "(while :; do sleep 0.05; done) & echo $! > stayer.pid\n"
    "setsid sh -c 'trap \"\" TERM; echo $$ > leaver.pid; while :; do sleep 0.05; done' &\n"
    "i=0; while [ ! -s leaver.pid ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done\n"
    "echo trained\n";

// Issue 20: once the training ends, the processes it left behind are stopped (TERM, then
// KILL) before its status is recorded, so nothing of the job outlives it.
TEST_F(TrainJobSafetyTest, ProcessesTheTrainingLeftBehindEndWithTheJob) {
    shell_model("leaver", kLeavingModel);
    ProcessResult r = mlt({"ssh", "train", "leaver"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(has_text(r.out, "trained")) << describe(r);
    EXPECT_TRUE(has_text(r.out, "mlt: the training left processes behind (")) << describe(r);
    const long stayer = std::strtol(read_or_empty(remote() + "/stayer.pid").c_str(), nullptr, 10);
    const long leaver = std::strtol(read_or_empty(remote() + "/leaver.pid").c_str(), nullptr, 10);
    ASSERT_GT(stayer, 1);
    ASSERT_GT(leaver, 1);
    // Gone when the run is over, not some time later: the status came after the sweep.
    EXPECT_FALSE(process_alive(stayer));
    EXPECT_FALSE(process_alive(leaver));
    EXPECT_EQ(trim(read_or_empty(job_file("leaver", "exit_status"))), "0");
}

// Issue 16, item 3: only an archive this run wrote is delivered: not a symlink, not a file
// older than the run's start.
TEST_F(TrainJobSafetyTest, AnArchiveTheRunDidNotWriteIsNotDelivered) {
    write_file(remote() + "/elsewhere.zip", "not this run's\n");
    shell_model("linker",
                "if [ \"$1\" = old ]; then printf old > o.w && /usr/bin/python3 -m zipfile -c "
                "\"$MLT_ARCHIVE\" o.w && touch -d '2001-01-01' \"$MLT_ARCHIVE\"; "
                "echo 'old archive'; exit 0; fi\n"
                "ln -s elsewhere.zip \"$MLT_ARCHIVE\"; echo 'linked'\n");
    ProcessResult r = mlt({"ssh", "train", "linker"});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(has_text(r.out, "linked")) << describe(r);
    EXPECT_FALSE(path_exists(local_archive("linker"))) << describe(r);
    EXPECT_TRUE(has_text(r.out, "no archive")) << describe(r);

    r = mlt({"ssh", "train", "linker", "--", "old"});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(has_text(r.out, "old archive")) << describe(r);
    EXPECT_FALSE(path_exists(local_archive("linker"))) << describe(r);
}

// Issue 16, item 6: a training that ignores TERM is KILLed by mlt's own stop (Ctrl+C): that
// is not an out-of-memory kill.
TEST_F(TrainJobSafetyTest, AKillSentByMltIsNotCalledOutOfMemory) {
    shell_model("stubborn",
                "trap '' TERM\necho 'ignoring TERM'\n"
                "i=0; while [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done\n");
    auto run = start_mlt({"ssh", "train", "stubborn"});
    ASSERT_TRUE(run->wait_for_output("ignoring TERM", kTrainTimeout)) << run->err();
    run->signal(SIGINT);
    ProcessResult r = run->wait(kTrainTimeout);
    EXPECT_TRUE(has_text(r.err + r.out, "137")) << describe(r) << job_state("stubborn");
    EXPECT_TRUE(lacks_text(r.err + r.out, "out of memory")) << describe(r);
    EXPECT_TRUE(has_text(r.err + r.out, "mlt's stop")) << describe(r);
}

// Issue 16, item 6: `stop` of a job that has finished but was not collected leaves it to
// --resume, which collects it.
TEST_F(TrainJobSafetyTest, StopOfAFinishedJobLeavesItsResultsToResume) {
    shell_model("done",
                "printf w > d.w && /usr/bin/python3 -m zipfile -c \"$MLT_ARCHIVE\" d.w\n"
                "echo 'done training'\n");
    ProcessResult r = mlt({"ssh", "train", "done", "--no-wait"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    ASSERT_TRUE(wait_job_finished("done")) << job_state("done");

    r = mlt({"ssh", "stop", "done"});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(has_text(r.out + r.err, "--resume")) << describe(r);
    EXPECT_TRUE(path_exists(job_file("done", "lock"))) << job_state("done");

    r = mlt({"ssh", "train", "done", "--resume"});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(valid_zip(local_archive("done"))) << describe(r);
    EXPECT_FALSE(path_exists(job_file("done", "lock"))) << job_state("done");
}

// Issue 16, item 5: a full remote disk while taking the lock is said as such, and leaves no
// lock that would block the model.
TEST_F(TrainJobSafetyTest, AFullRemoteDiskAtTheLockIsRefusedAndLeavesNoLock) {
    shell_model("m", "echo 'trained'\n");
    ASSERT_TRUE(mount_remote_disk("256k"));
    fill_remote_disk();
    ProcessResult r = mlt({"ssh", "train", "m"});
    EXPECT_EQ(r.exit_code, 1) << describe(r);
    EXPECT_TRUE(is_one_error_line(r.err)) << describe(r);
    EXPECT_TRUE(contains_icase(r.err, "no space left on the remote")) << describe(r);
    EXPECT_TRUE(lacks_text(r.err, "did not finish")) << describe(r);
    EXPECT_FALSE(path_exists(job_file("m", "lock"))) << job_state("m");

    r = mlt({"ssh", "train", "m", "--resume"});
    EXPECT_EQ(r.exit_code, kExitConflict) << describe(r);
    EXPECT_TRUE(has_text(r.err, "no job of m")) << describe(r);

    // Once there is room, the model trains.
    ASSERT_EQ(::unlink((remote() + "/fill.bin").c_str()), 0);
    r = mlt({"ssh", "train", "m"});
    EXPECT_EQ(r.exit_code, 0) << describe(r) << job_state("m");
    EXPECT_TRUE(has_text(r.out, "trained")) << describe(r);
}

// Issue 16, item 5: a training that fills the remote disk: mlt names the full disk (not a
// SIGKILL), and still collects its status, archive and logs.
TEST_F(TrainJobSafetyTest, AFullRemoteDiskDuringTheRunIsNamedAndTheResultsAreCollected) {
    shell_model("filler",
                "mkdir -p \"$MLT_LOG_DIR\" && echo 'filler log' > \"$MLT_LOG_DIR/train.log\"\n"
                "printf w > f.w && /usr/bin/python3 -m zipfile -c \"$MLT_ARCHIVE\" f.w\n"
                "echo 'filling the disk'\n"
                "head -c 100000000 /dev/zero > fill.bin || exit 1\n");
    ASSERT_TRUE(mount_remote_disk("1m"));
    ProcessResult r = mlt({"ssh", "train", "filler"});
    EXPECT_EQ(r.exit_code, 1) << describe(r) << job_state("filler");
    EXPECT_TRUE(contains_icase(r.err, "no space left on the remote")) << describe(r);
    EXPECT_TRUE(lacks_text(r.err, "SIGKILL")) << describe(r);
    EXPECT_TRUE(valid_zip(local_archive("filler"))) << describe(r);
    EXPECT_EQ(read_or_empty(local_logs("filler") + "/train.log"), "filler log\n") << describe(r);
    // The training's own words on the full disk reached the console log.
    EXPECT_TRUE(has_text(read_or_empty(local_console("filler")), "No space left")) << describe(r);
}

}  // namespace
}  // namespace mlt_test
