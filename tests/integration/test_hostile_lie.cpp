// A hostile host passes something off as this run's verified result (issue 37, "a lie"): the
// archive the job hashed is replaced after the hash by a process that escaped the job's
// sweeper, while an older archive sits beside the spec. mlt must not exit 0, must not name
// the old archive as this run's result, and says what happened first.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ctime>
#include <string>
#include <vector>

#include "harness/expect.h"
#include "harness/files.h"
#include "harness/hostile_fixture.h"

namespace mlt_test {
namespace {

const char* const kOldArchive = "a week-old archive of an earlier run";

class HostileLieTest : public HostileTrainTest {
  protected:
    // An archive of an earlier run beside the spec, a week old.
    void plant_old_archive(const std::string& model) const {
        write_file(local_archive(model), kOldArchive, 0644);
        const std::time_t week_ago = std::time(nullptr) - 7 * 24 * 3600;
        const timespec times[2] = {{week_ago, 0}, {week_ago, 0}};
        ::utimensat(AT_FDCWD, local_archive(model).c_str(), times, 0);
    }

    // A training that writes its archive and starts a process that escapes the job: it
    // waits for the job's sha256 file, then runs `swap` (sh; $1 is the remote archive) and
    // marks state/swapped.
    void escaping_training(const std::string& model, const std::string& swap) const {
        shell_model(model,
                    "printf 'the archive of this run' > \"$MLT_ARCHIVE\"\n" +
                        escaping_process("i=0; while [ ! -s '" + job_file(model, "sha256") +
                                             "' ] && [ $i -lt 600 ]; do sleep 0.05; "
                                             "i=$((i+1)); done\n" +
                                             swap + " && " + host().mark("swapped") + "\n",
                                         "'" + remote() + "/" + model + ".mltk.zip'") +
                        "echo trained\n",
                    deep_log_setting());
    }

    // Runs `train model`, held before the collection until the escaped process swapped
    // the archive (MLT_TEST_HOLD), and returns the run.
    ProcessResult run_swapped(const std::string& model) {
        const std::string hold = sshd().dir() + "/hold";
        env().set("MLT_TEST_HOLD", "collecting the results:" + hold);
        auto run = start_mlt({"ssh", "train", model});
        const bool held = wait_until([&] { return path_exists(hold); }, kTrainTimeout);
        const bool swapped =
            wait_until([&] { return path_exists(host().state_file("swapped")); }, kEffectTimeout);
        ::unlink(hold.c_str());
        ProcessResult r = run->wait(kHostileWait);
        EXPECT_TRUE(held) << brief(r);
        EXPECT_TRUE(swapped) << "the escaped process never swapped the archive\n"
                             << job_state(model) << brief(r);
        return r;
    }

    // What every lie test asks: not exit 0, the old archive neither named as this run's
    // result nor touched, and what happened said before the summary's other lines.
    void expect_no_lie(const ProcessResult& r, const std::string& model,
                       const std::vector<std::string>& happened) const {
        EXPECT_NE(r.exit_code, 0) << brief(r);
        const std::string all = r.out + r.err;
        EXPECT_TRUE(lacks_text(all, "archive: " + local_archive(model)));
        EXPECT_EQ(read_or_empty(local_archive(model)), kOldArchive);
        struct stat st;
        EXPECT_TRUE(::lstat(local_archive(model).c_str(), &st) == 0 && S_ISREG(st.st_mode));
        // The summary block starts with what happened: its first line names it.
        std::string first;
        for (const auto& line : split_lines(all))
            if (first.empty() && line.find("summary of run") != std::string::npos) first = line;
        ASSERT_FALSE(first.empty()) << brief(r);
        bool named = false;
        for (const auto& word : happened) named = named || contains_icase(first, word);
        EXPECT_TRUE(named) << "the summary's first line does not say what happened:\n" << first;
    }
};

// High: the hashed archive is swapped for a symlink; the summary named the week-old local
// archive as this run's result, and mlt exited 0.
TEST_F(HostileLieTest, ArchiveSwappedForASymlinkAfterItsHashIsNoResult) {
    plant_old_archive("m");
    escaping_training("m", "ln -s /etc/passwd \"$1.tmp\" && mv -f \"$1.tmp\" \"$1\"");
    const LaptopSnapshot before = snapshot({"m"});
    ProcessResult r = run_swapped("m");
    expect_contained(r, before);
    expect_no_lie(r, "m", {"symlink", "tamper"});
}

// New: the hashed archive is swapped for other bytes (a regular file): the fetch finds
// another hash; the old archive must not pass for this run's.
TEST_F(HostileLieTest, ArchiveSwappedForOtherBytesAfterItsHashIsNoResult) {
    plant_old_archive("m");
    escaping_training("m", "printf 'other bytes' > \"$1.tmp\" && mv -f \"$1.tmp\" \"$1\"");
    const LaptopSnapshot before = snapshot({"m"});
    ProcessResult r = run_swapped("m");
    expect_contained(r, before);
    expect_no_lie(r, "m", {"sha256", "tamper"});
}

// New: the hashed archive is removed before the collection: this run recorded an archive
// and none came; the old one must not pass for it.
TEST_F(HostileLieTest, ArchiveRemovedAfterItsHashIsNoResult) {
    plant_old_archive("m");
    escaping_training("m", "rm -f \"$1\"");
    const LaptopSnapshot before = snapshot({"m"});
    ProcessResult r = run_swapped("m");
    expect_contained(r, before);
    expect_no_lie(r, "m", {"archive", "tamper"});
}

// New: the job's record of its download_files (the sha256 it took of each) is rewritten
// after the job wrote it, by a process that escaped the job, to name another run: that is
// tampering, and nothing of download_files is placed.
TEST_F(HostileLieTest, ADownloadFilesRecordRewrittenForAnotherRunIsTampering) {
    const std::string record = job_file("m", "download_files");
    shell_model("m",
                "echo result > result.txt\n" +
                    escaping_process("i=0; while [ ! -s '" + record +
                                     "' ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done\n"
                                     "printf 'r another-run\\0' > '" +
                                     record + "' && " + host().mark("swapped") + "\n") +
                    "echo trained\n",
                deep_log_setting(), "  download_files: ['result.txt']\n");
    const LaptopSnapshot before = snapshot({"m"});
    ProcessResult r = run_swapped("m");
    expect_contained(r, before);
    EXPECT_EQ(r.exit_code, 1) << brief(r);
    EXPECT_TRUE(contains_icase(r.err, "download_files record")) << brief(r);
    EXPECT_TRUE(contains_icase(r.err, "looks tampered with")) << brief(r);
    EXPECT_FALSE(path_exists(project() + "/result.txt")) << brief(r);
}

}  // namespace
}  // namespace mlt_test
