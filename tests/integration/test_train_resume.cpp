// A pull cut by kill -9 of the mlt client is continued, not restarted, by the next command:
// the bytes already written stay in `.<name>.mlt-resume-<mtime>` next to the target (for a
// log dir pull: in its staging dir `.mlt-pull`). The
// kill comes as soon as that file has bytes; the files are big enough (256 MiB over
// loopback) that the pull is then far from done.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "harness/expect.h"
#include "harness/files.h"
#include "harness/train_fixture.h"
#include "mlt/transfer/ranges.h"

namespace mlt_test {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kBigBytes = 256ull * 1024 * 1024;

// A shell command writing kBigBytes of a number sequence to `path`: distinct bytes
// everywhere, so that bytes put at a wrong offset change the sha256.
std::string write_big(const std::string& path) {
    return "seq 1 50000000 | head -c " + std::to_string(kBigBytes) + " > " + path + "\n";
}

// How many ranges of the ranged partial copy of `leaf` in `dir` are done (its state file's
// lines after the first); 0 when there is none.
uint64_t done_ranges(const std::string& dir, const std::string& leaf) {
    const std::string state = read_or_empty(dir + "/." + leaf + ".mlt-ranges.state");
    const auto lines = static_cast<uint64_t>(std::count(state.begin(), state.end(), '\n'));
    return lines > 1 ? lines - 1 : 0;
}

// The size of the first resume file of `leaf` in `dir`; 0 when there is none.
uint64_t resume_file_size(const std::string& dir, const std::string& leaf) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
        if (e.path().filename().string().rfind("." + leaf + ".mlt-resume-", 0) != 0) continue;
        const auto size = fs::file_size(e.path(), ec);
        return ec ? 0 : size;
    }
    return 0;
}

class TrainResumeTest : public TrainTest {
  protected:
    // Runs `mlt args...`, kills it (SIGKILL) as soon as a resume file of `leaf` in `dir` has
    // bytes, and returns how many it kept; 0 (with a test failure) when that did not happen
    // while the pull was under way.
    uint64_t kill_during_pull(const std::vector<std::string>& args, const std::string& dir,
                              const std::string& leaf) {
        auto run = start_mlt(args);
        const bool pulling =
            wait_until([&] { return resume_file_size(dir, leaf) > 0; }, kTrainTimeout);
        if (!pulling) {
            ADD_FAILURE() << "no resume file of " << leaf << " appeared\n"
                          << run->out() << run->err() << job_state("big");
            return 0;
        }
        run->signal(SIGKILL);
        ProcessResult r = run->wait(kTrainTimeout);
        EXPECT_FALSE(r.timed_out) << describe(r);
        if (path_exists(dir + "/" + leaf)) {
            ADD_FAILURE() << "the pull ended before the kill; the cut was not exercised\n"
                          << describe(r);
            return 0;
        }
        const uint64_t kept = resume_file_size(dir, leaf);
        EXPECT_LT(kept, kBigBytes);
        return kept;
    }
};

TEST_F(TrainResumeTest, ArchivePullKilledMidwayIsResumedByTrainResume) {
    write_shell_model("big", write_big("\"$MLT_ARCHIVE\""));
    write_model_settings("big", "ssh:\n  train_cmd: \"sh {spec}\"\n");
    write_user_settings();
    const uint64_t kept = kill_during_pull({"ssh", "train", "big"}, project(), "big.mltk.zip");
    ASSERT_GT(kept, 0u);

    ProcessResult resumed = mlt({"ssh", "train", "big", "--resume"});
    ASSERT_EQ(resumed.exit_code, 0) << describe(resumed);
    // Continued from the kept bytes, not fetched whole again.
    EXPECT_TRUE(has_text(resumed.err, "resumed")) << describe(resumed);
    EXPECT_TRUE(has_text(resumed.err, "after " + std::to_string(kept) + " bytes"))
        << describe(resumed);
    EXPECT_EQ(fs::file_size(local_archive("big")), kBigBytes);
    EXPECT_EQ(sha256_of(local_archive("big")), sha256_of(remote() + "/big.mltk.zip"));
    EXPECT_EQ(sha256_of(local_archive("big")), trim(read_or_empty(job_file("big", "sha256"))));
    EXPECT_EQ(resume_file_size(project(), "big.mltk.zip"), 0u) << "a resume file was left";
    EXPECT_FALSE(path_exists(job_file("big", "lock"))) << job_state("big");
    EXPECT_TRUE(wait_no_remote_processes());
}

TEST_F(TrainResumeTest, BigLogFilePullKilledMidwayIsResumedByDownload) {
    // No archive: the log dir pull is the only big transfer.
    write_shell_model("big", "mkdir -p \"$MLT_LOG_DIR\"\n" + write_big("\"$MLT_LOG_DIR/big.log\"") +
                                 "echo small > \"$MLT_LOG_DIR/small.txt\"\n");
    write_model_settings("big", "ssh:\n  train_cmd: \"sh {spec}\"\n");
    write_user_settings();
    // A log dir pull fetches into its staging dir first (see sync_down), a big file in
    // ranges: killed once one of them is done.
    const std::string staging = local_logs("big") + "/.mlt-pull";
    auto run = start_mlt({"ssh", "train", "big"});
    ASSERT_TRUE(wait_until([&] { return done_ranges(staging, "big.log") > 0; }, kTrainTimeout))
        << run->out() << run->err() << job_state("big");
    run->signal(SIGKILL);
    EXPECT_FALSE(run->wait(kTrainTimeout).timed_out);
    ASSERT_FALSE(path_exists(local_logs("big") + "/big.log"))
        << "the pull ended before the kill; the cut was not exercised";
    const uint64_t kept = done_ranges(staging, "big.log");
    const uint64_t ranges = kBigBytes / mlt::range_size_for(kBigBytes);
    ASSERT_LT(kept, ranges);

    ProcessResult pulled = mlt({"ssh", "download", "big"});
    ASSERT_EQ(pulled.exit_code, 0) << describe(pulled);
    EXPECT_TRUE(has_text(pulled.err, "resumed " + staging + "/big.log after ")) << describe(pulled);
    EXPECT_TRUE(has_text(pulled.err, "(" + std::to_string(kept) + " of " + std::to_string(ranges) +
                                         " ranges were there)"))
        << describe(pulled);
    const std::string remote_log = remote_logs_root() + "/big/big.log";
    EXPECT_EQ(fs::file_size(local_logs("big") + "/big.log"), kBigBytes);
    EXPECT_EQ(sha256_of(local_logs("big") + "/big.log"), sha256_of(remote_log));
    EXPECT_EQ(read_or_empty(local_logs("big") + "/small.txt"), "small\n");
    EXPECT_FALSE(path_exists(staging)) << "the staging dir was left";
    EXPECT_TRUE(wait_no_remote_processes());
}

}  // namespace
}  // namespace mlt_test
