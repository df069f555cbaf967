// The restart of a lost job as the next attempt of its run, against a real local shell.
#include <gtest/gtest.h>
#include <signal.h>

#include <future>
#include <string>
#include <vector>

#include "job_fixture.h"
#include "local_remote.h"
#include "mlt/job/job.h"
#include "mlt/job/status.h"
#include "mlt/util/error.h"
#include "wait_until.h"

namespace {

using mlt::test::group_alive;
using mlt::test::wait_until;

class JobRestart : public mlt::test::JobFixture {
  protected:
    // Starts a job whose first attempt prints and waits; a later attempt says which it is
    // and ends. Every launch is counted in launches.txt. Then the job is lost: its group is
    // killed with KILL (a host restart, the OOM killer), no exit status is recorded.
    long start_and_lose(mlt::test::LocalRemote& r) {
        const long pgid = start(r,
                                "echo \"launch ${MLT_ATTEMPT:-1}\" >> launches.txt; "
                                "if [ -n \"$MLT_ATTEMPT\" ]; then echo \"attempt $MLT_ATTEMPT\"; "
                                "exit 0; fi; echo first; sleep 1000");
        EXPECT_TRUE(wait_until([&] {
            return exists(".mlt/m/console.log") &&
                   read(".mlt/m/console.log").find("first\n") != std::string::npos;
        }));
        ::kill(static_cast<pid_t>(-pgid), SIGKILL);
        EXPECT_TRUE(wait_until([&] { return !group_alive(pgid); }));
        return pgid;
    }
};

TEST_P(JobRestart, ALostJobIsRestartedOnceAsTheNextAttemptOfItsRun) {
    mlt::test::LocalRemote r(shell());
    const long first = start_and_lose(r);
    ASSERT_EQ(job(r).query_jobs().at(0).state, mlt::JobState::lost);
    // Concurrent restarts (two --resume at once, a retry after a lost reply) start one job.
    std::vector<std::future<long>> restarts;
    for (int i = 0; i < 6; ++i)
        restarts.push_back(std::async(std::launch::async, [this] {
            mlt::test::LocalRemote shell(this->shell());
            return job(shell).restart_job("run-1", 2);
        }));
    std::vector<long> groups;
    for (auto& f : restarts) groups.push_back(f.get());
    for (long g : groups) EXPECT_EQ(g, groups.front());
    EXPECT_NE(groups.front(), first);
    std::string log;
    const std::string run = "run-1";
    mlt::test::follow_to_end(r, dir_, log, &run);
    EXPECT_EQ(read("launches.txt"), "launch 1\nlaunch 2\n");
    // The console log goes on: the first attempt, one marker line, the second.
    const std::string marker = "==== mlt: attempt 2 of run run-1 (the job was lost) ====\n";
    const auto at = log.find(marker);
    ASSERT_NE(at, std::string::npos) << log;
    EXPECT_EQ(log.find(marker, at + 1), std::string::npos) << log;
    EXPECT_LT(log.find("first\n"), at);
    EXPECT_GT(log.find("attempt 2\n"), at);
    EXPECT_EQ(job(r).read_job_result().exit_status, 0);
    EXPECT_NE(read(".mlt/m/lock").find("attempt=2\n"), std::string::npos);
    EXPECT_EQ(job(r).query_jobs().at(0).attempt, 2);
}

TEST_P(JobRestart, OnlyALostJobIsRestarted) {
    mlt::test::LocalRemote r(shell());
    const long pgid = start(r, "sleep 1000");
    try {
        job(r).restart_job("run-1", 2);
        ADD_FAILURE() << "a running job was restarted";
    } catch (const mlt::Error& e) {
        EXPECT_EQ(e.kind(), mlt::ErrorKind::conflict);
        EXPECT_NE(std::string(e.what()).find("it is running"), std::string::npos) << e.what();
    }
    EXPECT_TRUE(group_alive(pgid));
    EXPECT_FALSE(exists(".mlt/m/started.2"));
    // Another run's job dir: refused as well.
    EXPECT_THROW(job(r).restart_job("run-2", 2), mlt::Error);
}

TEST_P(JobRestart, AFinishedAttemptIsNotRestartedAgain) {
    mlt::test::LocalRemote r(shell());
    start_and_lose(r);
    job(r).restart_job("run-1", 2);
    std::string log;
    const std::string run = "run-1";
    mlt::test::follow_to_end(r, dir_, log, &run);
    EXPECT_THROW(job(r).restart_job("run-1", 3), mlt::Error);
    EXPECT_EQ(read("launches.txt"), "launch 1\nlaunch 2\n");
}

INSTANTIATE_JOB_SHELLS(JobRestart);

}  // namespace
