// --max-hours and --max-cost: a run that reaches its limit stops its job (the whole process
// group, as `stop` does), still collects and runs shutdown_cmds, records "limit" in the
// history and exits 5, with the summary saying so; with no mlt attached, the guard on the host
// stops it.
#include <gtest/gtest.h>
#include <signal.h>

#include <string>

#include "harness/expect.h"
#include "harness/files.h"
#include "harness/train_fixture.h"

namespace mlt_test {
namespace {

// Writes a partial result, then trains "for two minutes" (bounded, so that a limit that
// does not stop it fails the test instead of hanging it) with a child in its group.
const char* const kLongModel =
    "mkdir -p results && echo partial > results/partial.txt\n"
    "sleep 120 &\n"
    "echo $! >> pids.txt\n"
    "echo $$ >> pids.txt\n"
    "echo 'training for long'\n"
    "wait\n";

class TrainBudgetTest : public TrainTest {
  protected:
    void SetUp() override {
        TrainTest::SetUp();
        write_user_settings();
        write_shell_model("long", kLongModel);
        write_model_settings("long",
                             "ssh:\n  train_cmd: \"sh {spec}\"\n"
                             "  download_files: [\"results/**\"]\n"
                             "  shutdown_cmds: [\"touch shutdown_ran\"]\n");
    }
    // What every limit leaves: exit 5, the job's processes gone, its results here,
    // shutdown_cmds run, the lock released, the history's record and the summary.
    void expect_limit_stop(const ProcessResult& r, const std::string& limit) {
        EXPECT_EQ(r.exit_code, 5) << describe(r) << job_state("long");
        EXPECT_TRUE(has_text(r.err + r.out, limit)) << describe(r);
        // mlt stops the job at the limit; the host's guard, 5 s later, only when mlt was late.
        EXPECT_TRUE(has_text(r.out + r.err, "stopping the remote job of long") ||
                    has_text(r.out + r.err, " stopped the job): collecting the results of long"))
            << describe(r);
        EXPECT_TRUE(wait_pids_gone(remote() + "/pids.txt")) << "the job's group lives on";
        EXPECT_EQ(read_or_empty(project() + "/results/partial.txt"), "partial\n") << describe(r);
        EXPECT_TRUE(path_exists(remote() + "/shutdown_ran")) << describe(r);
        EXPECT_FALSE(path_exists(job_file("long", "lock"))) << job_state("long");
        EXPECT_TRUE(has_text(r.out, "summary of run ")) << describe(r);
        EXPECT_TRUE(has_text(r.out, "(exit 5)")) << describe(r);
        const auto runs = history();
        ASSERT_EQ(runs.size(), 1u) << read_or_empty(history_path());
        EXPECT_EQ(runs.back().at("status"), "limit") << read_or_empty(history_path());
        EXPECT_TRUE(has_text(runs.back().at("attempts"), "\"how\":\"limit\""))
            << read_or_empty(history_path());
    }
    // With no mlt attached: the guard stops the job (its deadline, plus its 5 s; or silence)
    // and records why (`record`, `words` in the console log); the job's processes go.
    void expect_stopped_on_the_host(const std::string& record, const std::string& words) {
        ASSERT_TRUE(wait_until([&] { return path_exists(job_file("long", "exit_status")); },
                               std::chrono::seconds(60)))
            << job_state("long");
        EXPECT_EQ(read_or_empty(job_file("long", "guard.stop")), record + "\n")
            << job_state("long");
        EXPECT_EQ(read_or_empty(job_file("long", "stopped")), "143\n") << job_state("long");
        EXPECT_TRUE(wait_pids_gone(remote() + "/pids.txt")) << "the job's group lives on";
        EXPECT_TRUE(has_text(read_or_empty(job_file("long", "console.log")),
                             "mlt: " + words + ": the host's guard stops the job"))
            << job_state("long");
    }
    // A later --resume: the results home, shutdown_cmds run, exit 5, why named (`stopped_by`).
    void expect_resume_reports(const std::string& stopped_by) {
        const ProcessResult r = mlt({"ssh", "train", "long", "--resume"});
        EXPECT_EQ(r.exit_code, 5) << describe(r) << job_state("long");
        EXPECT_TRUE(has_text(r.out + r.err, "stopped by " + stopped_by)) << describe(r);
        EXPECT_EQ(read_or_empty(project() + "/results/partial.txt"), "partial\n") << describe(r);
        EXPECT_TRUE(path_exists(remote() + "/shutdown_ran")) << describe(r);
        EXPECT_FALSE(path_exists(job_file("long", "lock"))) << job_state("long");
        const auto runs = history();
        ASSERT_FALSE(runs.empty()) << read_or_empty(history_path());
        EXPECT_EQ(runs.back().at("status"), "limit") << read_or_empty(history_path());
    }
};

TEST_F(TrainBudgetTest, MaxHoursStopsTheJobCollectsAndExits5) {
    // 0.0005 h = 1.8 s.
    const ProcessResult r = mlt({"ssh", "train", "long", "--max-hours", "0.0005"});
    expect_limit_stop(r, "--max-hours 0.0005 (reached");
    EXPECT_TRUE(has_text(r.out, "training for long")) << describe(r);
}

TEST_F(TrainBudgetTest, MaxCostStopsTheJobAtItsPrice) {
    // $3600 an hour: $1 a second, so $2 within seconds.
    const ProcessResult r = mlt({"ssh", "train", "long", "--price", "3600", "--max-cost", "2"});
    expect_limit_stop(r, "--max-cost 2 (reached");
    const auto runs = history();
    ASSERT_FALSE(runs.empty());
    EXPECT_EQ(std::stod(runs.back().at("price_per_hour")), 3600) << read_or_empty(history_path());
    EXPECT_TRUE(has_text(r.out, "; cost: $")) << describe(r);
}

// The price from the settings; the table of `mlt jobs` shows attempts and cost.
TEST_F(TrainBudgetTest, PriceFromTheSettingsShowsInTheSummaryAndJobs) {
    write_shell_model("quick", "echo quick\n");
    write_model_settings("quick", "ssh:\n  train_cmd: \"sh {spec}\"\n  price_per_hour: 36\n");
    ProcessResult r = mlt({"ssh", "train", "quick"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(has_text(r.out, "summary of run ")) << describe(r);
    EXPECT_TRUE(has_text(r.out, "at $36.00/h")) << describe(r);
    r = mlt({"jobs"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(has_text(r.out, "ATTEMPTS")) << describe(r);
    EXPECT_TRUE(has_text(r.out, "$")) << describe(r);
    r = mlt({"jobs", "--json"});
    EXPECT_TRUE(has_text(r.out, "\"price_per_hour\": 36")) << describe(r);
    EXPECT_TRUE(has_text(r.out, "\"attempts\": [")) << describe(r);
}

// The host's guard (guard.sh): the limit holds on the host with no mlt attached (--no-wait, or
// the client killed with kill -9): the job is stopped there, the guard records why, and a later
// --resume collects the results and ends as the limit says.
TEST_F(TrainBudgetTest, ANoWaitRunIsStoppedOnTheHostAtItsDeadline) {
    // 0.001 h = 3.6 s.
    const ProcessResult started =
        mlt({"ssh", "train", "long", "--no-wait", "--max-hours", "0.001"});
    ASSERT_EQ(started.exit_code, 0) << describe(started);
    EXPECT_TRUE(has_text(read_or_empty(job_file("long", "lock")), "limit=--max-hours 0.001\n"))
        << job_state("long");
    expect_stopped_on_the_host("limit --max-hours 0.001", "--max-hours 0.001 reached");
    expect_resume_reports("--max-hours 0.001 (reached; the guard on ");
}

TEST_F(TrainBudgetTest, AKilledClientsMaxCostIsEnforcedOnTheHost) {
    // $3600 an hour: $1 a second, so $3 within seconds.
    auto run = start_mlt({"ssh", "train", "long", "--price", "3600", "--max-cost", "3"});
    ASSERT_TRUE(wait_until([&] { return has_text(read_or_empty(remote() + "/pids.txt"), "\n"); },
                           std::chrono::seconds(60)))
        << job_state("long");
    run->signal(SIGKILL);
    run->wait(std::chrono::seconds(20));
    expect_stopped_on_the_host("limit --max-cost 3", "--max-cost 3 reached");
    expect_resume_reports("--max-cost 3 (reached; the guard on ");
}

// A --resume with a limit hands the host's guard what is left of it: the limit of the run
// started without one (and no guard) holds on the host from then on, with no mlt attached.
TEST_F(TrainBudgetTest, AResumeWithALimitSetsTheHostsDeadlineAnew) {
    const ProcessResult started = mlt({"ssh", "train", "long", "--no-wait"});
    ASSERT_EQ(started.exit_code, 0) << describe(started);
    EXPECT_FALSE(has_text(read_or_empty(job_file("long", "lock")), "deadline="));
    ASSERT_TRUE(wait_until([&] { return has_text(read_or_empty(remote() + "/pids.txt"), "\n"); },
                           std::chrono::seconds(60)))
        << job_state("long");
    const ProcessResult resumed =
        mlt({"ssh", "train", "long", "--resume", "--no-wait", "--max-hours", "0.002"});
    ASSERT_EQ(resumed.exit_code, 0) << describe(resumed);
    EXPECT_TRUE(has_text(read_or_empty(job_file("long", "lock")), "limit=--max-hours 0.002\n"))
        << job_state("long");
    expect_stopped_on_the_host("limit --max-hours 0.002", "--max-hours 0.002 reached");
    expect_resume_reports("--max-hours 0.002 (reached; the guard on ");
}

// watch.silent_minutes with stop_silent: a job that prints nothing more (a hung collective) is
// stopped by the guard with no mlt attached, and ends as a limit does.
TEST_F(TrainBudgetTest, ASilentJobIsStoppedOnTheHostWithStopSilent) {
    write_model_settings("long",
                         "ssh:\n  train_cmd: \"sh {spec}\"\n"
                         "  download_files: [\"results/**\"]\n"
                         "  shutdown_cmds: [\"touch shutdown_ran\"]\n"
                         "  watch: {silent_minutes: 0.05, stop_silent: true}\n");
    const ProcessResult started = mlt({"ssh", "train", "long", "--no-wait"});
    ASSERT_EQ(started.exit_code, 0) << describe(started);
    expect_stopped_on_the_host("silent 3", "no new console output for 3 s (watch.silent_minutes)");
    expect_resume_reports(
        "watch.silent_minutes 0.05 (no new console output for 3 s; the guard on ");
}

// The guard killed with kill -9: `status` says nothing guards the job, and a --resume starts it
// again, which then stops the job at its deadline with no mlt attached.
TEST_F(TrainBudgetTest, AKilledGuardIsNamedByStatusAndStartedAgainByResume) {
    // 0.005 h = 18 s: room for the commands below before the deadline on a loaded machine.
    const ProcessResult started =
        mlt({"ssh", "train", "long", "--no-wait", "--max-hours", "0.005"});
    ASSERT_EQ(started.exit_code, 0) << describe(started);
    ASSERT_TRUE(wait_until([&] { return !read_or_empty(job_file("long", "guard.pid")).empty(); },
                           std::chrono::seconds(30)))
        << job_state("long");
    ::kill(static_cast<pid_t>(std::stol(read_or_empty(job_file("long", "guard.pid")))), SIGKILL);
    ProcessResult status;
    EXPECT_TRUE(wait_until(
        [&] {
            status = mlt({"ssh", "status", "long"});
            return has_text(status.out, "guard: NOT RUNNING on the host");
        },
        std::chrono::seconds(30)))
        << describe(status);
    const ProcessResult resumed = mlt({"ssh", "train", "long", "--resume", "--no-wait"});
    EXPECT_EQ(resumed.exit_code, 0) << describe(resumed);
    EXPECT_TRUE(has_text(resumed.out + resumed.err,
                         "was not running (its process was gone): started it again"))
        << describe(resumed);
    status = mlt({"ssh", "status", "long"});
    EXPECT_TRUE(has_text(status.out,
                         "guard: running on the host; stops the job at --max-hours "
                         "0.005"))
        << describe(status);
    expect_stopped_on_the_host("limit --max-hours 0.005", "--max-hours 0.005 reached");
    expect_resume_reports("--max-hours 0.005 (reached; the guard on ");
}

}  // namespace
}  // namespace mlt_test
