// A job lost with its processes (kill -9 of its process group: a host restart, the OOM killer
// taking the wrapper) is restarted in place as attempt 2 of the same run, by `train --resume`
// or, with --max-restarts, by the `train` that follows it.
#include <gtest/gtest.h>
#include <signal.h>

#include <string>

#include "harness/expect.h"
#include "harness/files.h"
#include "harness/train_fixture.h"

namespace mlt_test {
namespace {

// Attempt 1 says so and waits (bounded); a later attempt says which it is and ends.
const char* const kLossyModel =
    "echo \"attempt ${MLT_ATTEMPT:-1} begins\"\n"
    "if [ -z \"$MLT_ATTEMPT\" ]; then echo waiting; i=0; while [ $i -lt 2400 ]; do sleep 0.05; "
    "i=$((i+1)); done; exit 9; fi\n"
    "echo \"attempt $MLT_ATTEMPT done\"\n";

const char* const kMarker = "==== mlt: attempt 2 of run ";

class TrainRestartTest : public TrainTest {
  protected:
    void SetUp() override {
        TrainTest::SetUp();
        write_user_settings();
        write_shell_model("lossy", kLossyModel);
        write_model_settings("lossy", "ssh:\n  train_cmd: \"sh {spec}\"\n");
    }
    // Waits for attempt 1, then kills its whole process group with KILL: nothing recorded.
    void lose_the_job() {
        ASSERT_TRUE(wait_console("lossy", "waiting"));
        const long pgid = job_pgid("lossy");
        ASSERT_GT(pgid, 0);
        ASSERT_EQ(::kill(static_cast<pid_t>(-pgid), SIGKILL), 0);
        ASSERT_TRUE(wait_group_gone(pgid));
    }
    // Both attempts in the console log, the marker line once between them.
    void expect_two_attempts(const std::string& log) const {
        ASSERT_EQ(lines_starting(log, kMarker).size(), 1u) << log;
        const auto marker = log.find(kMarker);
        EXPECT_LT(log.find("attempt 1 begins\n"), marker) << log;
        EXPECT_GT(log.find("attempt 2 done\n"), marker) << log;
        EXPECT_EQ(count_lines(log, "attempt 2 done"), 1u) << log;
    }
};

TEST_F(TrainRestartTest, ResumeRestartsALostJobAsAttempt2OfTheSameRun) {
    ProcessResult r = mlt({"ssh", "train", "lossy", "--no-wait"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    const std::string run = trim(read_or_empty(job_file("lossy", "run_id")));
    lose_the_job();
    r = mlt({"ssh", "status", "lossy"});
    EXPECT_TRUE(has_text(r.out, "lost")) << describe(r);

    r = mlt({"ssh", "train", "lossy", "--resume"});
    EXPECT_EQ(r.exit_code, 0) << describe(r) << job_state("lossy");
    EXPECT_TRUE(has_text(r.err + r.out, "as attempt 2")) << describe(r);
    EXPECT_EQ(trim(read_or_empty(job_file("lossy", "run_id"))), run) << "another run";
    expect_two_attempts(read_or_empty(job_file("lossy", "console.log")));
    expect_two_attempts(read_or_empty(local_console("lossy")));
    EXPECT_FALSE(path_exists(job_file("lossy", "lock"))) << job_state("lossy");
}

TEST_F(TrainRestartTest, MaxRestartsLetsTheFollowingTrainRestartItsLostJob) {
    auto train = start_mlt({"ssh", "train", "lossy", "--max-restarts", "1"});
    lose_the_job();
    ProcessResult r = train->wait(kTrainTimeout);
    EXPECT_EQ(r.exit_code, 0) << describe(r) << job_state("lossy");
    EXPECT_TRUE(has_text(r.err + r.out, "restarting it as attempt 2 (max_restarts 1)"))
        << describe(r);
    expect_two_attempts(read_or_empty(local_console("lossy")));
}

}  // namespace
}  // namespace mlt_test
