// Gang: the barrier of a multi-node run opens once every node arrived or passed, and at once
// for all when one fails; the first failure is kept.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "mlt/train/nodes/gang.h"
#include "mlt/train/nodes/gang_resume.h"
#include "mlt/util/error.h"

namespace mlt {
namespace {

TEST(Gang, TheBarrierOpensOnceEveryNodeArrived) {
    Gang gang(3);
    EXPECT_FALSE(gang.arrive(0, 0.01).has_value());  // the others are not there yet
    gang.passed(2);                                  // a resumed node that needs no barrier
    std::optional<bool> one;
    std::thread t([&] { one = gang.arrive(1, 30); });
    t.join();
    ASSERT_TRUE(one.has_value());
    EXPECT_TRUE(*one);
    EXPECT_EQ(gang.arrive(0, 0.01), std::optional<bool>(true));
    EXPECT_FALSE(gang.stopping());
}

TEST(Gang, AFailureOpensTheBarrierWithFalseAndTheFirstOneIsKept) {
    Gang gang(2);
    std::optional<bool> zero;
    std::thread t([&] { zero = gang.arrive(0, 30); });
    gang.fail(1, "h1", 3);
    t.join();
    ASSERT_TRUE(zero.has_value());
    EXPECT_FALSE(*zero);
    gang.fail(0, "h0", 143);  // stopped because of rank 1: not the root cause
    EXPECT_TRUE(gang.stopping());
    ASSERT_TRUE(gang.first_failure().has_value());
    EXPECT_EQ(gang.first_failure()->rank, 1);
    EXPECT_EQ(gang.first_failure()->host, "h1");
    EXPECT_EQ(gang.first_failure()->exit_code, 3);
}

using Cause = Gang::Cause;

TEST(Gang, OnlyALostJobOrHostRestartsAndOnlyWhereTheRuleAllowsIt) {
    const Gang::RestartRule both{true, true}, hosts{true, false}, jobs{false, true};
    // A host lost while the other rank's training failed at its next collective: restarts.
    EXPECT_TRUE(Gang::restarts({Cause::training, Cause::host_lost}, both));
    EXPECT_TRUE(Gang::restarts({Cause::none, Cause::host_lost}, hosts));
    EXPECT_FALSE(Gang::restarts({Cause::none, Cause::host_lost}, jobs));  // no standby host
    EXPECT_TRUE(Gang::restarts({Cause::job_lost, Cause::none}, jobs));
    EXPECT_FALSE(Gang::restarts({Cause::job_lost, Cause::none}, hosts));  // max_restarts used up
    // A training's own failure, or anything else, never does.
    EXPECT_FALSE(Gang::restarts({Cause::training, Cause::none}, both));
    EXPECT_FALSE(Gang::restarts({Cause::none, Cause::none}, both));
    EXPECT_FALSE(Gang::restarts({Cause::other, Cause::host_lost}, both));
}

TEST(Gang, EachRankKeepsItsFirstCause) {
    Gang gang(3);
    gang.fail(1, "h1", 1, Cause::job_lost);
    gang.fail(1, "h1", 1, Cause::other);  // its run's code after the collection: not the cause
    gang.fail(0, "h0", 255, Cause::host_lost);
    EXPECT_EQ(gang.causes(), (std::vector<Cause>{Cause::host_lost, Cause::job_lost, Cause::none}));
    ASSERT_TRUE(gang.first_failure().has_value());
    EXPECT_EQ(gang.first_failure()->rank, 1);
    EXPECT_FALSE(gang.first_failure()->training);
}

TEST(Gang, AShutdownWaitsForTheVerdictOnlyWhereTheGangMayRestart) {
    Gang plain(2);
    plain.fail(1, "h1", 255, Cause::host_lost);
    EXPECT_EQ(plain.holds_shutdown(0, 0.01), std::optional<bool>(false));  // no rule: at once
    Gang gang(2);
    gang.set_restart_rule({true, false});
    EXPECT_FALSE(gang.holds_shutdown(0, 0.01).has_value());  // rank 1 still runs
    std::optional<bool> verdict;
    std::thread t([&] {
        while (!verdict) verdict = gang.holds_shutdown(0, 0.05);
    });
    gang.fail(1, "h1", 255, Cause::host_lost);
    gang.over(1);
    t.join();
    EXPECT_EQ(verdict, std::optional<bool>(true));  // the gang restarts: rank 0's host goes on
    Gang failed(2);
    failed.set_restart_rule({true, true});
    failed.fail(1, "h1", 3, Cause::training);
    failed.over(1);
    EXPECT_EQ(failed.holds_shutdown(0, 1), std::optional<bool>(false));
}

}  // namespace
}  // namespace mlt

namespace {

mlt::JobStatus node_job(const std::string& run, mlt::JobState state, bool locked, int attempt = 1) {
    mlt::JobStatus job;
    job.model = "m";
    job.run_id = run;
    job.state = state;
    job.locked = locked;
    job.attempt = attempt;
    return job;
}

}  // namespace

TEST(GangResume, EveryNodeLockedAndNoneLostIsAdoptedAsItWas) {
    const auto plan = mlt::plan_gang_resume(
        {node_job("r", mlt::JobState::running, true), node_job("r", mlt::JobState::finished, true)},
        "m");
    EXPECT_TRUE(plan.adopt_all);
    EXPECT_FALSE(plan.restart);
    EXPECT_EQ(plan.settle, (std::vector<bool>{true, true}));
    EXPECT_EQ(plan.run_id, "r");
}

TEST(GangResume, ALostRankRestartsEveryNodeAsTheNextAttempt) {
    const auto plan = mlt::plan_gang_resume({node_job("r", mlt::JobState::collected, false),
                                             node_job("r", mlt::JobState::lost, true, 2)},
                                            "m");
    EXPECT_FALSE(plan.adopt_all);
    EXPECT_TRUE(plan.restart);
    EXPECT_EQ(plan.attempt, 3);
    EXPECT_EQ(plan.lost_rank, 1);
    // The locked lost node is collected first; the one collected already needs nothing.
    EXPECT_EQ(plan.settle, (std::vector<bool>{false, true}));
    EXPECT_NE(plan.why.find("rank 1"), std::string::npos) << plan.why;
}

TEST(GangResume, ANodeWithoutTheRunsJobIsALostRank) {
    const auto plan =
        mlt::plan_gang_resume({node_job("r", mlt::JobState::running, true), std::nullopt}, "m");
    EXPECT_TRUE(plan.restart);
    EXPECT_EQ(plan.lost_rank, 1);
    EXPECT_EQ(plan.settle, (std::vector<bool>{true, false}));
}

TEST(GangResume, ASplitGangRestartsEvenWithoutALoss) {
    // Rank 0 was stopped by the gang and collected; rank 1 runs on alone, unable to train.
    const auto plan = mlt::plan_gang_resume({node_job("r", mlt::JobState::collected, false),
                                             node_job("r", mlt::JobState::running, true)},
                                            "m");
    EXPECT_TRUE(plan.restart);
    EXPECT_EQ(plan.lost_rank, -1);
    EXPECT_EQ(plan.settle, (std::vector<bool>{false, true}));
}

// A client killed while the gang restarted: one node took its lock for the new attempt (its
// upload cut), the other had ended the attempt before. Every node starts again together.
TEST(GangResume, AnAttemptCutBeforeItsStartRestartsEveryNode) {
    const auto plan = mlt::plan_gang_resume({node_job("r", mlt::JobState::collected, false),
                                             node_job("r", mlt::JobState::uploading, true, 2)},
                                            "m");
    EXPECT_TRUE(plan.restart);
    EXPECT_EQ(plan.attempt, 3);
    EXPECT_EQ(plan.why, "the last attempt did not start on every node");
    EXPECT_EQ(plan.settle, (std::vector<bool>{false, false}));
}

TEST(GangResume, DifferentRunsNoRunOrNothingLeftAreRefused) {
    for (const auto& jobs : std::vector<std::vector<std::optional<mlt::JobStatus>>>{
             {node_job("r", mlt::JobState::running, true),
              node_job("s", mlt::JobState::running, true)},
             {std::nullopt, std::nullopt},
             {node_job("r", mlt::JobState::collected, false),
              node_job("r", mlt::JobState::collected, false)}}) {
        try {
            mlt::plan_gang_resume(jobs, "m");
            ADD_FAILURE() << "not refused";
        } catch (const mlt::Error& e) {
            EXPECT_EQ(e.code(), mlt::exit_code::kConflict) << e.what();
        }
    }
}
