// watch.on_failure against real sshd servers: a failed or lost attempt is judged by its last
// console lines. `restart` starts a failed job again in place (once with max_restarts 0, then
// counted), `no_restart` ends a lost one that max_restarts would restart, the defaults can be
// turned off, and `exclude_host` leaves the host for a standby one with the attempt's
// checkpoints, marks it bad in the history (shown by `jobs`), and no later run takes it.
#include <gtest/gtest.h>
#include <signal.h>

#include <memory>
#include <string>

#include "harness/expect.h"
#include "harness/files.h"
#include "harness/test_sshd.h"
#include "harness/train_fixture.h"

namespace mlt_test {
namespace {

// Attempt 1 saves a checkpoint, prints `words`, then does `end` (exit N, or wait to be
// killed); a later attempt says what it resumes from and ends with `later`.
std::string failing_model(const std::string& words, const std::string& end,
                          const std::string& later = "exit 0") {
    return "a=${MLT_ATTEMPT:-1}\n"
           "echo \"attempt $a begins\"\n"
           "if [ -e \"$MLT_LOG_DIR/ckpt\" ]; then echo \"attempt $a resumes from $(cat "
           "\"$MLT_LOG_DIR/ckpt\")\"; fi\n"
           "echo \"weights of attempt $a\" > \"$MLT_LOG_DIR/.t\" && mv \"$MLT_LOG_DIR/.t\" "
           "\"$MLT_LOG_DIR/ckpt\"\n"
           "if [ -z \"$MLT_ATTEMPT\" ]; then echo '" +
           words + "'; " + end +
           "; fi\n"
           "echo \"attempt $a done\"\n" +
           later + "\n";
}

const char* const kWaitToBeKilled =
    "echo waiting; i=0; while [ $i -lt 2400 ]; do sleep 0.05; i=$((i+1)); done; exit 9";

class TrainOnFailureTest : public TrainTest {
  protected:
    void SetUp() override {
        TrainTest::SetUp();
        write_model_settings("m", "ssh:\n  train_cmd: \"sh {spec}\"\n");
    }
    // Waits for attempt 1 to wait, then kills its process group with KILL: lost.
    void lose_the_job() {
        ASSERT_TRUE(wait_console("m", "waiting"));
        const long pgid = job_pgid("m");
        ASSERT_GT(pgid, 0);
        ASSERT_EQ(::kill(static_cast<pid_t>(-pgid), SIGKILL), 0);
        ASSERT_TRUE(wait_group_gone(pgid));
    }
    std::string console() const { return read_or_empty(local_console("m")); }
};

TEST_F(TrainOnFailureTest, ARestartRuleStartsAFailedJobAgainOnceWithMaxRestarts0) {
    write_user_settings(
        "  watch:\n    on_failure: [{match: 'NCCL watchdog .*timeout', then: restart}]\n");
    write_shell_model("m", failing_model("[E] NCCL watchdog thread timeout", "exit 3"));
    const ProcessResult r = mlt({"ssh", "train", "m"});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(has_text(r.out + r.err,
                         "failed with exit status 3; restarting it as attempt 2: watch.on_failure "
                         "rule #1 'NCCL watchdog .*timeout' (restart) matched the line '[E] NCCL "
                         "watchdog thread timeout'"))
        << describe(r);
    const std::string run = trim(read_or_empty(job_file("m", "run_id")));
    const std::string log = console();
    EXPECT_EQ(count_lines(log, "==== mlt: attempt 2 of run " + run +
                                   " (the job failed with exit status 3) ===="),
              1u)
        << log;
    // In place: the checkpoint attempt 1 saved is there for attempt 2.
    EXPECT_EQ(count_lines(log, "attempt 2 resumes from weights of attempt 1"), 1u) << log;
    EXPECT_EQ(count_lines(log, "attempt 2 done"), 1u) << log;
    EXPECT_EQ(trim(read_or_empty(job_file("m", "exit_status.1"))), "3") << job_state("m");
    const auto runs = history();
    ASSERT_FALSE(runs.empty());
    EXPECT_EQ(runs.back().at("status"), "success");
    EXPECT_EQ(runs.back().at("attempt"), "2");
}

TEST_F(TrainOnFailureTest, ARestartRuleCountsInMaxRestarts) {
    write_user_settings(
        "  max_restarts: 1\n  watch:\n    on_failure: [{match: 'flaky', then: "
        "restart}]\n");
    write_shell_model("m", failing_model("flaky data loader", "exit 3",
                                         "echo 'flaky data loader again'; exit 3"));
    const ProcessResult r = mlt({"ssh", "train", "m"});
    EXPECT_NE(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(has_text(r.out + r.err,
                         "failed with exit status 3; not restarted: the 1 restart(s) of "
                         "max_restarts are used up (watch.on_failure rule #1 'flaky'"))
        << describe(r);
    EXPECT_EQ(lines_starting(console(), "==== mlt: attempt ").size(), 1u) << console();
    EXPECT_EQ(count_lines(console(), "attempt 2 done"), 1u) << console();
}

TEST_F(TrainOnFailureTest, NoRestartEndsALostJobThatMaxRestartsWouldRestart) {
    write_user_settings(
        "  max_restarts: 2\n  watch:\n    on_failure: [{match: 'CUDA out of "
        "memory', then: no_restart}]\n");
    write_shell_model("m", failing_model("torch.OutOfMemoryError: CUDA out of memory. Tried to "
                                         "allocate 2.00 GiB",
                                         kWaitToBeKilled));
    auto train = start_mlt({"ssh", "train", "m"});
    lose_the_job();
    const ProcessResult r = train->wait(kTrainTimeout);
    EXPECT_NE(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(has_text(r.out + r.err,
                         "was lost (its processes are gone, no exit status); the run ends "
                         "here, not restarted: watch.on_failure rule #1 'CUDA out of memory'"))
        << describe(r);
    EXPECT_TRUE(has_text(r.out + r.err,
                         "(no_restart) matched the line 'torch.OutOfMemoryError: CUDA out "
                         "of memory."))
        << describe(r);
    EXPECT_TRUE(lines_starting(console(), "==== mlt: attempt ").empty()) << console();
    const auto runs = history();
    ASSERT_FALSE(runs.empty());
    EXPECT_TRUE(has_text(runs.back().at("on_failure"), "(no_restart)"))
        << read_or_empty(history_path());
}

// A job that trained on may have printed a caught out-of-memory error before it was lost (a
// preemption): the default no_restart rules judge only a job that failed by itself.
TEST_F(TrainOnFailureTest, TheDefaultNoRestartRulesLeaveALostJobToMaxRestarts) {
    write_user_settings("  max_restarts: 1\n");
    write_shell_model("m", failing_model("CUDA out of memory", kWaitToBeKilled));
    auto train = start_mlt({"ssh", "train", "m"});
    lose_the_job();
    const ProcessResult r = train->wait(kTrainTimeout);
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(has_text(r.out + r.err, "restarting it as attempt 2 (max_restarts 1)"))
        << describe(r);
    EXPECT_EQ(lines_starting(console(), "==== mlt: attempt 2 of run ").size(), 1u) << console();
    EXPECT_TRUE(has_text(console(), "(the job was lost) ====")) << console();
}

TEST_F(TrainOnFailureTest, AnExcludeHostRuleWithoutAStandbyEndsTheRunAndMarksTheHost) {
    write_user_settings("");
    write_shell_model("m", failing_model("NVRM: Xid 79", "exit 1"));
    const ProcessResult r = mlt({"ssh", "train", "m"});
    EXPECT_EQ(r.exit_code, 1) << describe(r);
    EXPECT_TRUE(has_text(r.out + r.err,
                         "but no standby host is left (fallback_hosts, "
                         "provision_cmd): the run ends here; the host is marked "
                         "bad for 24 h"))
        << describe(r);
    const auto runs = history();
    ASSERT_FALSE(runs.empty());
    EXPECT_EQ(runs.back().at("status"), "failed") << read_or_empty(history_path());
    EXPECT_TRUE(
        has_text(runs.back().at("excluded_hosts"), "127.0.0.1:" + std::to_string(sshd().port())))
        << read_or_empty(history_path());
}

// Host A is the test's sshd, B a standby of its own; each has its own remote dir and a log dir
// inside it, so that only what came home reaches B.
class TrainExcludeHostTest : public TrainOnFailureTest {
  protected:
    void SetUp() override {
        TrainOnFailureTest::SetUp();
        standby_ = std::make_unique<TestSshd>();
        standby_->authorize_key_file(sshd().client_key_path() + ".pub");
        append_file(default_known_hosts(), "[127.0.0.1]:" + std::to_string(standby_->port()) + " " +
                                               standby_->host_key_type_and_blob() + "\n");
    }
    void TearDown() override {
        standby_.reset();
        TrainOnFailureTest::TearDown();
    }
    // The settings with `first` as the host and `standby` as the one fallback host.
    void write_settings(const TestSshd& first, const TestSshd& standby) const {
        env().write_settings("ssh:\n  remote_dir: \"" + first.remote_dir() +
                             "\"\n  remote_log_dir: \"logs/{model}\"\n  compression: none\n"
                             "  connection:\n    hostname: 127.0.0.1\n    port: " +
                             std::to_string(first.port()) + "\n    username: " + first.user() +
                             "\n    key_filename: \"" + sshd().client_key_path() +
                             "\"\n  fallback_hosts: [\"" + first.user() + "@127.0.0.1:" +
                             std::to_string(standby.port()) + "/" + standby.remote_dir() + "\"]\n");
    }
    std::unique_ptr<TestSshd> standby_;
};

TEST_F(TrainExcludeHostTest, AGpuFaultLeavesTheHostWithItsCheckpointsAndMarksItBad) {
    write_settings(sshd(), *standby_);
    write_shell_model("m", failing_model("NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the "
                                         "bus",
                                         "exit 1"));
    ProcessResult r = mlt({"ssh", "train", "m"});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    const std::string a = "127.0.0.1:" + std::to_string(sshd().port());
    EXPECT_TRUE(
        has_text(r.out + r.err, "failed with exit status 1: the default watch.on_failure rule"))
        << describe(r);
    EXPECT_TRUE(has_text(r.out + r.err,
                         "(exclude_host) matched the line 'NVRM: Xid "
                         "(PCI:0000:3b:00): 79, GPU has fallen off the bus'; "
                         "leaving "))
        << describe(r);
    EXPECT_TRUE(has_text(r.out + r.err, a + " (marked bad for 24 h) for a standby host"))
        << describe(r);
    EXPECT_TRUE(has_text(r.out, a + ", which the run left")) << describe(r);
    // Attempt 2 ran on B from the checkpoint of attempt 1, which came home from A.
    const std::string b_console = read_or_empty(standby_->remote_dir() + "/.mlt/m/console.log");
    EXPECT_EQ(count_lines(b_console, "attempt 2 resumes from weights of attempt 1"), 1u)
        << b_console << describe(r);
    EXPECT_EQ(read_or_empty(local_logs("m") + "/ckpt"), "weights of attempt 2\n");
    auto runs = history();
    ASSERT_FALSE(runs.empty());
    EXPECT_EQ(runs.back().at("status"), "success") << read_or_empty(history_path());
    EXPECT_TRUE(has_text(runs.back().at("excluded_hosts"), a)) << read_or_empty(history_path());
    r = mlt({"jobs"});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(has_text(r.out, "is marked bad until ")) << describe(r);
    EXPECT_TRUE(has_text(r.out, a)) << describe(r);

    // `status` on A says so too.
    r = mlt({"ssh", "status", "m"});
    EXPECT_TRUE(has_text(r.out, a + " is marked bad until ")) << describe(r);

    // A later run on B whose job meets the same fault does not go back to A.
    write_settings(*standby_, sshd());
    r = mlt({"ssh", "train", "m", "--clean"});
    EXPECT_NE(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(has_text(r.out + r.err, "is not taken: marked bad until ")) << describe(r);
    EXPECT_TRUE(has_text(r.out + r.err, "no standby host left")) << describe(r);
    // The run stays with B, where its job ended: collected there, B named as its host.
    EXPECT_TRUE(has_text(r.out, "the remote machine " + standby_->user() + "@127.0.0.1:" +
                                    std::to_string(standby_->port()) + " may still be billing"))
        << describe(r);
}

}  // namespace
}  // namespace mlt_test
