#pragma once
// The fixture of the job protocol's tests against a real local shell (LocalRemote): a temp
// remote dir, a wrapper spec, and a started job. Its tests run once under each shell of
// job_shells() (dash, BusyBox's sh): INSTANTIATE_JOB_SHELLS(Fixture) after them.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "local_remote.h"
#include "mlt/job/job.h"
#include "mlt/util/paths.h"

namespace mlt::test {

namespace fs = std::filesystem;

// True when a process of group `pgid` is alive and not a zombie (this machine's pid 1 may
// be slow to reap, and kill(-pgid, 0) succeeds on zombies).
inline bool group_alive(long pgid) {
    for (const auto& entry : fs::directory_iterator("/proc")) {
        std::ifstream stat(entry.path() / "stat");
        std::string line;
        if (!std::getline(stat, line)) continue;
        auto close = line.rfind(')');
        if (close == std::string::npos) continue;
        std::istringstream rest(line.substr(close + 2));
        std::string state;
        long ppid = 0, pgrp = 0;
        rest >> state >> ppid >> pgrp;
        if (pgrp == pgid && state != "Z") return true;
    }
    return false;
}

// Follows the job of model m in `dir` to its end (JobDir::follow_to_end) into `log`; returns
// the offset.
inline uint64_t follow_to_end(mlt::Remote& r, const std::string& dir, std::string& log,
                              const std::string* run_id = nullptr, uint64_t offset = 0,
                              int seconds = 1) {
    mlt::JobDir(r, dir, "m")
        .follow_to_end(mlt::Task::job, run_id, offset, seconds,
                       [&](std::string_view d) { log += d; });
    return offset;
}

// The test's name for a shell parameter: its name.
inline std::string shell_param_name(const ::testing::TestParamInfo<std::string>& info) {
    return info.param;
}

class JobFixture : public ::testing::TestWithParam<std::string> {
  protected:
    // The shell this test runs the protocol with.
    LocalShell shell() const { return local_shell(GetParam()); }
    void SetUp() override {
        char tmpl[] = "/tmp/mlt-job-XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
    }
    void TearDown() override {
        // Never leave a test job behind.
        mlt::test::LocalRemote r(shell());
        job(r).stop_job(1);
        fs::remove_all(dir_);
    }
    // The job dir of model m in the test's remote dir, through `r`.
    mlt::JobDir job(mlt::Remote& r) const { return mlt::JobDir(r, dir_, "m"); }
    std::string read(const std::string& rel) { return mlt::read_file(dir_ + "/" + rel); }
    bool exists(const std::string& rel) { return fs::exists(dir_ + "/" + rel); }

    mlt::WrapperSpec wrapper(const std::string& run_id, const std::string& train_cmd) {
        mlt::WrapperSpec w;
        w.model = "m";
        w.run_id = run_id;
        w.spec_file = "m.py";
        w.log_dir = dir_ + "/logs";
        w.archive = "m.mltk.zip";
        w.startup_cmds = {"echo startup-ran"};
        w.train_cmd = train_cmd;
        return w;
    }
    mlt::NewRun new_run(const mlt::WrapperSpec& w) {
        return {w.run_id, "tester", mlt::make_wrapper_script(w), w.train_cmd, w.archive, false};
    }
    // Takes the lock for run `run_id` and starts its job.
    long start(mlt::test::LocalRemote& r, const std::string& train_cmd,
               std::vector<std::pair<std::string, std::string>> env = {},
               const std::string& run_id = "run-1") {
        mlt::WrapperSpec w = wrapper(run_id, train_cmd);
        w.environment = std::move(env);
        EXPECT_TRUE(job(r).acquire_run(new_run(w)));
        return job(r).start_job(run_id);
    }
    std::string dir_;
};

}  // namespace mlt::test

// Runs the tests of `fixture` (a JobFixture) under every shell of job_shells().
#define INSTANTIATE_JOB_SHELLS(fixture)                                                     \
    INSTANTIATE_TEST_SUITE_P(Shells, fixture, ::testing::ValuesIn(mlt::test::job_shells()), \
                             mlt::test::shell_param_name)
