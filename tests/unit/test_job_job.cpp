// The job protocol against a real local shell (LocalRemote): lock, wrapper, start, follow, stop.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>
#include <thread>

#include "local_remote.h"
#include "mlt/job/job.h"
#include "mlt/job/status.h"
#include "mlt/util/paths.h"

namespace fs = std::filesystem;

namespace {

// True when a process of group `pgid` is alive and not a zombie (this machine's pid 1 may
// be slow to reap, and kill(-pgid, 0) succeeds on zombies).
bool group_alive(long pgid) {
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

class JobProtocol : public ::testing::Test {
protected:
    void SetUp() override {
        char tmpl[] = "/tmp/mlt-job-XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
    }
    void TearDown() override {
        // Never leave a test job behind.
        mlt::test::LocalRemote r;
        mlt::stop_job(r, dir_, "m", 1);
        fs::remove_all(dir_);
    }
    std::string read(const std::string& rel) { return mlt::read_file(dir_ + "/" + rel); }

    // Starts a wrapper whose training command is `train_cmd`.
    long start(mlt::test::LocalRemote& r, const std::string& train_cmd,
               std::vector<std::pair<std::string, std::string>> env = {}) {
        mlt::WrapperSpec w;
        w.model = "m";
        w.spec_file = "m.py";
        w.log_dir = dir_ + "/logs";
        w.archive = "m.mltk.zip";
        w.environment = std::move(env);
        w.startup_cmds = {"echo startup-ran"};
        w.train_cmd = train_cmd;
        EXPECT_TRUE(mlt::acquire_lock(r, dir_, "m", "tester"));
        return mlt::start_job(r, dir_, "m", mlt::make_wrapper_script(w), train_cmd);
    }
    std::string dir_;
};

TEST_F(JobProtocol, ExactlyOneOfConcurrentLaunchesGetsTheLock) {
    std::vector<std::future<bool>> results;
    for (int i = 0; i < 8; ++i)
        results.push_back(std::async(std::launch::async, [this, i] {
            mlt::test::LocalRemote r;
            return mlt::acquire_lock(r, dir_, "m", "launcher " + std::to_string(i));
        }));
    int winners = 0;
    for (auto& f : results) winners += f.get() ? 1 : 0;
    EXPECT_EQ(winners, 1);
    EXPECT_NE(read(".mlt/m/lock").find("owner=launcher "), std::string::npos);
    mlt::test::LocalRemote r;
    mlt::release_lock(r, dir_, "m");
    EXPECT_TRUE(mlt::acquire_lock(r, dir_, "m", "again"));
}

TEST_F(JobProtocol, RunsStartupThenTrainingAndRecordsStatusAndLog) {
    mlt::test::LocalRemote r;
    long pgid = start(r, "echo out; echo err >&2; exit 7");
    EXPECT_GT(pgid, 0);
    std::string log;
    uint64_t offset = mlt::read_console(r, dir_, "m", 0, true, [&](std::string_view d) { log += d; });
    EXPECT_EQ(offset, log.size());
    EXPECT_NE(log.find("startup-ran\n"), std::string::npos) << log;
    EXPECT_NE(log.find("out\n"), std::string::npos);
    EXPECT_NE(log.find("err\n"), std::string::npos);  // stderr lands in the console log too
    auto [status, sha] = mlt::read_job_result(r, dir_, "m");
    EXPECT_EQ(status, 7);
    EXPECT_TRUE(sha.empty());
    EXPECT_TRUE(fs::is_directory(dir_ + "/logs"));  // MLT_LOG_DIR created
    // Reading again from the end gives nothing new: byte offsets, no repeats.
    std::string more;
    mlt::read_console(r, dir_, "m", offset, false, [&](std::string_view d) { more += d; });
    EXPECT_EQ(more, "");
}

TEST_F(JobProtocol, FailingStartupStopsBeforeTraining) {
    mlt::test::LocalRemote r;
    mlt::WrapperSpec w;
    w.model = "m";
    w.log_dir = dir_ + "/logs";
    w.archive = "a.zip";
    w.startup_cmds = {"false", "echo second-startup"};
    w.train_cmd = "echo training-ran";
    ASSERT_TRUE(mlt::acquire_lock(r, dir_, "m", "t"));
    mlt::start_job(r, dir_, "m", mlt::make_wrapper_script(w), w.train_cmd);
    std::string log;
    mlt::read_console(r, dir_, "m", 0, true, [&](std::string_view d) { log += d; });
    EXPECT_EQ(log.find("second-startup\n"), std::string::npos) << log;
    EXPECT_EQ(log.find("training-ran\n"), std::string::npos) << log;
    EXPECT_EQ(mlt::read_job_result(r, dir_, "m").first, 1);
}

TEST_F(JobProtocol, EnvironmentKeepsQuotesAndExpandsVariables) {
    mlt::test::LocalRemote r;
    start(r, "printf '[%s][%s][%s]\\n' \"$A\" \"$B\" \"$MLT_MODEL\"",
          {{"A", "two words \"quoted\" it's `x`"}, {"B", "$HOME/data"}});
    std::string log;
    mlt::read_console(r, dir_, "m", 0, true, [&](std::string_view d) { log += d; });
    const std::string home = mlt::home_dir();
    EXPECT_NE(log.find("[two words \"quoted\" it's `x`][" + home + "/data][m]"), std::string::npos) << log;
}

TEST_F(JobProtocol, StopKillsTheWholeProcessGroup) {
    mlt::test::LocalRemote r;
    // The training leaves a grandchild behind and ignores TERM itself: only KILL ends it.
    long pgid = start(r, "sleep 1000 & echo $! > child.pid; trap '' TERM; while :; do sleep 0.1; done");
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!fs::exists(dir_ + "/child.pid") && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ASSERT_TRUE(fs::exists(dir_ + "/child.pid"));
    auto jobs = mlt::query_jobs(r, dir_, "m");
    ASSERT_EQ(jobs.size(), 1u);
    EXPECT_EQ(jobs[0].state, mlt::JobState::running);
    EXPECT_EQ(jobs[0].pgid, pgid);

    EXPECT_TRUE(mlt::stop_job(r, dir_, "m", 1));
    EXPECT_FALSE(group_alive(pgid));  // the wrapper, the TERM-proof loop and the grandchild
    EXPECT_EQ(mlt::read_job_result(r, dir_, "m").first, 137);  // recorded by the stopper
    EXPECT_FALSE(mlt::stop_job(r, dir_, "m", 1));               // nothing left to stop
}

TEST_F(JobProtocol, TermIsRecordedByTheWrapper) {
    mlt::test::LocalRemote r;
    start(r, "sleep 1000");
    EXPECT_TRUE(mlt::stop_job(r, dir_, "m", 5));
    EXPECT_EQ(mlt::read_job_result(r, dir_, "m").first, 143);
}

TEST(JobPlaceholders, FilledQuotedAndUnknownKept) {
    EXPECT_EQ(mlt::fill_placeholders("mltk train {model} --x {nope} {log_dir}",
                                     {{"model", "my model"}, {"log_dir", "~/logs/m"}}),
              "mltk train 'my model' --x {nope} \"$HOME\"/logs/m");
}

}  // namespace
