// The run engine over the real job scripts: the commands run in a real local shell
// (LocalRemote), so the job protocol, the wrapper and the files are real; only the link is
// simulated (FlakyRemote). Each remote command of a clean run is cut after it ran, and the
// reconnect, signal and failure paths are checked once each. Every other way of failing at
// every call is in test_train_run_memory.cpp, against an in-memory host.
#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>
#include <tuple>

#include "capturing_reporter.h"
#include "local_remote.h"
#include "mlt/job/job.h"
#include "mlt/train/local/history.h"
#include "mlt/train/run/train_run.h"
#include "mlt/util/interrupt.h"
#include "mlt/util/paths.h"

namespace fs = std::filesystem;

namespace {

using mlt::test::CapturingReporter;

// How the link fails at the chosen call.
enum class Cut {
    before,  // the command never reached the remote
    after,   // it ran to its end; its reply was lost
    midway,  // it ran; half of its output arrived
    killed,  // the client died there (not a link error: it ends the run object)
};

// Thrown by the fake instead of a link error, to end a TrainRun as a kill -9 ends mlt.
struct Killed {};

class FlakyRemote : public mlt::Remote {
  public:
    const std::string& name() const override { return name_; }

    mlt::RemoteOutput run(const std::string& command, std::string_view input) override {
        mlt::RemoteOutput out;
        out.exit_status = stream(
            command, mlt::input_from(input), [&](std::string_view d) { out.out.append(d); },
            [&](std::string_view d) { out.err.append(d); });
        return out;
    }

    int stream(const std::string& command, const mlt::InputSource& input,
               const mlt::OutputSink& on_stdout, const mlt::OutputSink& on_stderr) override {
        if (!up) throw lost();
        ++calls;
        if (before_call) before_call(command);
        const bool cut_here =
            calls == cut_at || (!cut_on.empty() && command.find(cut_on) != std::string::npos);
        if (cut_here) cut_on.clear();
        if (!fail_on.empty() && command.find(fail_on) != std::string::npos) {
            fail_on.clear();
            if (on_stderr) on_stderr("tail: read error: Input/output error\n");
            return 1;  // a remote failure, not a lost link
        }
        if (cut_here && mode == Cut::killed) throw Killed{};
        if (cut_here && mode == Cut::before) {
            up = false;
            throw lost();
        }
        if (cut_here && mode == Cut::midway) {
            // The first half of what it prints arrives, then the link is gone.
            std::string out;
            local_.stream(
                command, input, [&](std::string_view d) { out.append(d); }, on_stderr);
            up = false;
            if (on_stdout && !out.empty())
                on_stdout(std::string_view(out).substr(0, out.size() / 2));
            throw lost();
        }
        const int status = local_.stream(command, input, on_stdout, on_stderr);
        if (cut_here) {
            up = false;
            throw lost();
        }
        return status;
    }

    static mlt::Error lost() {
        return mlt::Error(mlt::ErrorKind::disconnected, "Socket error: disconnected");
    }

    int calls = 0;
    int cut_at = 0;       // 0: never
    std::string cut_on;   // or: the first command containing this
    std::string fail_on;  // the first command containing this fails (exit 1) instead
    Cut mode = Cut::before;
    bool up = true;
    std::function<void(const std::string&)> before_call;  // each command, before it runs

  private:
    std::string name_ = "me@fake:22";
    mlt::test::LocalRemote local_;
};

class FakeConnection : public mlt::Connection {
  public:
    explicit FakeConnection(FlakyRemote& remote) : remote_(remote) {}
    const std::string& name() const override { return remote_.name(); }
    mlt::Remote& remote() override { return remote_; }
    void reconnect() override {
        ++attempts;
        if (clock && attempt_seconds > 0) clock->sleep(attempt_seconds);  // a connect timeout
        if (on_attempt) on_attempt();
        if (refuse) throw *refuse;
        if (failures_left > 0) {
            --failures_left;
            throw mlt::Error(mlt::ErrorKind::connect, "cannot connect: Connection refused");
        }
        if (!reachable) throw mlt::Error(mlt::ErrorKind::timeout, "timed out");
        remote_.up = true;
    }
    int attempts = 0;
    int failures_left = 0;
    bool reachable = true;
    std::optional<mlt::Error> refuse;  // thrown by every attempt (a changed host key)
    std::function<void()> on_attempt;  // runs at each attempt (a signal arriving)
    mlt::RunClock* clock = nullptr;    // with attempt_seconds: each attempt takes that long
    double attempt_seconds = 0;

  private:
    FlakyRemote& remote_;
};

class FakeClock : public mlt::RunClock {
  public:
    double now() override { return now_; }
    void sleep(double seconds) override {
        slept.push_back(seconds);
        now_ += seconds;
    }
    std::vector<double> slept;

  private:
    double now_ = 1000;
};

// One run object over a fake link that fails at call `cut_at` (0: never) as `mode` says.
struct Rig {
    explicit Rig(mlt::TrainPlan plan, int cut_at = 0, Cut mode = Cut::before)
        : connection(remote),
          job(connection, plan.remote_dir, plan.model, plan.compression),
          run(connection, job, std::move(plan), rep, clock) {
        remote.cut_at = cut_at;
        remote.mode = mode;
    }
    FlakyRemote remote;
    FakeConnection connection;
    mlt::ShellJob job;
    FakeClock clock;
    CapturingReporter rep;
    mlt::TrainRun run;
};

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

size_t count(const std::string& text, const std::string& needle) {
    size_t n = 0;
    for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1))
        ++n;
    return n;
}

class TrainRunTest : public ::testing::Test {
  protected:
    void SetUp() override {
        char tmpl[] = "/tmp/mlt-run-XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
        fs::create_directories(dir_ + "/remote");
        fs::create_directories(dir_ + "/project");
        ::setenv("MLTK_CACHE_DIR", (dir_ + "/cache").c_str(), 1);
        std::ofstream(dir_ + "/project/m.py") << "spec\n";
    }
    void TearDown() override {
        mlt::test::LocalRemote r;
        mlt::JobDir(r, remote_dir(), "m").stop_job(1);
        fs::remove_all(dir_);
        ::unsetenv("MLTK_CACHE_DIR");
    }
    std::string remote_dir() const { return dir_ + "/remote"; }

    // A run whose job prints three lines, counts its launches, writes a log file and the
    // archive; shutdown_cmds count their runs.
    mlt::TrainPlan plan() const {
        mlt::TrainPlan p;
        p.model = "m";
        p.remote_dir = remote_dir();
        p.remote_log_dir = dir_ + "/remote-logs/m";
        p.archive = "m.mltk.zip";
        p.spec_dir = dir_ + "/project";
        p.local_logs = dir_ + "/cache/models/m";
        p.local_console = p.local_logs + "/mltk_ssh_train_m.log";
        p.local_archive = dir_ + "/project/m.mltk.zip";
        p.local_state_dir = dir_ + "/cache/ssh/models/m";
        p.uploads[remote_dir()] = {{dir_ + "/project/m.py", "m.py"}};
        p.wrapper.model = "m";
        p.wrapper.spec_file = "m.py";
        p.wrapper.log_dir = p.remote_log_dir;
        p.wrapper.archive = p.archive;
        p.wrapper.train_cmd =
            "echo launched >> launches.txt; echo 'line one'; echo 'line two'; "
            "echo \"log of $MLT_RUN_ID\" > \"$MLT_LOG_DIR/train.log\"; "
            "echo \"weights of $MLT_RUN_ID\" > m.mltk.zip; echo 'line three'";
        p.shutdown_cmds = {"echo shut >> shutdowns.txt"};
        p.compression = "none";
        p.reconnect_timeout_s = 600;
        p.owner = "tester";
        p.resume_line = "mlt ssh -h fake train m --resume";
        p.stop_line = "mlt ssh -h fake stop m";
        return p;
    }

    // Checks what a complete, successful run of `run_id` left behind.
    void expect_complete(const std::string& run_id, const CapturingReporter& rep) {
        const std::string local = slurp(dir_ + "/cache/models/m/mltk_ssh_train_m.log");
        EXPECT_EQ(local, slurp(remote_dir() + "/.mlt/m/console.log"));
        for (const char* line : {"line one\n", "line two\n", "line three\n"}) {
            EXPECT_EQ(count(local, line), 1u) << line << "in the local copy:\n" << local;
            EXPECT_EQ(count(rep.console, line), 1u) << line << "on the terminal:\n" << rep.console;
        }
        EXPECT_EQ(slurp(remote_dir() + "/launches.txt"), "launched\n") << "one job, started once";
        EXPECT_EQ(slurp(remote_dir() + "/shutdowns.txt"), "shut\n") << "shutdown_cmds once";
        EXPECT_EQ(slurp(dir_ + "/project/m.mltk.zip"), "weights of " + run_id + "\n");
        EXPECT_EQ(slurp(dir_ + "/cache/models/m/train.log"), "log of " + run_id + "\n");
        EXPECT_FALSE(fs::exists(remote_dir() + "/.mlt/m/lock")) << "the lock was not released";
        int skipped = 0;
        auto runs = mlt::latest_per_run(mlt::read_history(mlt::history_path(), &skipped));
        ASSERT_FALSE(runs.empty());
        EXPECT_EQ(runs.back()["id"], run_id);
        EXPECT_EQ(runs.back()["status"], "success") << runs.back().dump();
    }

    // Empties the remote and local sides for the next scenario.
    void reset() {
        mlt::test::LocalRemote r;
        mlt::JobDir(r, remote_dir(), "m").stop_job(1);
        fs::remove_all(remote_dir());
        fs::create_directories(remote_dir());
        fs::remove_all(dir_ + "/cache");
        fs::remove_all(dir_ + "/remote-logs");
        fs::remove(dir_ + "/project/m.mltk.zip");
    }

    // The remote calls of a clean run of plan(); the run must succeed.
    int count_calls() {
        Rig rig(plan());
        EXPECT_EQ(rig.run.run(), 0) << rig.rep.alerts;
        reset();
        return rig.remote.calls;
    }

    std::string dir_;
};

TEST_F(TrainRunTest, ACleanRunGoesThroughEveryPhase) {
    Rig rig(plan());
    EXPECT_EQ(rig.run.run(), 0) << rig.rep.alerts;
    EXPECT_EQ(rig.run.phase(), mlt::Phase::done);
    EXPECT_EQ(rig.run.reconnects(), 0);
    expect_complete(rig.run.run_id(), rig.rep);
    EXPECT_TRUE(rig.rep.alerts.empty()) << rig.rep.alerts;
}

// The remote commands of a clean run of plan() through the real shell scripts.
constexpr int kShellRunCalls = 13;

TEST_F(TrainRunTest, ACleanRunMakesThisManyRemoteCalls) {
    EXPECT_EQ(count_calls(), kShellRunCalls) << "update kShellRunCalls (and see that the cuts "
                                                "below still cover every call)";
}

// Each remote command of a clean run, run to its end with its reply lost: the protocol's own
// retries (the lock, the start marker, the shutdown marker) make the run complete with one
// job and one shutdown. The in-memory host (test_train_run_memory.cpp) covers every other way
// of failing at every call; this one needs the real scripts.
class TrainRunShellCut : public TrainRunTest, public ::testing::WithParamInterface<int> {};

TEST_P(TrainRunShellCut, AReplyLostAfterTheCommandRanIsRetriedSafely) {
    Rig rig(plan(), GetParam(), Cut::after);
    ASSERT_EQ(rig.run.run(), 0) << rig.rep.alerts << rig.rep.notices;
    EXPECT_EQ(rig.run.reconnects(), 1);
    expect_complete(rig.run.run_id(), rig.rep);
}

INSTANTIATE_TEST_SUITE_P(EveryCall, TrainRunShellCut, ::testing::Range(1, kShellRunCalls + 1),
                         [](const ::testing::TestParamInfo<int>& call) {
                             return "Call" + std::to_string(call.param);
                         });

// A warm run (its files uploaded by the run before): the start that goes with the lock
// starts the job, so no upload and no start of its own follow.
class TrainRunWarm : public TrainRunTest {
  protected:
    // The run before, whose job's traces then go, so that the next run's count alone.
    void run_before() {
        Rig rig(plan());
        ASSERT_EQ(rig.run.run(), 0) << rig.rep.alerts;
        fs::remove(remote_dir() + "/launches.txt");
        fs::remove(remote_dir() + "/shutdowns.txt");
    }
};

// The remote commands of a warm run of plan() through the real shell scripts.
constexpr int kWarmShellRunCalls = 10;

TEST_F(TrainRunWarm, ItStartsItsJobWithTheLockAndMakesThisManyRemoteCalls) {
    run_before();
    Rig rig(plan());
    ASSERT_EQ(rig.run.run(), 0) << rig.rep.alerts;
    expect_complete(rig.run.run_id(), rig.rep);
    EXPECT_NE(rig.rep.notices.find("uploaded 0 file(s), 0 bytes (1 unchanged)"), std::string::npos)
        << rig.rep.notices;
    EXPECT_EQ(rig.remote.calls, kWarmShellRunCalls)
        << "update kWarmShellRunCalls (and see that the cuts below still cover every call)";
    EXPECT_TRUE(fs::exists(remote_dir() + "/.mlt/m/start.claimed"));
}

// The start sent with the lock ran and claimed the job, and its answer was lost; at the
// retry the local file cannot be looked at (it is gone), so no start goes with the lock:
// the lock says the start was claimed, and the run goes to the start (which reports that
// job), never to an upload (which would fail here, the file being gone).
TEST_F(TrainRunWarm, ARetryAfterAStartThatClaimedTheJobNeverUploads) {
    run_before();
    Rig rig(plan(), 2, Cut::after);  // call 1: the lock, call 2: its start
    const std::string spec = dir_ + "/project/m.py";
    rig.connection.on_attempt = [&] { fs::rename(spec, spec + ".away"); };
    ASSERT_EQ(rig.run.run(), 0) << rig.rep.alerts << rig.rep.notices;
    fs::rename(spec + ".away", spec);
    EXPECT_EQ(rig.run.reconnects(), 1);
    expect_complete(rig.run.run_id(), rig.rep);
    EXPECT_EQ(rig.rep.notices.find("uploaded"), std::string::npos) << rig.rep.notices;
}

// "Call3After": a cut at call 3, after it ran.
std::string cut_name(const ::testing::TestParamInfo<std::tuple<int, Cut>>& p) {
    return "Call" + std::to_string(std::get<0>(p.param)) +
           (std::get<1>(p.param) == Cut::before ? "Before" : "After");
}

// Each remote command of a warm run cut before it reached the remote, or after it ran with
// its reply lost: the start that went with the lock, started or not, is the one job, and the
// run completes.
class TrainRunWarmShellCut : public TrainRunWarm,
                             public ::testing::WithParamInterface<std::tuple<int, Cut>> {};

TEST_P(TrainRunWarmShellCut, AWarmRunCutAtAnyCallStartsItsJobOnce) {
    run_before();
    Rig rig(plan(), std::get<0>(GetParam()), std::get<1>(GetParam()));
    ASSERT_EQ(rig.run.run(), 0) << rig.rep.alerts << rig.rep.notices;
    EXPECT_EQ(rig.run.reconnects(), 1);
    expect_complete(rig.run.run_id(), rig.rep);
}

INSTANTIATE_TEST_SUITE_P(EveryCall, TrainRunWarmShellCut,
                         ::testing::Combine(::testing::Range(1, kWarmShellRunCalls + 1),
                                            ::testing::Values(Cut::before, Cut::after)),
                         cut_name);

// A warm run whose logs are home when its job ends (it rewrites the same file; no archive,
// no shutdown_cmds): the follow releases the lock, and nothing is asked after it.
class TrainRunReleased : public TrainRunTest {
  protected:
    mlt::TrainPlan plan() const {
        mlt::TrainPlan p = TrainRunTest::plan();
        p.shutdown_cmds.clear();
        p.wrapper.train_cmd = "echo launched >> launches.txt; echo 'line one'; echo 'line two'; " +
                              gate_ +
                              "echo log > \"$MLT_LOG_DIR/steps.log\"; "
                              "touch -d @1700000000 \"$MLT_LOG_DIR/steps.log\"; echo 'line three'";
        return p;
    }
    void run_before() {
        Rig rig(plan());
        ASSERT_EQ(rig.run.run(), 0) << rig.rep.alerts;
        fs::remove(remote_dir() + "/launches.txt");
    }
    std::string local_log() const { return dir_ + "/cache/models/m/steps.log"; }
    void expect_released(const std::string& run_id, const CapturingReporter& rep) {
        const std::string local = slurp(dir_ + "/cache/models/m/mltk_ssh_train_m.log");
        EXPECT_EQ(local, slurp(remote_dir() + "/.mlt/m/console.log"));
        for (const char* line : {"line one\n", "line two\n", "line three\n"})
            EXPECT_EQ(count(local, line), 1u) << line << "in the local copy:\n" << local;
        EXPECT_EQ(slurp(remote_dir() + "/launches.txt"), "launched\n") << "one job, started once";
        EXPECT_EQ(slurp(local_log()), "log\n");
        EXPECT_FALSE(fs::exists(remote_dir() + "/.mlt/m/lock")) << "the lock was not released";
        int skipped = 0;
        auto runs = mlt::latest_per_run(mlt::read_history(mlt::history_path(), &skipped));
        ASSERT_FALSE(runs.empty());
        EXPECT_EQ(runs.back()["id"], run_id);
        EXPECT_EQ(runs.back()["status"], "success") << runs.back().dump();
        EXPECT_NE(rep.notices.find("no archive: run " + run_id), std::string::npos);
    }
    std::string gate_;  // shell text the job runs before it writes its log
};

// The remote commands of such a run of plan() through the real shell scripts.
constexpr int kReleasedShellRunCalls = 3;

TEST_F(TrainRunReleased, ItReleasesWithTheFollowAndMakesThisManyRemoteCalls) {
    run_before();
    Rig rig(plan());
    ASSERT_EQ(rig.run.run(), 0) << rig.rep.alerts;
    expect_released(rig.run.run_id(), rig.rep);
    EXPECT_NE(rig.rep.notices.find(": 0 file(s), 0 bytes (1 unchanged)"), std::string::npos)
        << rig.rep.notices;
    EXPECT_EQ(rig.remote.calls, kReleasedShellRunCalls)
        << "update kReleasedShellRunCalls (and see that the cuts below still cover every call)";
}

// The local copy changed while the job ran (by hand): the logs are pulled again, under the
// lock taken back, never after its release.
TEST_F(TrainRunReleased, ALocalLogChangedMeanwhileIsPulledUnderTheLockTakenBack) {
    run_before();
    const std::string go = dir_ + "/go";
    gate_ = "while [ ! -e '" + go + "' ]; do sleep 0.01; done; ";
    Rig rig(plan());
    bool released_seen = false;
    rig.remote.before_call = [&](const std::string& command) {
        // The follow goes out with the local dir as it was: now it changes.
        if (command.find("mlt-follow-result") != std::string::npos && !fs::exists(go)) {
            fs::remove(local_log());
            std::ofstream(go).put('1');
        }
        if (command.find("cannot write $j/retaken") != std::string::npos)
            released_seen = !fs::exists(remote_dir() + "/.mlt/m/lock");
    };
    ASSERT_EQ(rig.run.run(), 0) << rig.rep.alerts;
    EXPECT_TRUE(released_seen) << "the follow did not release, or no lock was taken back";
    expect_released(rig.run.run_id(), rig.rep);
    EXPECT_NE(rig.rep.notices.find(": 1 file(s), 4 bytes (0 unchanged)"), std::string::npos)
        << rig.rep.notices;
}

// A run whose follow released the lock, and whose mlt was lost before it read that (a silent
// link, then killed): --resume takes the lock back and collects the run, as it would with
// the lock there. A lock released by the run's own release stays released.
TEST_F(TrainRunReleased, AResumeTakesBackALockItsFollowReleased) {
    run_before();
    {
        Rig rig(plan());
        ASSERT_EQ(rig.run.run(), 0) << rig.rep.alerts;
    }
    ASSERT_FALSE(fs::exists(remote_dir() + "/.mlt/m/lock"));
    mlt::TrainPlan p = plan();
    p.resume = true;
    Rig rig(p);
    ASSERT_EQ(rig.run.run(), 0) << rig.rep.alerts << rig.rep.notices;
    EXPECT_NE(rig.rep.notices.find("logs: "), std::string::npos) << rig.rep.notices;
    EXPECT_FALSE(fs::exists(remote_dir() + "/.mlt/m/lock")) << "the lock was not released";
    Rig again(p);
    try {
        again.run.run();
        FAIL() << "resumed a run whose lock its own release removed";
    } catch (const mlt::Error& e) {
        EXPECT_EQ(e.code(), mlt::exit_code::kConflict) << e.what();
    }
}

// Each remote command of such a run cut before it reached the remote, or after it ran with its
// reply lost: a follow that released and was lost leaves the lock to be taken back, and the
// run completes.
class TrainRunReleasedShellCut : public TrainRunReleased,
                                 public ::testing::WithParamInterface<std::tuple<int, Cut>> {};

TEST_P(TrainRunReleasedShellCut, ARunCutAtAnyCallCompletesOnce) {
    run_before();
    Rig rig(plan(), std::get<0>(GetParam()), std::get<1>(GetParam()));
    ASSERT_EQ(rig.run.run(), 0) << rig.rep.alerts << rig.rep.notices;
    EXPECT_EQ(rig.run.reconnects(), 1);
    expect_released(rig.run.run_id(), rig.rep);
}

INSTANTIATE_TEST_SUITE_P(EveryCall, TrainRunReleasedShellCut,
                         ::testing::Combine(::testing::Range(1, kReleasedShellRunCalls + 1),
                                            ::testing::Values(Cut::before, Cut::after)),
                         cut_name);

TEST_F(TrainRunTest, ARunWithoutAnArchiveNeverReturnsThePreviousOne) {
    {
        Rig rig(plan());
        ASSERT_EQ(rig.run.run(), 0);
    }
    const std::string first = slurp(dir_ + "/project/m.mltk.zip");
    ASSERT_FALSE(first.empty());
    mlt::TrainPlan p = plan();
    p.wrapper.train_cmd = "echo 'no archive this time'; exit 7";
    Rig rig(p);
    EXPECT_EQ(rig.run.run(), 7);
    EXPECT_EQ(slurp(dir_ + "/project/m.mltk.zip"), first) << "the local archive was replaced";
    EXPECT_NE(rig.rep.notices.find("no archive"), std::string::npos) << rig.rep.notices;
    EXPECT_TRUE(fs::exists(remote_dir() + "/.mlt/m/previous/m.mltk.zip"));
}

TEST_F(TrainRunTest, ReconnectsBackOffAndGiveUpAfterTheTimeoutWithTheResumeLine) {
    mlt::TrainPlan p = plan();
    p.reconnect_timeout_s = 100;
    Rig rig(p, 8);
    rig.connection.reachable = false;
    try {
        rig.run.run();
        FAIL() << "the run went on without a link";
    } catch (const mlt::Error& e) {
        EXPECT_EQ(e.code(), mlt::exit_code::kConnection);
        EXPECT_NE(std::string(e.what()).find("; gave up reconnecting after 1m40s (reconnect "
                                             "timeout 100 s)"),
                  std::string::npos)
            << e.what();
        EXPECT_NE(e.hint().find("mlt ssh -h fake train m --resume"), std::string::npos) << e.hint();
        EXPECT_EQ(e.hint().find("try again"), std::string::npos) << e.hint();
    }
    // 1, 2, 4, 8, 16, 30, 30, then what is left of the 100 s.
    ASSERT_GE(rig.clock.slept.size(), 7u);
    EXPECT_EQ(rig.clock.slept[0], 1);
    EXPECT_EQ(rig.clock.slept[1], 2);
    EXPECT_EQ(rig.clock.slept[4], 16);
    EXPECT_EQ(rig.clock.slept[5], 30);
    double total = 0;
    for (double s : rig.clock.slept) total += s;
    EXPECT_LE(total, 100.0);
    EXPECT_NE(rig.rep.alerts.find("(attempt 3, next in 4s)"), std::string::npos) << rig.rep.alerts;
}

TEST_F(TrainRunTest, FailedAttemptsAreRetriedUntilTheLinkIsBack) {
    Rig rig(plan(), 9);
    rig.connection.failures_left = 3;
    ASSERT_EQ(rig.run.run(), 0) << rig.rep.alerts;
    EXPECT_EQ(rig.connection.attempts, 4);
    EXPECT_EQ(rig.clock.slept, (std::vector<double>{1, 2, 4}));
    EXPECT_NE(rig.rep.alerts.find("is back after 7.0 s"), std::string::npos) << rig.rep.alerts;
    expect_complete(rig.run.run_id(), rig.rep);
}

TEST_F(TrainRunTest, WithReconnectingOffALostLinkEndsTheRunAtOnce) {
    mlt::TrainPlan p = plan();
    p.reconnect_timeout_s = 0;
    Rig rig(p, 9);
    EXPECT_THROW(rig.run.run(), mlt::Error);
    EXPECT_EQ(rig.connection.attempts, 0);
}

TEST_F(TrainRunTest, AChangedHostKeyOnReconnectEndsTheRunAndKeepsIt) {
    Rig rig(plan(), 9);
    rig.connection.refuse =
        mlt::Error(mlt::ErrorKind::host_key, "host key of [h]:22 changed between two connections");
    try {
        rig.run.run();
        FAIL() << "went on with another host key";
    } catch (const mlt::Error& e) {
        EXPECT_EQ(e.code(), mlt::exit_code::kHostKey);
        EXPECT_NE(e.hint().find("mlt ssh -h fake train m --resume"), std::string::npos) << e.hint();
    }
    EXPECT_EQ(rig.connection.attempts, 1);
    EXPECT_TRUE(fs::exists(remote_dir() + "/.mlt/m/lock")) << "the run must stay for --resume";
    int skipped = 0;
    auto runs = mlt::latest_per_run(mlt::read_history(mlt::history_path(), &skipped));
    ASSERT_FALSE(runs.empty());
    EXPECT_EQ(runs.back()["status"], "link lost");
}

TEST_F(TrainRunTest, AHostThatGoesAwayDuringShutdownEndsTheRunWithItsStatus) {
    // shutdown_cmds that power the host off: the results are home, the run ends after a
    // short try instead of the whole reconnect period.
    Rig rig(plan());
    rig.remote.cut_on = "cat > \"$j/shutdown.sh\"";  // starting shutdown_cmds
    rig.remote.mode = Cut::after;
    rig.connection.reachable = false;
    EXPECT_EQ(rig.run.run(), 0) << rig.rep.alerts;
    double waited = 0;
    for (double s : rig.clock.slept) waited += s;
    EXPECT_LE(waited, 30.0);
    EXPECT_NE(rig.rep.alerts.find("the results were collected"), std::string::npos)
        << rig.rep.alerts;
    EXPECT_EQ(slurp(dir_ + "/project/m.mltk.zip").substr(0, 11), "weights of ");
}

// Signals are process-wide: these run in a child process of their own (a death test).
TEST_F(TrainRunTest, SigtermWhileReconnectingLeavesTheJobRunning) {
    EXPECT_EXIT(
        {
            mlt::install_interrupt_handler();
            Rig rig(plan(), 0);
            rig.remote.cut_on = "mlt_send()";  // the first log follow: the job runs
            rig.remote.mode = Cut::before;
            rig.connection.reachable = false;
            rig.connection.on_attempt = [] { std::raise(SIGTERM); };
            const int code = rig.run.run();
            const bool said = rig.rep.alerts.find("STILL RUNNING") != std::string::npos &&
                              rig.rep.alerts.find("--resume") != std::string::npos;
            std::_Exit(said ? code : 1);
        },
        ::testing::ExitedWithCode(128 + SIGTERM), "");
}

TEST_F(TrainRunTest, CtrlCWhileReconnectingStopsTheJobOnceTheLinkIsBack) {
    EXPECT_EXIT(
        {
            mlt::install_interrupt_handler();
            Rig rig(plan(), 0);
            rig.remote.cut_on = "mlt_send()";
            rig.remote.mode = Cut::before;
            rig.connection.failures_left = 1;
            rig.connection.on_attempt = [&] {
                if (rig.connection.attempts == 1) std::raise(SIGINT);
            };
            const int code = rig.run.run();
            const bool stopped =
                rig.rep.alerts.find("stopping the remote job") != std::string::npos;
            std::_Exit(stopped ? code : 1);
        },
        ::testing::ExitedWithCode(130), "");
}

TEST_F(TrainRunTest, ARemoteErrorWhileTheJobRunsLeavesItAndItsShutdownAlone) {
    mlt::TrainPlan p = plan();
    p.wrapper.train_cmd = "echo 'line one'; sleep 1000";
    Rig rig(p);
    rig.remote.fail_on = "mlt_send()";  // the log follow fails (not the link)
    try {
        rig.run.run();
        FAIL() << "went on after the follow failed";
    } catch (const mlt::Error& e) {
        EXPECT_NE(e.hint().find("STILL RUNNING"), std::string::npos) << e.hint();
        EXPECT_NE(e.hint().find("mlt ssh -h fake stop m"), std::string::npos) << e.hint();
    }
    EXPECT_FALSE(fs::exists(remote_dir() + "/shutdowns.txt"))
        << "shutdown_cmds ran while the training was still running";
    EXPECT_TRUE(fs::exists(remote_dir() + "/.mlt/m/lock"));
    mlt::test::LocalRemote r;
    EXPECT_TRUE(mlt::JobDir(r, remote_dir(), "m").stop_job(1))
        << "the job was not running any more";
}

TEST_F(TrainRunTest, AnAttemptThatOutlastsTheReconnectPeriodEndsTheRun) {
    mlt::TrainPlan p = plan();
    p.reconnect_timeout_s = 20;
    Rig rig(p, 9);
    rig.connection.reachable = false;
    rig.connection.clock = &rig.clock;
    rig.connection.attempt_seconds = 15;  // each attempt waits for its connect timeout
    EXPECT_THROW(rig.run.run(), mlt::Error);
    for (double s : rig.clock.slept) EXPECT_GE(s, 0.0);
    EXPECT_EQ(rig.connection.attempts, 2);  // at 0 s and at 16 s; at 31 s the period is over
}

TEST_F(TrainRunTest, ResumeWithoutAJobIsAConflict) {
    mlt::TrainPlan p = plan();
    p.resume = true;
    Rig rig(p);
    try {
        rig.run.run();
        FAIL() << "resumed nothing";
    } catch (const mlt::Error& e) {
        EXPECT_EQ(e.code(), mlt::exit_code::kConflict);
    }
    EXPECT_FALSE(fs::exists(remote_dir() + "/launches.txt"));
}

}  // namespace
