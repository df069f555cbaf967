// The run engine against an in-memory host that pipelines (FakeJobHost::pipelined), as the
// shell does: the warm start (the job's start sent with the lock, on a ticket), the start
// after an upload with the first follow sent along, the collection's listing sent on a guess,
// and the release that goes with the follow. Every call of each path, commands sent ahead
// included, is cut (before, after, midway; the client killed before or after it, then
// --resume), and each case checks that the cut hit the call it meant to hit, then that the
// run still ends with one job, every console byte once and the lock given back.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "capturing_reporter.h"
#include "fake_job_host.h"
#include "mlt/train/run/train_run.h"
#include "run_in_memory.h"
#include "transfer_fixtures.h"

using mlt::test::Cut;
using mlt::test::FakeHostConnection;
using mlt::test::FakeJobHost;
using mlt::test::Killed;
using mlt::test::slurp;

namespace {

// The ways a pipelined run goes.
enum class Path {
    warm,     // the files are there: the job starts in the lock's round trip
    changed,  // a file changed: the start sent ahead declines; upload, then start
    release,  // warm, and the lock goes back with the follow that sees the job's end
    release_changed,
};

struct PathCase {
    Path path;
    const char* name;
    std::vector<std::string> calls;  // the calls of the path when nothing fails
};

const PathCase kPaths[] = {
    {Path::warm,
     "Warm",
     {"lock", "start ahead", "listings ahead", "follow", "collect listing ahead", "follow",
      "follow", "collect", "start_shutdown", "follow shutdown", "release"}},
    {Path::changed,
     "Changed",
     {"lock", "start ahead", "listings ahead", "upload", "start", "follow ahead",
      "collect listing ahead", "follow", "follow", "collect", "start_shutdown", "follow shutdown",
      "release"}},
    {Path::release,
     "Release",
     {"lock", "start ahead", "listings ahead", "follow", "collect listing ahead", "follow",
      "follow"}},
    {Path::release_changed,
     "ReleaseChanged",
     {"lock", "start ahead", "listings ahead", "upload", "start", "follow ahead",
      "collect listing ahead", "follow", "follow"}},
};

bool releases(Path path) {
    return path == Path::release || path == Path::release_changed;
}

// The plan of a path: with the release, no shutdown_cmds, a log dir the settings name, and
// a local log dir that holds what the job's logs hold (so nothing is left to pull).
mlt::TrainPlan plan_of(Path path, const std::string& local) {
    mlt::TrainPlan p = mlt::test::memory_plan(local);
    if (releases(path)) {
        p.shutdown_cmds.clear();
        p.remote_log_dir = "logs/m";
        mlt::test::write_file(p.local_logs + "/events.txt", "home already");
    }
    return p;
}

void set_up_host(FakeJobHost& host, Path path) {
    host.pipelined = true;
    host.files_current = path == Path::warm || path == Path::release;
    if (releases(path)) host.script.records_archive = false;
}

struct RunRig {
    RunRig(FakeJobHost& host, mlt::TrainPlan p)
        : link(host), run(link, host, std::move(p), rep, clock) {}
    FakeHostConnection link;
    mlt::test::ManualClock clock;
    mlt::test::CapturingReporter rep;
    mlt::TrainRun run;
};

// How often `line` appears in `text`.
size_t count_of(const std::string& text, const std::string& line) {
    size_t n = 0;
    for (size_t at = text.find(line); at != std::string::npos; at = text.find(line, at + 1)) ++n;
    return n;
}

// What a complete run of `run_id` leaves: one launch, its results home (collected, or
// released by a follow with the logs home), shutdown_cmds once where there are some, the
// lock given back, and the job's console once on the terminal and whole in the local copy.
void expect_complete(const FakeJobHost& host, Path path, const std::string& run_id,
                     const std::string& shown, const mlt::TrainPlan& p) {
    EXPECT_EQ(host.launches, 1) << "one job, started once";
    EXPECT_EQ(host.late_uploads, 0) << "files sent under a job that may run";
    EXPECT_EQ(host.unlocked_collects, 0) << "results pulled without the run's lock";
    EXPECT_FALSE(host.lock_file.has_value()) << "the lock was not given back";
    EXPECT_TRUE(host.collected_run == run_id || (releases(path) && host.follow_releases > 0))
        << "no results of run " << run_id << " came home";
    EXPECT_EQ(host.shutdown_runs, releases(path) ? 0 : 1);
    EXPECT_EQ(host.console_log, "line one\nline two\nline three\n");
    EXPECT_EQ(slurp(p.local_console), host.console_log);
    for (const std::string line : {"line one\n", "line two\n", "line three\n"})
        EXPECT_EQ(count_of(shown, line), 1u) << line << " in:\n" << shown;
}

class RunPipelined : public ::testing::TestWithParam<PathCase> {};

TEST_P(RunPipelined, ARunMakesTheseCallsAndEndsWell) {
    const PathCase& c = GetParam();
    mlt::test::TempDir dir;
    FakeJobHost host;
    set_up_host(host, c.path);
    const mlt::TrainPlan p = plan_of(c.path, dir.path());
    RunRig r(host, p);
    EXPECT_EQ(r.run.run(), 0) << r.rep.alerts << r.rep.notices;
    EXPECT_EQ(host.calls, c.calls);
    EXPECT_EQ(r.run.phase(), mlt::Phase::done);
    expect_complete(host, c.path, r.run.run_id(), r.rep.console, p);
    EXPECT_EQ(host.uploads, c.path == Path::changed || c.path == Path::release_changed ? 1 : 0);
    if (releases(c.path)) {
        EXPECT_EQ(host.follow_releases, 1);
        EXPECT_EQ(host.collects, 0) << "the logs were home: nothing to pull";
    }
    EXPECT_TRUE(r.rep.alerts.empty()) << r.rep.alerts;
}

std::string path_name(const ::testing::TestParamInfo<PathCase>& param) {
    return param.param.name;
}

INSTANTIATE_TEST_SUITE_P(EveryPath, RunPipelined, ::testing::ValuesIn(kPaths), path_name);

struct CutCase {
    const PathCase* path;
    size_t call;  // 1-based index into path->calls
    Cut mode;
};

// gtest prints a failing case by its name, not its bytes.
void PrintTo(const CutCase& c, std::ostream* out) {
    *out << c.path->name << " call " << c.call << " (" << c.path->calls[c.call - 1] << ")";
}

std::string name_of(const ::testing::TestParamInfo<CutCase>& info) {
    static const char* modes[] = {"Before", "After", "Midway", "KilledBefore", "KilledAfter"};
    std::string call = info.param.path->calls[info.param.call - 1];
    std::replace(call.begin(), call.end(), ' ', '_');
    char index[8];
    std::snprintf(index, sizeof index, "%02zu", info.param.call);
    return std::string(info.param.path->name) + "_Call" + index + "_" + call + "_" +
           modes[static_cast<int>(info.param.mode)];
}

std::vector<CutCase> cut_cases(std::initializer_list<Cut> modes) {
    std::vector<CutCase> cases;
    for (const PathCase& path : kPaths)
        for (size_t k = 1; k <= path.calls.size(); ++k)
            for (Cut mode : modes) cases.push_back({&path, k, mode});
    return cases;
}

class CutCaseTest : public ::testing::TestWithParam<CutCase> {
  protected:
    void SetUp() override {
        set_up_host(host, GetParam().path->path);
        host.cut(GetParam().call, GetParam().mode);
    }
    const PathCase& path() const { return *GetParam().path; }
    mlt::test::TempDir dir;
    FakeJobHost host;
};

class RunPipelinedCut : public CutCaseTest {};

TEST_P(RunPipelinedCut, TheLinkIsBackAndTheRunCompletesAsIfNothingHappened) {
    const CutCase cut = GetParam();
    const mlt::TrainPlan p = plan_of(path().path, dir.path());
    RunRig r(host, p);
    ASSERT_EQ(r.run.run(), 0) << r.rep.alerts << r.rep.notices;
    ASSERT_GE(host.calls.size(), cut.call);
    EXPECT_EQ(host.calls[cut.call - 1], path().calls[cut.call - 1]) << "the cut hit another call";
    EXPECT_EQ(r.run.reconnects(), 1);
    EXPECT_EQ(r.link.attempts, 1);
    EXPECT_NE(r.rep.alerts.find("link to me@fake:22 lost while "), std::string::npos)
        << r.rep.alerts;
    expect_complete(host, path().path, r.run.run_id(), r.rep.console, p);
}

INSTANTIATE_TEST_SUITE_P(EveryCall, RunPipelinedCut,
                         ::testing::ValuesIn(cut_cases({Cut::before, Cut::after, Cut::midway})),
                         name_of);

class RunPipelinedKill : public CutCaseTest {};

TEST_P(RunPipelinedKill, ResumeFinishesTheRunThatWasKilled) {
    const CutCase cut = GetParam();
    const mlt::TrainPlan p = plan_of(path().path, dir.path());
    auto first = std::make_unique<RunRig>(host, p);
    EXPECT_THROW(first->run.run(), Killed);
    ASSERT_EQ(host.calls.size(), cut.call);
    EXPECT_EQ(host.calls.back(), path().calls[cut.call - 1]) << "the kill hit another call";
    const std::string first_id = first->run.run_id();
    if (!host.lock_file && !host.released_lock) {
        // Nothing to resume: killed before the lock was taken, or after it was given back.
        const bool before_lock = cut.call == 1 && cut.mode == Cut::killed_before;
        const bool after_release = host.calls.back() == "release" && cut.mode == Cut::killed_after;
        EXPECT_TRUE(before_lock || after_release);
        return;
    }
    host.cut_at = 0;
    host.reconnected();  // the killed client's link is gone with it
    // What it sent ahead and had not run arrives late, at the worst moment: as the resumed
    // run sends files, starts or follows the job, or collects.
    host.strays_before = {"upload", "start", "follow", "collect"};
    mlt::TrainPlan again = p;
    again.resume = true;
    RunRig second(host, again);
    ASSERT_EQ(second.run.run(), 0) << second.rep.alerts << second.rep.notices;
    EXPECT_EQ(second.run.run_id(), first_id) << "--resume continued another run";
    // Both processes printed to the same terminal: the job's lines once in all.
    expect_complete(host, path().path, first_id, first->rep.console + second.rep.console, again);
}

INSTANTIATE_TEST_SUITE_P(EveryCall, RunPipelinedKill,
                         ::testing::ValuesIn(cut_cases({Cut::killed_before, Cut::killed_after})),
                         name_of);

// A start sent ahead that claimed the start but was cut before it launched the job (the link
// dropped between the two): the lock taken again says "claimed", the start sent with it
// launches the claimed job without testing the files again, and nothing is uploaded.
TEST(RunPipelinedTickets, AClaimedStartCutBeforeItsLaunchIsLaunchedOnceAndNothingUploaded) {
    mlt::test::TempDir dir;
    FakeJobHost host;
    set_up_host(host, Path::warm);
    host.cut(2, Cut::midway);  // "start ahead": claimed, not launched, the link lost
    const mlt::TrainPlan p = plan_of(Path::warm, dir.path());
    RunRig r(host, p);
    ASSERT_EQ(r.run.run(), 0) << r.rep.alerts << r.rep.notices;
    EXPECT_EQ(host.launches, 1);
    EXPECT_EQ(host.uploads, 0) << "nothing may be uploaded once the start was claimed";
    const std::vector<std::string> head(
        host.calls.begin(), host.calls.begin() + std::min<size_t>(5, host.calls.size()));
    EXPECT_EQ(head, (std::vector<std::string>{"lock", "start ahead", "lock", "start ahead",
                                              "listings ahead"}));
}

// Without pipelining, the same run makes no call of it: every step is its own command.
TEST(RunPipelinedTickets, AHostWithoutPipeliningRunsEveryStepItself) {
    mlt::test::TempDir dir;
    FakeJobHost host;
    const mlt::TrainPlan p = plan_of(Path::release, dir.path());
    host.script.records_archive = false;
    RunRig r(host, p);
    ASSERT_EQ(r.run.run(), 0) << r.rep.alerts << r.rep.notices;
    EXPECT_EQ(host.calls, (std::vector<std::string>{"lock", "upload", "start", "follow", "follow",
                                                    "follow", "collect", "release"}));
    EXPECT_EQ(host.follow_releases, 0);
}

}  // namespace
