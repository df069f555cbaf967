// unattended_shutdown_minutes: when the job has ended and no mlt collected it in time, the guard
// on the host runs shutdown_cmds itself, once; a later --resume collects the results and says so.
// An mlt that collects first runs them as always, and the guard leaves them alone.
#include <gtest/gtest.h>

#include <string>

#include "harness/expect.h"
#include "harness/files.h"
#include "harness/train_fixture.h"

namespace mlt_test {
namespace {

class TrainUnattendedTest : public TrainTest {
  protected:
    void SetUp() override {
        TrainTest::SetUp();
        write_user_settings();
        write_shell_model("short",
                          "mkdir -p results && echo done > results/out.txt\n"
                          "echo trained\n");
        // 0.05 min = 3 s.
        write_model_settings("short",
                             "ssh:\n  train_cmd: \"sh {spec}\"\n"
                             "  download_files: [\"results/**\"]\n"
                             "  shutdown_cmds: [\"echo ran >> shutdown_runs\"]\n"
                             "  unattended_shutdown_minutes: 0.05\n");
    }
    std::string shutdown_runs() const { return read_or_empty(remote() + "/shutdown_runs"); }
};

TEST_F(TrainUnattendedTest, ANoWaitRunsShutdownCmdsOnTheHostAndResumeCollects) {
    const ProcessResult started = mlt({"ssh", "train", "short", "--no-wait"});
    ASSERT_EQ(started.exit_code, 0) << describe(started);
    EXPECT_TRUE(has_text(started.out + started.err, " runs shutdown_cmds (unattended_shutdown_"))
        << describe(started);
    ASSERT_TRUE(wait_until([&] { return shutdown_runs() == "ran\n"; }, std::chrono::seconds(60)))
        << job_state("short");
    EXPECT_TRUE(path_exists(job_file("short", "shutdown.unattended"))) << job_state("short");
    EXPECT_TRUE(has_text(read_or_empty(job_file("short", "console.log")),
                         "the host's guard runs shutdown_cmds"))
        << job_state("short");
    // The results wait on the host for a --resume.
    EXPECT_TRUE(path_exists(job_file("short", "lock"))) << job_state("short");
    const ProcessResult r = mlt({"ssh", "train", "short", "--resume"});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(has_text(r.out + r.err, "already ran unattended, by the guard on ")) << describe(r);
    EXPECT_EQ(read_or_empty(project() + "/results/out.txt"), "done\n") << describe(r);
    EXPECT_EQ(shutdown_runs(), "ran\n") << "shutdown_cmds ran twice";
    EXPECT_FALSE(path_exists(job_file("short", "lock"))) << job_state("short");
    // `jobs` marks the run as one that ended unattended.
    const ProcessResult jobs = mlt({"jobs"});
    EXPECT_TRUE(has_text(jobs.out, "success* ")) << describe(jobs);
    EXPECT_TRUE(has_text(jobs.out, "* ended unattended: the guard on the host ran shutdown_cmds"))
        << describe(jobs);
    ASSERT_FALSE(history().empty());
    EXPECT_EQ(history().back().at("shutdown"), "unattended") << read_or_empty(history_path());
}

TEST_F(TrainUnattendedTest, AnMltThatCollectsFirstRunsShutdownCmdsAndTheGuardLeavesThem) {
    const ProcessResult r = mlt({"ssh", "train", "short"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_EQ(shutdown_runs(), "ran\n");
    // The guard ends once it sees shutdown_cmds started by mlt (its pid file goes with it).
    EXPECT_TRUE(wait_until([&] { return !path_exists(job_file("short", "guard.pid")); },
                           std::chrono::seconds(30)))
        << job_state("short");
    EXPECT_FALSE(path_exists(job_file("short", "shutdown.unattended"))) << job_state("short");
    EXPECT_EQ(shutdown_runs(), "ran\n") << "shutdown_cmds ran twice";
    EXPECT_FALSE(has_text(mlt({"jobs"}).out, "ended unattended"));
}

}  // namespace
}  // namespace mlt_test
