// The release that goes with a job's follow (ReleaseAtEnd) against a real local shell: the
// lock goes only when the job ended with nothing left to collect (its log dir as the local
// copy holds it, no archive), never one that retake_run took back.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>
#include <vector>

#include "job_fixture.h"
#include "local_remote.h"
#include "mlt/job/job.h"
#include "mlt/transfer/transfer.h"
#include "mlt/util/error.h"
#include "mlt/util/paths.h"
#include "mlt/util/text.h"

namespace fs = std::filesystem;

namespace {

// A job that writes two log files with fixed mtimes, as a warm run's job rewrites the same.
constexpr const char* kWritesLogs =
    "mkdir -p \"$MLT_LOG_DIR/sub dir\" && printf abc > \"$MLT_LOG_DIR/a.txt\" && "
    "printf xy > \"$MLT_LOG_DIR/sub dir/it's b.txt\" && "
    "touch -d @1700000000 \"$MLT_LOG_DIR/a.txt\" \"$MLT_LOG_DIR/sub dir/it's b.txt\"";

class ReleaseAtEnd : public mlt::test::JobFixture {
  protected:
    void SetUp() override {
        JobFixture::SetUp();
        local_ = dir_ + "-local";
        fs::create_directories(local_);
    }
    void TearDown() override {
        fs::remove_all(local_);
        JobFixture::TearDown();
    }
    std::string logs() const { return dir_ + "/logs"; }
    // Copies the remote log dir into the local one, mtimes to the nanosecond (the pull).
    void pull() {
        for (const auto& e : fs::recursive_directory_iterator(logs())) {
            if (!e.is_regular_file()) continue;
            const std::string to = local_ + "/" + fs::relative(e.path(), logs()).string();
            fs::create_directories(fs::path(to).parent_path());
            fs::copy_file(e.path(), to, fs::copy_options::overwrite_existing);
            struct stat st {};
            ASSERT_EQ(::stat(e.path().c_str(), &st), 0);
            const struct timespec times[2] = {st.st_mtim, st.st_mtim};
            ASSERT_EQ(::utimensat(AT_FDCWD, to.c_str(), times, 0), 0);
        }
    }
    std::string local_digest() {
        const auto d = mlt::local_tree_digest(local_, {"console.log"}, 100);
        EXPECT_TRUE(d.has_value());
        return d ? d->sha256 : "";
    }
    std::string remote_digest(mlt::Remote& r) {
        return mlt::trim(r.run(mlt::remote_tree_digest(logs())).out);
    }
    // Runs a job of run-1 to its end once, so that its log dir exists; the lock stays.
    void run_once(mlt::test::LocalRemote& r, const std::string& cmd) {
        start(r, cmd);
        std::string log;
        const std::string run = "run-1";
        mlt::test::follow_to_end(r, dir_, log, &run);
    }
    // Follows run-1's job to its end, with the release.
    mlt::JobResult follow_with_release(mlt::Remote& r, const mlt::ReleaseAtEnd& release) {
        const std::string run = "run-1";
        uint64_t offset = 0;
        for (;;) {
            const mlt::FollowStep step = job(r).follow_log(
                mlt::Task::job, &run, offset, 1, [](std::string_view) {}, 0, nullptr, &release);
            offset = step.offset;
            if (step.ended) return step.result.value_or(mlt::JobResult{});
        }
    }
    mlt::ReleaseAtEnd release() { return {logs(), local_digest()}; }
    // A run-1 whose logs are home, run again: its follow released the lock.
    void released_once(mlt::test::LocalRemote& r) {
        run_once(r, kWritesLogs);
        pull();
        again(r, kWritesLogs);
        ASSERT_TRUE(follow_with_release(r, release()).released);
    }
    // Takes a new lock of run-1 (the job files stay its own) and starts its job again.
    void again(mlt::test::LocalRemote& r, const std::string& cmd) {
        fs::remove_all(dir_ + "/.mlt");
        start(r, cmd);
    }
    std::string local_;
};

TEST_P(ReleaseAtEnd, TheLocalAndTheRemoteDigestAgreeOnlyOnTheSameFiles) {
    mlt::test::LocalRemote r(shell());
    EXPECT_EQ(remote_digest(r), "") << "a missing dir has no digest";
    run_once(r, kWritesLogs);
    EXPECT_NE(remote_digest(r), local_digest()) << "the local copy is still empty";
    pull();
    EXPECT_EQ(remote_digest(r), local_digest());
    // mlt's own local files, and symlinks on either side, are no files of the listing.
    mlt::write_file_atomic(local_ + "/console.log", "own", 0644);
    fs::create_symlink("a.txt", local_ + "/link");
    fs::create_symlink("a.txt", logs() + "/link");
    EXPECT_EQ(remote_digest(r), local_digest());
    // One nanosecond, one byte, one more file on either side: they differ.
    const struct timespec ns[2] = {{1700000000, 1}, {1700000000, 1}};
    ASSERT_EQ(::utimensat(AT_FDCWD, (logs() + "/a.txt").c_str(), ns, 0), 0);
    EXPECT_NE(remote_digest(r), local_digest());
    pull();
    EXPECT_EQ(remote_digest(r), local_digest());
    mlt::write_file_atomic(local_ + "/sub dir/more", "", 0644);
    EXPECT_NE(remote_digest(r), local_digest());
    fs::remove(local_ + "/sub dir/more");
    mlt::write_file_atomic(logs() + "/more", "", 0644);
    EXPECT_NE(remote_digest(r), local_digest());
    // Past its bound, no digest.
    EXPECT_FALSE(mlt::local_tree_digest(local_, {}, 1).has_value());
    EXPECT_EQ(mlt::local_tree_digest(local_ + "/none", {}, 1)->files, 0u);
}

TEST_P(ReleaseAtEnd, TheFollowReleasesTheLockOnlyWithTheLogsHome) {
    mlt::test::LocalRemote r(shell());
    run_once(r, kWritesLogs);
    pull();
    const mlt::ReleaseAtEnd home = release();
    fs::remove(local_ + "/a.txt");
    again(r, kWritesLogs);
    mlt::JobResult result = follow_with_release(r, release());
    EXPECT_FALSE(result.released) << "a file was not home";
    EXPECT_TRUE(exists(".mlt/m/lock"));
    ASSERT_EQ(result.exit_status.value_or(-1), 0);

    again(r, kWritesLogs);
    result = follow_with_release(r, home);
    EXPECT_TRUE(result.released);
    EXPECT_FALSE(exists(".mlt/m/lock"));
    EXPECT_EQ(result.exit_status.value_or(-1), 0);
    EXPECT_EQ(result.run_id, "run-1");
}

TEST_P(ReleaseAtEnd, NotWhenTheJobRecordedAnArchiveOrAnotherLogDir) {
    mlt::test::LocalRemote r(shell());
    run_once(r, kWritesLogs);
    pull();
    again(r, std::string(kWritesLogs) + " && echo weights > m.mltk.zip");
    EXPECT_FALSE(follow_with_release(r, release()).released) << "its archive is to collect";
    EXPECT_TRUE(exists(".mlt/m/lock"));
    again(r, kWritesLogs);
    mlt::ReleaseAtEnd elsewhere = release();
    elsewhere.log_dir = local_;  // the same files, but not the dir the job recorded
    EXPECT_FALSE(follow_with_release(r, elsewhere).released);
    EXPECT_TRUE(exists(".mlt/m/lock"));
}

TEST_P(ReleaseAtEnd, ALockTakenBackIsNeverReleased) {
    mlt::test::LocalRemote r(shell());
    run_once(r, kWritesLogs);
    pull();
    // A follow that is lost may still run on the remote: once the lock is taken back (here
    // while the job runs), it leaves it alone.
    again(r, std::string(kWritesLogs) + " && sleep 0.3");
    job(r).retake_run("run-1");
    EXPECT_TRUE(exists(".mlt/m/retaken"));
    EXPECT_FALSE(follow_with_release(r, release()).released);
    EXPECT_TRUE(exists(".mlt/m/lock"));
    // Taken back after a release: a lock of the run again, which no follow releases.
    again(r, kWritesLogs);
    ASSERT_TRUE(follow_with_release(r, release()).released);
    job(r).retake_run("run-1");
    const std::string lock = read(".mlt/m/lock");
    EXPECT_NE(lock.find("run=run-1\n"), std::string::npos) << lock;
    EXPECT_NE(lock.find("phase=finished\n"), std::string::npos) << lock;
    EXPECT_FALSE(follow_with_release(r, release()).released);
    EXPECT_TRUE(exists(".mlt/m/lock"));
}

// A follow that finds the lock released by another follow of the run (a lost one) says so,
// and does not fail: mlt takes it back before it collects.
TEST_P(ReleaseAtEnd, AFollowAfterAnotherOnesReleaseSaysTheLockIsGone) {
    mlt::test::LocalRemote r(shell());
    ASSERT_NO_FATAL_FAILURE(released_once(r));
    std::string log;
    const std::string run = "run-1";
    const mlt::FollowStep step =
        job(r).follow_log(mlt::Task::job, &run, 0, 1, [&](std::string_view d) { log += d; });
    ASSERT_TRUE(step.ended);
    ASSERT_TRUE(step.result.has_value());
    EXPECT_TRUE(step.result->lock_gone);
    EXPECT_EQ(step.result->exit_status.value_or(-1), 0);
    job(r).retake_run("run-1");
    EXPECT_TRUE(exists(".mlt/m/lock"));
    EXPECT_FALSE(exists(".mlt/m/released"));
    // A new run clears what the release and the retake left.
    again(r, kWritesLogs);
    EXPECT_FALSE(exists(".mlt/m/retaken"));
}

// A lock released otherwise (`stop`, or the run's own release after its collection) is
// never taken back: only one that a follow of the run released.
TEST_P(ReleaseAtEnd, ALockReleasedByAStopIsNotTakenBack) {
    mlt::test::LocalRemote r(shell());
    run_once(r, kWritesLogs);
    job(r).release_run("run-1");
    EXPECT_THROW(job(r).retake_run("run-1"), mlt::Error);
    EXPECT_FALSE(exists(".mlt/m/lock"));
    // Nor does a follow of the run then pass for one whose lock another follow released.
    const std::string run = "run-1";
    EXPECT_THROW(job(r).follow_log(mlt::Task::job, &run, 0, 1, [](std::string_view) {}),
                 mlt::Error);
}

TEST_P(ReleaseAtEnd, ALockCannotBeTakenBackFromAnotherRun) {
    mlt::test::LocalRemote r(shell());
    ASSERT_NO_FATAL_FAILURE(released_once(r));
    // Another run took the model meanwhile: its lock stays, and the run is told.
    start(r, "true", {}, "run-2");
    try {
        job(r).retake_run("run-1");
        FAIL() << "took another run's lock";
    } catch (const mlt::Error& e) {
        EXPECT_NE(std::string(e.what()).find("run-2"), std::string::npos) << e.what();
    }
    EXPECT_NE(read(".mlt/m/lock").find("run=run-2\n"), std::string::npos);
    // Its lock released too, its files are not run-1's: still not taken.
    job(r).release_run("run-2");
    EXPECT_THROW(job(r).retake_run("run-1"), mlt::Error);
    EXPECT_FALSE(exists(".mlt/m/lock"));
}

INSTANTIATE_JOB_SHELLS(ReleaseAtEnd);

}  // namespace
