// Ctrl+C during `mlt ssh ... train` (SIGINT to the mlt process, as a terminal sends it):
// once stops the remote job and still collects; twice leaves at once and keeps the job.
#include <gtest/gtest.h>
#include <signal.h>

#include <string>

#include "harness/expect.h"
#include "harness/files.h"
#include "harness/train_fixture.h"

namespace mlt_test {
namespace {

class TrainInterruptTest : public TrainTest {
  protected:
    // A shell model "slowstop" whose stop after TERM lasts until the test opens its gate
    // (open_stop_gate(); at most 60 s), so that a stop is still under way when a second
    // Ctrl+C comes and when mlt has left; shutdown_cmds leave shutdown.log.
    void write_slow_stopping_model() const {
        write_shell_model("slowstop",
                          "trap 'echo \"model got TERM\"; n=0; "
                          "while [ ! -f stop-gate ] && [ $n -lt 1200 ]; do sleep 0.05; n=$((n+1)); "
                          "done; echo \"model exits\"; exit 143' "
                          "TERM\n"
                          "echo 'model running'\n"
                          "i=0; while [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done\n"
                          "echo 'model was never stopped'\n");
        write_model_settings("slowstop",
                             "ssh:\n"
                             "  train_cmd: \"sh {spec}\"\n"
                             "  shutdown_cmds: [\"echo shutdown >> shutdown.log\"]\n");
        write_user_settings();
    }
    // Lets the stop of "slowstop" end.
    void open_stop_gate() const { write_file(remote() + "/stop-gate", ""); }
    // The job of "slowstop" has not ended: mlt left without waiting for its stop.
    ::testing::AssertionResult still_stopping() const {
        if (path_exists(job_file("slowstop", "exit_status")))
            return ::testing::AssertionFailure() << "the job has ended: " << job_state("slowstop");
        return lacks_text(read_or_empty(job_file("slowstop", "console.log")), "model exits");
    }
};

constexpr int kExitInterrupted = 130;

TEST_F(TrainInterruptTest, CtrlCOnceStopsTheJobThenCollects) {
    copy_example();
    write_model_settings("logistic_model",
                         "ssh:\n"
                         "  train_cmd: \"/usr/bin/python3 {spec}\"\n"
                         "  shutdown_cmds: [\"echo shutdown >> shutdown.log\"]\n");
    write_user_settings();
    // 40 epochs of 0.3 s: far from done when the interrupt comes.
    auto run =
        start_mlt({"ssh", "train", "logistic_model", "--", "--epochs", "40", "--sleep", "0.3"});
    ASSERT_TRUE(run->wait_for_output("epoch 1/40 ", kEffectTimeout))
        << run->out() << run->err() << job_state("logistic_model");
    const long pgid = job_pgid("logistic_model");
    run->signal(SIGINT);
    ProcessResult r = run->wait(kTrainTimeout);

    EXPECT_EQ(r.exit_code, kExitInterrupted) << describe(r) << job_state("logistic_model");
    EXPECT_TRUE(has_text(r.err, "stopping the remote job")) << describe(r);
    EXPECT_TRUE(wait_group_gone(pgid));
    EXPECT_EQ(job_exit_status("logistic_model"), 143) << job_state("logistic_model");
    // Collected as far as it got: checkpoints and the whole console log, no archive.
    EXPECT_TRUE(path_exists(local_logs("logistic_model") + "/checkpoints/checkpoint-0001.json"))
        << describe(r);
    EXPECT_FALSE(path_exists(local_logs("logistic_model") + "/checkpoints/checkpoint-0040.json"));
    const std::string console = read_or_empty(local_console("logistic_model"));
    EXPECT_TRUE(has_text(console, "stopped by SIGTERM")) << describe(r);
    EXPECT_EQ(console, read_or_empty(job_file("logistic_model", "console.log")));
    EXPECT_FALSE(path_exists(local_archive("logistic_model")));
    EXPECT_EQ(read_or_empty(remote() + "/shutdown.log"), "shutdown\n") << describe(r);
    EXPECT_FALSE(path_exists(job_file("logistic_model", "lock"))) << job_state("logistic_model");
    auto runs = history();
    ASSERT_EQ(runs.size(), 1u) << read_or_empty(history_path());
    EXPECT_EQ(runs.back()["status"], "stopped") << read_or_empty(history_path());
    EXPECT_TRUE(wait_no_remote_processes());
}

TEST_F(TrainInterruptTest, CtrlCTwiceLeavesAtOnceAndResumeCollects) {
    write_slow_stopping_model();
    ProcessResult r;
    {
        auto run = start_mlt({"ssh", "train", "slowstop"});
        ASSERT_TRUE(run->wait_for_output("model running", kEffectTimeout))
            << run->out() << run->err() << job_state("slowstop");
        run->signal(SIGINT);
        ASSERT_TRUE(run->wait_for_output("stopping the remote job", kEffectTimeout, true))
            << run->out() << run->err();
        // The stop is under way (the model got its TERM): now the second Ctrl+C.
        ASSERT_TRUE(wait_console("slowstop", "model got TERM"));
        run->signal(SIGINT);
        r = run->wait(kTrainTimeout);
    }
    EXPECT_EQ(r.exit_code, kExitInterrupted) << describe(r);
    EXPECT_TRUE(still_stopping()) << "it waited for the stop\n" << describe(r);
    EXPECT_TRUE(has_text(r.err, "--resume")) << describe(r);
    // Said plainly: the stop that went out goes on without mlt, and how to stop the job
    // should it still run.
    EXPECT_TRUE(has_text(r.err, "the stop of the remote job of slowstop was sent")) << describe(r);
    EXPECT_TRUE(has_text(r.err, "stop slowstop")) << describe(r);
    // The remote state stays for --resume; nothing was collected or shut down.
    EXPECT_TRUE(path_exists(job_file("slowstop", "lock"))) << job_state("slowstop");
    EXPECT_TRUE(path_exists(job_file("slowstop", "console.log")));
    EXPECT_FALSE(path_exists(remote() + "/shutdown.log"));

    open_stop_gate();
    ProcessResult resumed = mlt({"ssh", "train", "slowstop", "--resume"});
    ASSERT_TRUE(wait_job_finished("slowstop"));
    EXPECT_EQ(job_exit_status("slowstop"), 143) << job_state("slowstop");
    EXPECT_EQ(resumed.exit_code, job_exit_status("slowstop")) << describe(resumed);
    EXPECT_EQ(read_or_empty(remote() + "/shutdown.log"), "shutdown\n") << describe(resumed);
    EXPECT_FALSE(path_exists(job_file("slowstop", "lock"))) << job_state("slowstop");
    const std::string console = read_or_empty(local_console("slowstop"));
    EXPECT_EQ(count_lines(console, "model running"), 1u) << console;
    EXPECT_EQ(count_lines(console, "model exits"), 1u) << console;
    EXPECT_EQ(console, read_or_empty(job_file("slowstop", "console.log")));
    EXPECT_TRUE(wait_no_remote_processes());
}

TEST_F(TrainInterruptTest, CtrlCTwiceInQuickSuccessionAlsoLeaves) {
    // A user hitting Ctrl+C twice fast: both signals arrive before mlt has reacted to the
    // first one. That is still "twice".
    write_slow_stopping_model();
    ProcessResult r;
    {
        auto run = start_mlt({"ssh", "train", "slowstop"});
        ASSERT_TRUE(run->wait_for_output("model running", kEffectTimeout))
            << run->out() << run->err() << job_state("slowstop");
        run->signal(SIGINT);
        // Taken, not merged with the next one; mlt has had no time to react yet.
        ASSERT_TRUE(run->wait_signal_taken(SIGINT, kEffectTimeout));
        run->signal(SIGINT);
        r = run->wait(kTrainTimeout);
    }
    EXPECT_EQ(r.exit_code, kExitInterrupted) << describe(r);
    EXPECT_TRUE(still_stopping()) << "it waited for the stop\n" << describe(r);
    EXPECT_TRUE(path_exists(job_file("slowstop", "lock"))) << describe(r) << job_state("slowstop");
    EXPECT_FALSE(path_exists(remote() + "/shutdown.log")) << "shut down although left";
    // Nothing was stopped: the job runs on, and the user is told so.
    EXPECT_TRUE(has_text(r.err, "STILL RUNNING")) << describe(r);
    EXPECT_FALSE(group_members(job_pgid("slowstop")).empty()) << job_state("slowstop");
}

TEST_F(TrainInterruptTest, CtrlCTwiceWhileAJobThatIgnoresTermIsStoppedLeavesAtOnce) {
    // The job ignores TERM (and says so in its console log), so the stop takes its whole grace
    // period and then KILLs. The second Ctrl+C comes once the TERM has arrived: mlt must not
    // wait for the rest, and must not claim the job runs on, since the stop it sent goes on.
    write_shell_model("stubborn",
                      "trap 'echo got TERM' TERM\n"
                      "echo 'model running'\n"
                      "i=0; while [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done\n");
    write_model_settings("stubborn", "ssh:\n  train_cmd: \"sh {spec}\"\n");
    write_user_settings();
    ProcessResult r;
    long pgid = 0;
    {
        auto run = start_mlt({"ssh", "train", "stubborn"});
        ASSERT_TRUE(run->wait_for_output("model running", kEffectTimeout))
            << run->out() << run->err() << job_state("stubborn");
        pgid = job_pgid("stubborn");
        run->signal(SIGINT);
        ASSERT_TRUE(wait_until(
            [&] {
                return has_text(read_or_empty(job_file("stubborn", "console.log")), "got TERM");
            },
            kEffectTimeout))
            << run->out() << run->err() << job_state("stubborn");
        run->signal(SIGINT);
        r = run->wait(kTrainTimeout);
    }
    EXPECT_EQ(r.exit_code, kExitInterrupted) << describe(r);
    EXPECT_TRUE(has_text(r.err,
                         "mlt: Ctrl+C again: leaving now; the stop of the remote job of "
                         "stubborn was sent (TERM, then KILL after 10 s) and goes on "
                         "without mlt"))
        << describe(r);
    EXPECT_TRUE(lacks_text(r.err, "STILL RUNNING")) << describe(r);
    // What the line says holds: the stop ends the job by itself.
    EXPECT_TRUE(wait_group_gone(pgid)) << job_state("stubborn");
}

}  // namespace
}  // namespace mlt_test
