// The run engine's orchestration against an in-memory host (fake_job_host.h): every call of
// a clean run is cut, one test case per call and per way of failing, and each case checks
// from the host's journal that the cut hit the call it meant to hit, then that the run still
// ends with one job, one shutdown, every console byte once and the lock released.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "capturing_reporter.h"
#include "fake_job_host.h"
#include "mlt/train/local/history.h"
#include "mlt/train/run/train_run.h"
#include "run_in_memory.h"
#include "transfer_fixtures.h"

namespace fs = std::filesystem;
using mlt::test::Cut;
using mlt::test::FakeHostConnection;
using mlt::test::FakeJobHost;
using mlt::test::Killed;

namespace {

// The calls of a clean run of plan(), in order: the job prints a line per follow segment; the
// last one brings the result and records phase finished, and the start of shutdown_cmds
// records phase collected.
const std::vector<std::string> kCleanRun = {
    "lock",   "upload",  "start",          "follow",          "follow",
    "follow", "collect", "start_shutdown", "follow shutdown", "release"};

using mlt::test::ManualClock;
using mlt::test::slurp;

mlt::TrainPlan plan(const std::string& local) {
    return mlt::test::memory_plan(local);
}

// One TrainRun against `host` over its own link.
struct RunRig {
    RunRig(FakeJobHost& host, mlt::TrainPlan p)
        : link(host), run(link, host, std::move(p), rep, clock) {}
    FakeHostConnection link;
    ManualClock clock;
    mlt::test::CapturingReporter rep;
    mlt::TrainRun run;
};

// What a complete run of `run_id` leaves: one launch, one shutdown, results of this run
// collected, the lock released, and the job's console in the local copy exactly once.
void expect_complete(const FakeJobHost& host, const std::string& run_id, const std::string& shown,
                     const std::string& local_console) {
    EXPECT_EQ(host.launches, 1) << "one job, started once";
    EXPECT_EQ(host.shutdown_runs, 1) << "shutdown_cmds once";
    EXPECT_EQ(host.collected_run, run_id);
    EXPECT_FALSE(host.lock_file.has_value()) << "the lock was not released";
    EXPECT_EQ(host.console_log, "line one\nline two\nline three\n");
    EXPECT_EQ(slurp(local_console), host.console_log);
    EXPECT_NE(shown.find(host.console_log), std::string::npos) << shown;
}

TEST(RunInMemory, ACleanRunMakesTheseCallsAndEndsWell) {
    mlt::test::TempDir dir;
    FakeJobHost host;
    RunRig r(host, plan(dir.path()));
    EXPECT_EQ(r.run.run(), 0) << r.rep.alerts;
    EXPECT_EQ(host.calls, kCleanRun);
    EXPECT_EQ(r.run.phase(), mlt::Phase::done);
    EXPECT_EQ(r.rep.console, host.console_log + host.shutdown_log);
    expect_complete(host, r.run.run_id(), r.rep.console, plan(dir.path()).local_console);
    EXPECT_TRUE(r.rep.alerts.empty()) << r.rep.alerts;
}

struct CutPoint {
    size_t call;  // 1-based index into kCleanRun
    Cut mode;
};

std::string name_of(const ::testing::TestParamInfo<CutPoint>& info) {
    static const char* modes[] = {"Before", "After", "Midway", "KilledBefore", "KilledAfter"};
    std::string call = kCleanRun[info.param.call - 1];
    std::replace(call.begin(), call.end(), ' ', '_');
    char index[8];
    std::snprintf(index, sizeof index, "%02zu", info.param.call);
    return std::string("Call") + index + "_" + call + "_" +
           modes[static_cast<int>(info.param.mode)];
}

std::vector<CutPoint> cut_points(std::initializer_list<Cut> modes) {
    std::vector<CutPoint> points;
    for (size_t k = 1; k <= kCleanRun.size(); ++k)
        for (Cut mode : modes) points.push_back({k, mode});
    return points;
}

// A host that fails at the cut point of the test's parameter.
class CutPointTest : public ::testing::TestWithParam<CutPoint> {
  protected:
    void SetUp() override { host.cut(GetParam().call, GetParam().mode); }
    mlt::test::TempDir dir;
    FakeJobHost host;
};

class RunInMemoryCut : public CutPointTest {};

TEST_P(RunInMemoryCut, TheLinkIsBackAndTheRunCompletesAsIfNothingHappened) {
    const CutPoint cut = GetParam();
    RunRig r(host, plan(dir.path()));
    ASSERT_EQ(r.run.run(), 0) << r.rep.alerts << r.rep.notices;
    ASSERT_GE(host.calls.size(), cut.call);
    EXPECT_EQ(host.calls[cut.call - 1], kCleanRun[cut.call - 1]) << "the cut hit another call";
    EXPECT_EQ(r.run.reconnects(), 1);
    EXPECT_EQ(r.link.attempts, 1);
    EXPECT_NE(r.rep.alerts.find("link to me@fake:22 lost while "), std::string::npos)
        << r.rep.alerts;
    // Every byte of the job's console and of shutdown_cmds' output shown once.
    EXPECT_EQ(r.rep.console, host.console_log + host.shutdown_log);
    expect_complete(host, r.run.run_id(), r.rep.console, plan(dir.path()).local_console);
}

INSTANTIATE_TEST_SUITE_P(EveryCall, RunInMemoryCut,
                         ::testing::ValuesIn(cut_points({Cut::before, Cut::after, Cut::midway})),
                         name_of);

class RunInMemoryKill : public CutPointTest {};

TEST_P(RunInMemoryKill, ResumeFinishesTheRunThatWasKilled) {
    const CutPoint cut = GetParam();
    auto first = std::make_unique<RunRig>(host, plan(dir.path()));
    EXPECT_THROW(first->run.run(), Killed);
    ASSERT_EQ(host.calls.size(), cut.call);
    EXPECT_EQ(host.calls.back(), kCleanRun[cut.call - 1]) << "the kill hit another call";
    const std::string first_id = first->run.run_id();
    if (!host.lock_file) {
        // Nothing to resume: killed before the lock was taken, or after it was released.
        const bool before_lock = cut.call == 1 && cut.mode == Cut::killed_before;
        const bool after_release = host.calls.back() == "release" && cut.mode == Cut::killed_after;
        EXPECT_TRUE(before_lock || after_release);
        return;
    }
    host.cut_at = 0;
    mlt::TrainPlan p = plan(dir.path());
    p.resume = true;
    RunRig second(host, p);
    ASSERT_EQ(second.run.run(), 0) << second.rep.alerts << second.rep.notices;
    EXPECT_EQ(second.run.run_id(), first_id) << "--resume continued another run";
    // Both processes printed to the same terminal: the job's lines once in all.
    const std::string shown = first->rep.console + second.rep.console;
    for (const std::string line : {"line one\n", "line two\n", "line three\n"}) {
        size_t n = 0;
        for (size_t at = shown.find(line); at != std::string::npos; at = shown.find(line, at + 1))
            ++n;
        EXPECT_EQ(n, 1u) << line << " in:\n" << shown;
    }
    expect_complete(host, first_id, shown, p.local_console);
}

INSTANTIATE_TEST_SUITE_P(EveryCall, RunInMemoryKill,
                         ::testing::ValuesIn(cut_points({Cut::killed_before, Cut::killed_after})),
                         name_of);

// The job's console over two attempts: the first one's line, the marker, the second whole.
const std::string kTwoAttempts =
    "line one\n==== mlt: attempt 2 of run R (the job was lost) ====\n"
    "line one\nline two\nline three\n";

std::string with_run(std::string text, const std::string& run_id) {
    return text.replace(text.find(" R "), 3, " " + run_id + " ");
}

// A run killed while it follows its job, whose job is then lost too (the host restarted).
std::string kill_run_and_lose_job(FakeJobHost& host, const std::string& local) {
    host.cut(4, Cut::killed_after);  // the first follow: one line printed
    RunRig first(host, plan(local));
    EXPECT_THROW(first.run.run(), Killed);
    host.cut_at = 0;
    host.alive = false;
    return first.run.run_id();
}

class RunInMemoryRestart : public ::testing::TestWithParam<std::optional<Cut>> {};

TEST_P(RunInMemoryRestart, ResumeRestartsALostJobAsAttempt2OfTheSameRun) {
    mlt::test::TempDir dir;
    FakeJobHost host;
    const std::string run_id = kill_run_and_lose_job(host, dir.path());
    ASSERT_EQ(host.status().front().state, mlt::JobState::lost);
    // A cut before or after the restart's command (the second call of --resume).
    if (GetParam()) host.cut(host.calls.size() + 2, *GetParam());
    mlt::TrainPlan p = plan(dir.path());
    p.resume = true;
    RunRig second(host, p);
    ASSERT_EQ(second.run.run(), 0) << second.rep.alerts << second.rep.notices;
    if (GetParam()) {
        EXPECT_EQ(host.calls[host.cut_at - 1], "restart");
    }
    EXPECT_EQ(second.run.run_id(), run_id);
    EXPECT_EQ(host.attempt, 2);
    EXPECT_EQ(host.launches, 2) << "one launch per attempt";
    EXPECT_EQ(host.console_log, with_run(kTwoAttempts, run_id));
    EXPECT_EQ(slurp(p.local_console), host.console_log) << "the local copy goes on";
    EXPECT_NE(
        second.rep.notices.find("restarting the lost job of m (run " + run_id + ") as attempt 2"),
        std::string::npos)
        << second.rep.notices;
    EXPECT_EQ(host.collected_run, run_id);
    EXPECT_FALSE(host.lock_file.has_value());
}

INSTANTIATE_TEST_SUITE_P(CutAtTheRestart, RunInMemoryRestart,
                         ::testing::Values(std::nullopt, Cut::before, Cut::after));

TEST(RunInMemory, MaxRestartsLetsTheRunRestartItsLostJobItself) {
    mlt::test::TempDir dir;
    FakeJobHost host;
    host.script.lost_after = 1;
    mlt::TrainPlan p = plan(dir.path());
    p.max_restarts = 1;
    RunRig r(host, p);
    EXPECT_EQ(r.run.run(), 0) << r.rep.alerts << r.rep.notices;
    EXPECT_EQ(host.launches, 2);
    EXPECT_EQ(host.console_log, with_run(kTwoAttempts, r.run.run_id()));
    EXPECT_EQ(slurp(p.local_console), host.console_log);
    EXPECT_NE(r.rep.notices.find("restarting it as attempt 2 (max_restarts 1)"),
              std::string::npos)
        << r.rep.notices;  // The history has every attempt: the first one lost, the second one's
                           // end.
    std::vector<std::string> attempts;
    int skipped = 0;
    for (const auto& rec : mlt::read_history(mlt::history_path(), &skipped))
        if (rec["id"] == r.run.run_id())
            attempts.push_back(rec["attempt"].dump() + " " + rec["status"].get<std::string>());
    EXPECT_EQ(attempts,
              (std::vector<std::string>{"1 running", "1 lost", "2 running", "2 success"}));
}

// The job's console reaches the terminal without the sequences that act on it, also when one
// is cut between two follow segments; the local copy keeps every byte; --raw-console passes
// them all.
TEST(RunInMemory, TheConsoleIsFilteredOnTheTerminalAndWholeInTheCopy) {
    const std::vector<std::string> lines = {"epoch 1 \x1b[32mok\x1b[0m\n\x1b]0;ti",
                                            "tle\x07\x1b[2Jline two\n",
                                            "\x1b]52;c;aGk=\x07line three\n"};
    for (const bool raw : {false, true}) {
        mlt::test::TempDir dir;
        FakeJobHost host;
        host.script.lines = lines;
        mlt::TrainPlan p = plan(dir.path());
        p.raw_console = raw;
        RunRig r(host, p);
        EXPECT_EQ(r.run.run(), 0) << r.rep.alerts;
        EXPECT_EQ(slurp(p.local_console), host.console_log);
        EXPECT_EQ(r.rep.console,
                  raw ? host.console_log + host.shutdown_log
                      : "epoch 1 \x1b[32mok\x1b[0m\nline two\nline three\n" + host.shutdown_log);
    }
}

// A lost attempt that stopped inside a string sequence does not hide the next attempt's lines.
TEST(RunInMemory, ARestartedJobsConsoleShowsAfterALostOneCutMidSequence) {
    mlt::test::TempDir dir;
    FakeJobHost host;
    host.script.lines = {"one\x1b]0;never ended", "two\n", "three\n"};
    host.script.lost_after = 1;
    mlt::TrainPlan p = plan(dir.path());
    p.max_restarts = 1;
    RunRig r(host, p);
    EXPECT_EQ(r.run.run(), 0) << r.rep.alerts << r.rep.notices;
    EXPECT_NE(r.rep.console.find("==== mlt: attempt 2 of run"), std::string::npos) << r.rep.console;
}

TEST(RunInMemory, WithoutMaxRestartsALostJobEndsTheRunAsBefore) {
    mlt::test::TempDir dir;
    FakeJobHost host;
    host.script.lost_after = 1;
    RunRig r(host, plan(dir.path()));
    EXPECT_EQ(r.run.run(), 1);
    EXPECT_EQ(host.launches, 1);
    EXPECT_EQ(host.attempt, 1);
    EXPECT_EQ(host.console_log, "line one\n");
}

// --max-hours / --max-cost: a job with many lines, each follow segment lasting its bound on
// the run's clock.
struct BudgetRig {
    explicit BudgetRig(const mlt::TrainPlan& p) : r(host, p) {
        host.script.lines.assign(100, "epoch\n");
    }
    FakeJobHost host;
    RunRig r;
};

std::vector<nlohmann::json> history_of(const std::string& run_id) {
    std::vector<nlohmann::json> records;
    int skipped = 0;
    for (const auto& rec : mlt::read_history(mlt::history_path(), &skipped))
        if (rec["id"] == run_id) records.push_back(rec);
    return records;
}

TEST(RunInMemoryBudget, MaxCostStopsTheJobCollectsRunsShutdownCmdsAndExits5) {
    mlt::test::TempDir dir;
    mlt::TrainPlan p = plan(dir.path());
    p.price_per_hour = 3600;  // $1 a second
    p.budget.max_cost = 40;
    BudgetRig b(p);
    b.host.on_follow = [&](int seconds) { b.r.clock.sleep(seconds); };
    EXPECT_EQ(b.r.run.run(), mlt::exit_code::kLimit) << b.r.rep.alerts << b.r.rep.notices;
    EXPECT_EQ(b.host.stops, 1);
    EXPECT_EQ(b.host.collects, 1);
    EXPECT_EQ(b.host.shutdown_runs, 1);
    EXPECT_FALSE(b.host.lock_file.has_value());
    EXPECT_LT(b.host.printed, 10u) << "the job ran on past its limit";
    // Segments end at the limit: 15 s, 15 s, then the 10 s left; the stop comes next.
    EXPECT_EQ(b.host.follow_seconds.at(0), 15);
    EXPECT_EQ(b.host.follow_seconds.at(1), 15);
    EXPECT_EQ(b.host.follow_seconds.at(2), 10);
    EXPECT_NE(b.r.rep.alerts.find("--max-cost 40 (reached after 40 s, $40.00): stopping the "
                                  "remote job of m"),
              std::string::npos)
        << b.r.rep.alerts;
    EXPECT_NE(b.r.rep.notices.find("summary of run " + b.r.run.run_id() +
                                   " of m: stopped by --max-cost 40"),
              std::string::npos)
        << b.r.rep.notices;
    EXPECT_NE(b.r.rep.notices.find("(exit 5)"), std::string::npos) << b.r.rep.notices;
    const auto records = history_of(b.r.run.run_id());
    ASSERT_FALSE(records.empty());
    EXPECT_EQ(records.back()["status"], "limit");
    EXPECT_EQ(records.back()["max_cost"], 40.0);
    EXPECT_GE(records.back()["cost"].get<double>(), 40.0);
    EXPECT_EQ(records.back()["attempts"].at(0)["how"], "limit");
}

TEST(RunInMemoryBudget, ResumeCountsTheTimeBeforeIt) {
    mlt::test::TempDir dir;
    mlt::TrainPlan p = plan(dir.path());
    p.resume = true;
    p.budget.max_hours = 1;
    BudgetRig b(p);
    // A job an earlier mlt started two hours ago, still running.
    b.host.lock_file = FakeJobHost::Lock{"r0", mlt::RunPhase::running, {}};
    b.host.job_run_id = "r0";
    b.host.started = b.host.alive = true;
    b.host.started_epoch = static_cast<long>(b.r.run.wall_now()) - 7200;
    EXPECT_EQ(b.r.run.run(), mlt::exit_code::kLimit) << b.r.rep.alerts << b.r.rep.notices;
    EXPECT_EQ(b.host.stops, 1);
    EXPECT_EQ(b.host.printed, 0u) << "stopped before its next line";
    EXPECT_EQ(b.host.collected_run, "r0");
    EXPECT_EQ(b.host.shutdown_runs, 1);
    EXPECT_NE(b.r.rep.alerts.find("--max-hours 1 (reached after 2h00m"), std::string::npos)
        << b.r.rep.alerts;
}

TEST(RunInMemoryBudget, TheLimitCountsEveryAttempt) {
    mlt::test::TempDir dir;
    mlt::TrainPlan p = plan(dir.path());
    p.max_restarts = 1;
    p.price_per_hour = 1.5;
    p.budget.max_hours = 50.0 / 3600;  // 50 s
    BudgetRig b(p);
    b.host.script.lost_after = 2;  // attempt 1: two segments (30 s), then lost
    b.host.on_follow = [&](int seconds) { b.r.clock.sleep(seconds); };
    EXPECT_EQ(b.r.run.run(), mlt::exit_code::kLimit) << b.r.rep.alerts << b.r.rep.notices;
    EXPECT_EQ(b.host.attempt, 2);
    EXPECT_EQ(b.host.stops, 1);
    const auto& attempts = b.r.run.ledger().attempts();
    ASSERT_EQ(attempts.size(), 2u);
    EXPECT_EQ(attempts[0].how, "lost");
    EXPECT_EQ(attempts[1].how, "limit");
    EXPECT_NEAR(b.r.run.ledger().elapsed(b.r.run.wall_now()), 50, 1);
    EXPECT_NE(b.r.rep.notices.find("  attempts: #1 on me@fake:22 at $1.50/h, 30 s, lost; #2 on "
                                   "me@fake:22 at $1.50/h, 20 s, limit"),
              std::string::npos)
        << b.r.rep.notices;
}

// A job the host's guard stopped ends the run as a limit (exit 5) with the guard's reason; a
// guard.stop record that no guard writes (the host's word) is named, never taken as the reason:
// the run ends with the job's own status.
TEST(RunInMemoryBudget, AGuardsStopEndsTheRunAsALimitOnlyWhenItIsOneAGuardWrites) {
    for (const std::string record :
         {"limit --max-hours 2", "silent 60", "limit all files verified"}) {
        SCOPED_TRACE(record);
        mlt::test::TempDir dir;
        FakeJobHost host;
        host.script.guard_stop = record;
        mlt::TrainPlan p = plan(dir.path());
        p.silent_minutes = 1;
        RunRig r(host, p);
        const bool taken = record != "limit all files verified";
        EXPECT_EQ(r.run.run(), taken ? mlt::exit_code::kLimit : 143) << r.rep.alerts;
        if (record == "limit --max-hours 2") {
            EXPECT_NE(r.rep.alerts.find("--max-hours 2 (reached; the guard on me@fake:22 stopped "
                                        "the job): collecting the results of m"),
                      std::string::npos)
                << r.rep.alerts;
        }
        if (record == "silent 60") {
            EXPECT_NE(r.rep.alerts.find("watch.silent_minutes 1 (no new console output for 60 s; "
                                        "the guard on me@fake:22 stopped the job)"),
                      std::string::npos)
                << r.rep.alerts;
        }
        if (!taken) {
            EXPECT_NE(r.rep.warnings.find("records a stop by its guard that no guard writes"),
                      std::string::npos)
                << r.rep.warnings;
            EXPECT_EQ(r.rep.alerts.find("all files verified):"), std::string::npos);
        }
        EXPECT_EQ(host.collected_run, r.run.run_id()) << "the results are collected";
        EXPECT_FALSE(host.lock_file.has_value());
    }
}

TEST(RunInMemoryBudget, WithoutLimitsTheSegmentsAreFull) {
    mlt::test::TempDir dir;
    FakeJobHost host;
    RunRig r(host, plan(dir.path()));
    EXPECT_EQ(r.run.run(), 0);
    for (int seconds : host.follow_seconds) EXPECT_EQ(seconds, mlt::kFollowSegmentSeconds);
    EXPECT_NE(r.rep.notices.find("  time: 0.0 s; cost: not known"), std::string::npos)
        << r.rep.notices;
    // shutdown_cmds powered the host off: no reminder.
    EXPECT_EQ(r.rep.notices.find("may still be billing"), std::string::npos) << r.rep.notices;
}

}  // namespace
