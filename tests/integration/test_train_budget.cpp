// --max-hours and --max-cost: a run that reaches its limit stops its job (the whole process
// group, as `stop` does), still collects and runs shutdown_cmds, records "limit" in the
// history and exits 5, with the summary saying so.
#include <gtest/gtest.h>

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
        EXPECT_TRUE(has_text(r.out, "stopping the remote job of long") ||
                    has_text(r.err, "stopping the remote job of long"))
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
};

TEST_F(TrainBudgetTest, MaxHoursStopsTheJobCollectsAndExits5) {
    // 0.0005 h = 1.8 s.
    const ProcessResult r = mlt({"ssh", "train", "long", "--max-hours", "0.0005"});
    expect_limit_stop(r, "--max-hours 0.0005 (reached after ");
    EXPECT_TRUE(has_text(r.out, "training for long")) << describe(r);
}

TEST_F(TrainBudgetTest, MaxCostStopsTheJobAtItsPrice) {
    // $3600 an hour: $1 a second, so $2 within seconds.
    const ProcessResult r = mlt({"ssh", "train", "long", "--price", "3600", "--max-cost", "2"});
    expect_limit_stop(r, "--max-cost 2 (reached after ");
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

}  // namespace
}  // namespace mlt_test
