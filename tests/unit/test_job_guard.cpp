// The host's guard (guard.sh, started by the wrapper when the lock holds a deadline), under dash
// and BusyBox's sh: it stops a job at its deadline and records why, and leaves a job that ends
// first alone; either way it ends with the job.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "job_fixture.h"
#include "local_remote.h"
#include "mlt/job/job.h"
#include "mlt/job/status.h"
#include "wait_until.h"

namespace fs = std::filesystem;

namespace {

using mlt::test::wait_until;

class JobGuard : public mlt::test::JobFixture {
  protected:
    // Takes the lock for run-1 with `budget_s` seconds left (limit "--max-hours 9") and starts
    // `train_cmd`.
    void start_with_budget(mlt::test::LocalRemote& r, const std::string& train_cmd, long budget_s) {
        mlt::NewRun run = new_run(wrapper("run-1", train_cmd));
        run.budget_seconds = budget_s;
        run.limit = "--max-hours 9";
        ASSERT_TRUE(job(r).acquire_run(run));
        job(r).start_job("run-1");
    }
    // Whether a guard of this job dir still runs: its argv holds guard.sh's text and names
    // the run and the job dir, and it runs in this test's remote dir.
    bool guard_alive() const {
        for (const auto& entry : fs::directory_iterator("/proc")) {
            std::ifstream in(entry.path() / "cmdline");
            std::string cmdline, arg;
            while (std::getline(in, arg, '\0')) cmdline += arg + '\0';
            if (cmdline.find("mlt_dl=") != std::string::npos &&
                cmdline.find(std::string("run-1") + '\0' + ".mlt/m") != std::string::npos) {
                std::error_code ec;
                if (fs::equivalent(fs::read_symlink(entry.path() / "cwd", ec), dir_, ec))
                    return true;
            }
        }
        return false;
    }
};

TEST_P(JobGuard, StopsTheJobAtItsDeadlineWithNoClientAndRecordsWhy) {
    mlt::test::LocalRemote r(shell());
    start_with_budget(r, "echo training; sleep 60", 1);
    EXPECT_NE(read(".mlt/m/lock").find("limit=--max-hours 9\n"), std::string::npos);
    EXPECT_TRUE(wait_until([&] { return guard_alive(); }, std::chrono::seconds(10)));
    ASSERT_TRUE(wait_until([&] { return exists(".mlt/m/exit_status"); }, std::chrono::seconds(30)))
        << read(".mlt/m/console.log");
    EXPECT_EQ(read(".mlt/m/guard.stop"), "limit --max-hours 9\n");
    EXPECT_EQ(read(".mlt/m/stopped"), "143\n");
    EXPECT_NE(read(".mlt/m/console.log").find("mlt: --max-hours 9 reached: the host's guard stops"),
              std::string::npos)
        << read(".mlt/m/console.log");
    const mlt::JobResult result = job(r).read_job_result();
    EXPECT_EQ(result.guard_stop, "limit --max-hours 9");
    EXPECT_EQ(result.stopped_with, 143);
    EXPECT_TRUE(wait_until([&] { return !guard_alive(); }, std::chrono::seconds(10)));
}

TEST_P(JobGuard, LeavesAJobThatEndsFirstAloneAndEndsWithIt) {
    mlt::test::LocalRemote r(shell());
    start_with_budget(r, "echo training; sleep 1", 3600);
    EXPECT_TRUE(wait_until([&] { return guard_alive(); }, std::chrono::seconds(10)));
    ASSERT_TRUE(wait_until([&] { return exists(".mlt/m/exit_status"); }, std::chrono::seconds(30)));
    EXPECT_EQ(read(".mlt/m/exit_status"), "0\n");
    EXPECT_FALSE(exists(".mlt/m/guard.stop"));
    EXPECT_FALSE(exists(".mlt/m/stopped"));
    // The wrapper ends it as the job ends.
    EXPECT_TRUE(wait_until([&] { return !guard_alive(); }, std::chrono::seconds(20)));
    EXPECT_EQ(job(r).read_job_result().guard_stop, "");
}

TEST_P(JobGuard, NoDeadlineNoGuard) {
    mlt::test::LocalRemote r(shell());
    start(r, "echo training; sleep 1");
    EXPECT_EQ(read(".mlt/m/lock").find("deadline="), std::string::npos);
    EXPECT_FALSE(guard_alive());
    ASSERT_TRUE(wait_until([&] { return exists(".mlt/m/exit_status"); }, std::chrono::seconds(30)));
    EXPECT_FALSE(exists(".mlt/m/guard.stop"));
}

// watch.silent_minutes with stop_silent: a job that prints nothing more is stopped, and why
// is recorded; without stop_silent it is only said, once per silence, and the job goes on.
TEST_P(JobGuard, StopsASilentJobWithStopSilent) {
    mlt::test::LocalRemote r(shell());
    mlt::NewRun run = new_run(wrapper("run-1", "echo training; sleep 60"));
    run.silent_seconds = 2;
    run.stop_silent = true;
    ASSERT_TRUE(job(r).acquire_run(run));
    job(r).start_job("run-1");
    ASSERT_TRUE(wait_until([&] { return exists(".mlt/m/exit_status"); }, std::chrono::seconds(30)))
        << read(".mlt/m/console.log");
    EXPECT_EQ(read(".mlt/m/guard.stop"), "silent 2\n");
    EXPECT_EQ(read(".mlt/m/stopped"), "143\n");
    EXPECT_NE(read(".mlt/m/console.log")
                  .find("mlt: no new console output for 2 s (watch.silent_minutes): the host's "
                        "guard stops the job"),
              std::string::npos)
        << read(".mlt/m/console.log");
    EXPECT_EQ(job(r).read_job_result().guard_stop, "silent 2");
}

TEST_P(JobGuard, SaysWhenAJobIsSilentAndLetsItGoOnWithoutStopSilent) {
    mlt::test::LocalRemote r(shell());
    mlt::NewRun run =
        new_run(wrapper("run-1",
                        "echo training; i=0; while [ ! -e go ] && [ $i -lt 600 ]; do sleep 0.05; "
                        "i=$((i+1)); done; echo done"));
    run.silent_seconds = 1;
    ASSERT_TRUE(job(r).acquire_run(run));
    job(r).start_job("run-1");
    ASSERT_TRUE(wait_until(
        [&] { return read(".mlt/m/console.log").find("the job may hang") != std::string::npos; },
        std::chrono::seconds(20)))
        << read(".mlt/m/console.log");
    std::ofstream(dir_ + "/go").put('\n');
    ASSERT_TRUE(wait_until([&] { return exists(".mlt/m/exit_status"); }, std::chrono::seconds(30)));
    EXPECT_EQ(read(".mlt/m/exit_status"), "0\n");
    EXPECT_FALSE(exists(".mlt/m/guard.stop"));
    EXPECT_NE(read(".mlt/m/console.log").find("done\n"), std::string::npos);
}

// `status` tells a running guard from one that is gone (killed), and start_guard brings it back.
TEST_P(JobGuard, StatusTellsAGoneGuardAndStartGuardStartsItAgain) {
    mlt::test::LocalRemote r(shell());
    start_with_budget(r, "echo training; sleep 60", 3600);
    ASSERT_TRUE(wait_until([&] { return guard_alive() && exists(".mlt/m/guard.pid"); },
                           std::chrono::seconds(10)));
    auto jobs = job(r).query_jobs();
    ASSERT_EQ(jobs.size(), 1u);
    EXPECT_EQ(jobs.front().guard, mlt::GuardState::running);
    EXPECT_EQ(jobs.front().limit, "--max-hours 9");
    EXPECT_GT(jobs.front().deadline, jobs.front().remote_now + 3500);
    ::kill(static_cast<pid_t>(std::stol(read(".mlt/m/guard.pid"))), SIGKILL);
    ASSERT_TRUE(wait_until([&] { return !guard_alive(); }, std::chrono::seconds(10)));
    EXPECT_EQ(job(r).query_jobs().front().guard, mlt::GuardState::gone);
    EXPECT_TRUE(job(r).start_guard("run-1"));
    EXPECT_TRUE(wait_until([&] { return guard_alive(); }, std::chrono::seconds(10)));
    EXPECT_TRUE(
        wait_until([&] { return job(r).query_jobs().front().guard == mlt::GuardState::running; },
                   std::chrono::seconds(10)));
    EXPECT_FALSE(job(r).start_guard("run-1")) << "a second guard beside a running one";
    EXPECT_TRUE(job(r).stop_job(1));
    EXPECT_TRUE(wait_until([&] { return !guard_alive(); }, std::chrono::seconds(10)));
}

// watch.idle_gpu_minutes with stop_idle, on a host whose nvidia-smi (a stand-in first on PATH:
// a dir of chosen links, the shell's and the stand-in) says every GPU is under 10 %: the guard
// samples every second into the samples file, and stops the job once the GPUs were idle 2 s.
TEST_P(JobGuard, SamplesTheHostAndStopsAnIdleJobWithStopIdle) {
    mlt::test::LocalShell sh = shell();
    const std::string bin = dir_ + "/bin";
    fs::create_directories(bin);
    for (const auto& entry : fs::directory_iterator(sh.path_dir))
        fs::create_symlink(fs::read_symlink(entry.path()),
                           bin + "/" + entry.path().filename().string());
    std::ofstream(bin + "/nvidia-smi") << "#!/bin/sh\necho '3, 100, 81920'\necho '9, 200, 81920'\n";
    fs::permissions(bin + "/nvidia-smi", fs::perms::owner_all);
    sh.path_dir = bin;
    mlt::test::LocalRemote r(sh);
    mlt::NewRun run = new_run(wrapper("run-1", "echo training; sleep 60"));
    run.idle_seconds = 2;
    run.stop_idle = true;
    run.sample_every = 1;
    ASSERT_TRUE(job(r).acquire_run(run));
    EXPECT_NE(read(".mlt/m/lock").find("idle=2\nidle_stop=1\nidle_below=10\nevery=1\n"),
              std::string::npos)
        << read(".mlt/m/lock");
    job(r).start_job("run-1");
    ASSERT_TRUE(wait_until([&] { return exists(".mlt/m/exit_status"); }, std::chrono::seconds(30)))
        << read(".mlt/m/console.log");
    EXPECT_EQ(read(".mlt/m/guard.stop").rfind("idle ", 0), 0u) << read(".mlt/m/guard.stop");
    EXPECT_EQ(read(".mlt/m/stopped"), "143\n");
    EXPECT_NE(read(".mlt/m/console.log").find("mlt: every GPU was under 10 % for "),
              std::string::npos)
        << read(".mlt/m/console.log");
    const std::string samples = read(".mlt/m/samples");
    // The first idle sample starts the idle time; a later one at least 2 s on ends it.
    EXPECT_GE(std::count(samples.begin(), samples.end(), '\n'), 2) << samples;
    EXPECT_NE(samples.find(" gpu=3,100,81920;9,200,81920 load="), std::string::npos) << samples;
}

INSTANTIATE_JOB_SHELLS(JobGuard);

// The "busybox" shell of these tests is a BusyBox-only host as the scripts see it: its sh and
// its awk come first on PATH.
TEST(JobShells, TheBusyboxShellRunsBusyboxsAwkToo) {
    mlt::test::LocalRemote r(mlt::test::local_shell("busybox"));
    const mlt::RemoteOutput out = r.run("readlink -f \"$(command -v awk)\"");
    EXPECT_EQ(out.exit_status, 0) << out.err;
    EXPECT_NE(out.out.find("busybox"), std::string::npos) << out.out;
}

}  // namespace
