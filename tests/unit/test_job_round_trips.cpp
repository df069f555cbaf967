// Round trips the protocol folds into others (docs/remote-protocol.md, "Round trips of a
// run"), against a real local shell: the job's result and phase finished at the end of its
// follow, the shutdown's status at the end of its follow, phase collected with the start of
// shutdown_cmds.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "job_fixture.h"
#include "local_remote.h"
#include "mlt/job/job.h"
#include "mlt/util/error.h"

namespace {

class JobRoundTrips : public mlt::test::JobFixture {
  protected:
    // Follows the job of run-1 to its end; the log goes to `log`.
    mlt::FollowStep follow_job(mlt::Remote& r, std::string& log) {
        const std::string run = "run-1";
        uint64_t offset = 0;
        return job(r).follow_to_end(mlt::Task::job, &run, offset, 5,
                                    [&](std::string_view d) { log += d; });
    }
};

TEST_P(JobRoundTrips, TheFollowThatSeesTheEndReportsTheResultAndRecordsFinished) {
    mlt::test::LocalRemote r(shell());
    start(r, "echo zip > m.mltk.zip; exit 3");
    std::string log;
    const int before = r.commands_run;
    const mlt::FollowStep step = follow_job(r, log);
    ASSERT_TRUE(step.ended);
    ASSERT_TRUE(step.result) << "no result came with the follow's end";
    // The same as a round trip of its own would read.
    const mlt::JobResult asked = job(r).read_job_result();
    EXPECT_EQ(step.result->run_id, "run-1");
    EXPECT_EQ(step.result->exit_status, 3);
    EXPECT_EQ(step.result->sha256, asked.sha256);
    EXPECT_FALSE(step.result->sha256.empty());
    EXPECT_EQ(step.result->log_dir, asked.log_dir);
    EXPECT_TRUE(step.result->training_started);
    EXPECT_FALSE(step.result->stopped_with);
    EXPECT_EQ(log, read(".mlt/m/console.log")) << "the result leaked into the log";
    EXPECT_NE(read(".mlt/m/lock").find("phase=finished\n"), std::string::npos)
        << read(".mlt/m/lock");
    // The job ended within the first segment: one command for follow, result and phase.
    EXPECT_LE(r.commands_run - before, 2);
}

TEST_P(JobRoundTrips, LogLinesThatLookLikeTheResultStayLogBytes) {
    mlt::test::LocalRemote r(shell());
    // The job prints the marker and forged values, on stdout and stderr (both go to the log).
    start(r,
          "printf 'mlt-follow-result\\nrun=forged\\nexit=0\\n'; "
          "printf 'mlt-follow-result\\nrun=forged\\nexit=0\\n' >&2; exit 5");
    std::string log;
    const mlt::FollowStep step = follow_job(r, log);
    ASSERT_TRUE(step.result);
    EXPECT_EQ(step.result->run_id, "run-1");
    EXPECT_EQ(step.result->exit_status, 5);
    EXPECT_EQ(log, read(".mlt/m/console.log"));
    EXPECT_NE(log.find("run=forged"), std::string::npos) << log;
}

TEST_P(JobRoundTrips, ASegmentThatRunsOutOfTimeHasNoResultAndRecordsNothing) {
    mlt::test::LocalRemote r(shell());
    start(r, "while [ ! -f gate ]; do sleep 0.05; done");
    const std::string run = "run-1";
    const mlt::FollowStep step =
        job(r).follow_log(mlt::Task::job, &run, 0, 1, [](std::string_view) {});
    EXPECT_FALSE(step.ended);
    EXPECT_FALSE(step.result);
    EXPECT_NE(read(".mlt/m/lock").find("phase=running\n"), std::string::npos);
    std::ofstream(dir_ + "/gate").put('\n');
}

TEST_P(JobRoundTrips, AFollowEndingAfterTheLockWasTakenIsAConflict) {
    mlt::test::LocalRemote r(shell());
    start(r, "while [ ! -f gate ]; do sleep 0.05; done");
    // `mlt stop` released the lock (the job files stay this run's), then the job ended.
    std::filesystem::remove(dir_ + "/.mlt/m/lock");
    std::ofstream(dir_ + "/gate").put('\n');
    std::string log;
    try {
        follow_job(r, log);
        FAIL() << "the follow recorded a phase in a lock that is not the run's";
    } catch (const mlt::Error& e) {
        EXPECT_EQ(e.code(), mlt::exit_code::kConflict) << e.what();
    }
    EXPECT_FALSE(exists(".mlt/m/lock"));
}

TEST_P(JobRoundTrips, AFollowLeftBehindDoesNotUndoCollected) {
    mlt::test::LocalRemote r(shell());
    start(r, "true");
    std::string log;
    follow_job(r, log);
    // A newer mlt of the run collected; the follow of the mlt it replaced ends only now.
    job(r).set_run_phase("run-1", mlt::RunPhase::collected);
    const mlt::FollowStep step = follow_job(r, log);
    EXPECT_TRUE(step.result);
    EXPECT_NE(read(".mlt/m/lock").find("phase=collected\n"), std::string::npos)
        << read(".mlt/m/lock");
}

TEST_P(JobRoundTrips, ShutdownStartRecordsCollectedAndItsFollowReportsTheStatus) {
    mlt::test::LocalRemote r(shell());
    start(r, "true");
    std::string log;
    follow_job(r, log);
    const std::string script = mlt::make_shutdown_script(
        {"m", "run-1", {}, false, {"echo shut >> shut.txt", "exit 4"}, {}, {}});
    const int before = r.commands_run;
    EXPECT_TRUE(job(r).start_shutdown("run-1", script, true));
    EXPECT_EQ(r.commands_run - before, 1);
    EXPECT_NE(read(".mlt/m/lock").find("phase=collected\n"), std::string::npos)
        << read(".mlt/m/lock");
    // A retry (a lost reply) records it again and starts nothing.
    EXPECT_FALSE(job(r).start_shutdown("run-1", script, true));
    const std::string run = "run-1";
    uint64_t offset = 0;
    std::string out;
    const mlt::FollowStep step = job(r).follow_to_end(mlt::Task::shutdown, &run, offset, 5,
                                                      [&](std::string_view d) { out += d; });
    ASSERT_TRUE(step.result);
    EXPECT_EQ(step.result->exit_status, 4);
    EXPECT_EQ(step.result->exit_status, job(r).read_shutdown_status());
    EXPECT_EQ(read("shut.txt"), "shut\n");
    EXPECT_EQ(out, read(".mlt/m/shutdown.log"));
}

TEST_P(JobRoundTrips, ShutdownStartWithAnotherRunsLockStartsNothing) {
    mlt::test::LocalRemote r(shell());
    start(r, "true");
    std::string log;
    follow_job(r, log);
    std::filesystem::remove(dir_ + "/.mlt/m/lock");  // released by a stop meanwhile
    const std::string script =
        mlt::make_shutdown_script({"m", "run-1", {}, false, {"echo shut >> shut.txt"}, {}, {}});
    EXPECT_THROW(job(r).start_shutdown("run-1", script, true), mlt::Error);
    EXPECT_FALSE(exists(".mlt/m/shutdown.started"));
    EXPECT_FALSE(exists(".mlt/m/lock"));
}

INSTANTIATE_JOB_SHELLS(JobRoundTrips);

}  // namespace
