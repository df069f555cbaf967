// The start sent ahead with the lock (start_job_if_current) against a real local shell: it
// starts the job only when nothing is left to upload, and only with the ticket of the last
// lock, so a late one can never start a job whose files are being uploaded.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "job_fixture.h"
#include "local_remote.h"
#include "mlt/job/job.h"
#include "mlt/transfer/transfer.h"
#include "mlt/util/paths.h"

namespace fs = std::filesystem;

namespace {

using Plan = std::map<std::string, std::vector<mlt::UploadItem>>;

// How often the job's own line is in its console log.
int ran(const std::string& log) {
    int n = 0;
    for (size_t at = log.find("\nran-once\n"); at != std::string::npos;
         at = log.find("\nran-once\n", at + 1))
        ++n;
    return n;
}

class StartAhead : public mlt::test::JobFixture {
  protected:
    void SetUp() override {
        JobFixture::SetUp();
        local_ = dir_ + "-local";
        fs::create_directories(local_ + "/sub dir");
        mlt::write_file_atomic(local_ + "/a.txt", "aaa", 0644);
        mlt::write_file_atomic(local_ + "/sub dir/it's \"b\" $x.txt", "bbbb", 0644);
        set_mtime(local_ + "/a.txt", 1700000000, 123456789);
        set_mtime(local_ + "/sub dir/it's \"b\" $x.txt", 1700000001, 1);
        plan_[dir_] = {{local_ + "/a.txt", "a.txt"},
                       {local_ + "/sub dir/it's \"b\" $x.txt", "sub dir/it's \"b\" $x.txt"}};
    }
    void TearDown() override {
        fs::remove_all(local_);
        JobFixture::TearDown();
    }
    static void set_mtime(const std::string& path, time_t sec, long nsec) {
        const struct timespec times[2] = {{sec, nsec}, {sec, nsec}};
        ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0) << path;
    }
    // Copies every planned file to the remote dir, keeping its mtime (what the upload does).
    void upload_all() { upload_to(dir_); }
    void upload_to(const std::string& base) {
        for (const auto& item : plan_.begin()->second) {
            const std::string to = base + "/" + item.remote_path;
            fs::create_directories(fs::path(to).parent_path());
            fs::copy_file(item.local_path, to, fs::copy_options::overwrite_existing);
            struct stat st {};
            ASSERT_EQ(::stat(item.local_path.c_str(), &st), 0);
            set_mtime(to, st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
        }
    }
    std::string test() {
        const auto t = mlt::uploads_current_test(plan_);
        EXPECT_TRUE(t.has_value());
        return t.value_or("false");
    }
    // The lock of run-1 with `ticket`, then its start sent ahead, answered.
    bool lock(mlt::Remote& r, const std::string& ticket) {
        mlt::NewRun run = new_run(wrapper("run-1", "echo ran-once"));
        run.start_ticket = ticket;
        return job(r).acquire_run(run);
    }
    std::optional<long> start(mlt::Remote& r, const std::string& ticket) {
        return job(r).start_job_if_current("run-1", ticket, test());
    }
    std::string local_;
    Plan plan_;
};

TEST_P(StartAhead, TheTestHoldsOnlyWhenEveryFileIsThereWithItsSizeAndMtime) {
    mlt::test::LocalRemote r(shell());
    EXPECT_NE(r.run(test()).exit_status, 0) << "nothing uploaded yet";
    upload_all();
    EXPECT_EQ(r.run(test()).exit_status, 0) << test();
    // One nanosecond off, one byte more, one file gone, a directory in its place: not current.
    set_mtime(dir_ + "/a.txt", 1700000000, 123456788);
    EXPECT_NE(r.run(test()).exit_status, 0);
    upload_all();
    mlt::write_file_atomic(dir_ + "/a.txt", "aaaa", 0644);
    set_mtime(dir_ + "/a.txt", 1700000000, 123456789);
    EXPECT_NE(r.run(test()).exit_status, 0);
    upload_all();
    fs::remove(dir_ + "/sub dir/it's \"b\" $x.txt");
    EXPECT_NE(r.run(test()).exit_status, 0);
    fs::create_directory(dir_ + "/sub dir/it's \"b\" $x.txt");
    EXPECT_NE(r.run(test()).exit_status, 0);
    // A local file that cannot be looked at: no test at all (the upload reports it).
    plan_[dir_].push_back({local_ + "/missing", "missing"});
    EXPECT_FALSE(mlt::uploads_current_test(plan_).has_value());
    // Names beyond 96 KiB: no test (it travels inside the command line).
    Plan many;
    for (int i = 0; i < 3000; ++i)
        many[dir_].push_back({local_ + "/a.txt", std::string(100, 'x') + std::to_string(i)});
    EXPECT_FALSE(mlt::uploads_current_test(many).has_value());
    many[dir_].resize(800);
    EXPECT_TRUE(mlt::uploads_current_test(many).has_value());
    // Nothing planned: nothing to wait for.
    EXPECT_EQ(mlt::uploads_current_test({}).value_or(""), "true");
}

TEST_P(StartAhead, ItStartsTheJobOnlyWhenNothingIsLeftToUpload) {
    mlt::test::LocalRemote r(shell());
    ASSERT_TRUE(lock(r, "t1"));
    EXPECT_FALSE(start(r, "t1").has_value());
    EXPECT_FALSE(exists(".mlt/m/started"));
    EXPECT_FALSE(exists(".mlt/m/start.ticket.t1")) << "a ticket outlived its start";

    // The upload, then the run's start after it (start_job): the ticket is gone, and the
    // start that was sent ahead, were it run late, starts nothing.
    upload_all();
    EXPECT_FALSE(start(r, "t1").has_value());
    EXPECT_FALSE(exists(".mlt/m/started"));

    // The next lock of the run (a retry after a cut link) sends another: that one starts it.
    ASSERT_TRUE(lock(r, "t2"));
    const auto pgid = start(r, "t2");
    ASSERT_TRUE(pgid.has_value());
    EXPECT_GT(*pgid, 0);
    EXPECT_TRUE(exists(".mlt/m/started"));
    EXPECT_TRUE(exists(".mlt/m/start.claimed"));
    std::string log;
    mlt::test::follow_to_end(r, dir_, log);
    EXPECT_EQ(ran(log), 1) << log;
}

TEST_P(StartAhead, TheTestLooksFromTheLoginDirWhereRelativeBasesAre) {
    // The upload's bases are relative to the login dir (a relative remote_dir), while the
    // start's command changes into the remote dir.
    const std::string relative = fs::relative(dir_, fs::current_path()).string();
    ASSERT_NE(relative.front(), '/');
    Plan plan;
    plan[relative] = plan_[dir_];
    plan_ = plan;
    mlt::test::LocalRemote r(shell());
    upload_to(dir_);
    ASSERT_TRUE(lock(r, "t1"));
    EXPECT_TRUE(start(r, "t1").has_value()) << "a relative base was looked for in the remote dir";
}

TEST_P(StartAhead, ALockSaysWhenAnEarlierStartClaimedTheJob) {
    mlt::test::LocalRemote r(shell());
    upload_all();
    ASSERT_TRUE(lock(r, "t1"));
    bool claimed = true;
    ASSERT_TRUE(job(r).acquire_run(new_run(wrapper("run-1", "echo ran-once")), &claimed));
    EXPECT_FALSE(claimed);
    ASSERT_TRUE(lock(r, "t2"));
    ASSERT_TRUE(start(r, "t2").has_value());
    // The retry's lock, with no start of its own (its local files could not be looked at):
    // the start is claimed, so nothing may be uploaded.
    ASSERT_TRUE(job(r).acquire_run(new_run(wrapper("run-1", "echo ran-once")), &claimed));
    EXPECT_TRUE(claimed);
    EXPECT_FALSE(exists(".mlt/m/start.ticket.t2"));
}

TEST_P(StartAhead, AStartSentBeforeTheLastLockNeverStartsTheJob) {
    mlt::test::LocalRemote r(shell());
    upload_all();
    ASSERT_TRUE(lock(r, "t1"));
    // Its answer was lost with the link, and it has not run yet: the next lock comes first.
    ASSERT_TRUE(lock(r, "t2"));
    EXPECT_FALSE(exists(".mlt/m/start.ticket.t1"));
    EXPECT_FALSE(start(r, "t1").has_value()) << "a start sent before the last lock started";
    EXPECT_FALSE(exists(".mlt/m/started"));
    EXPECT_TRUE(start(r, "t2").has_value());
}

TEST_P(StartAhead, AStartThatClaimedBeforeTheNextLockIsTheOneJob) {
    mlt::test::LocalRemote r(shell());
    upload_all();
    ASSERT_TRUE(lock(r, "t1"));
    const auto first = start(r, "t1");
    ASSERT_TRUE(first.has_value());
    // Its answer was lost: the next lock's start finds it claimed and answers with the same
    // job, also once the files have changed meanwhile (they were current when it started).
    ASSERT_TRUE(lock(r, "t2"));
    mlt::write_file_atomic(local_ + "/a.txt", "edited since", 0644);
    const auto again = start(r, "t2");
    ASSERT_TRUE(again.has_value());
    EXPECT_EQ(*again, *first);
    std::string log;
    mlt::test::follow_to_end(r, dir_, log);
    EXPECT_EQ(ran(log), 1) << log;
}

TEST_P(StartAhead, VoidingTheTicketsStopsAStartSentAheadAndTellsOfOneThatClaimed) {
    mlt::test::LocalRemote r(shell());
    upload_all();
    ASSERT_TRUE(lock(r, "t1"));
    EXPECT_FALSE(job(r).void_start_tickets("run-1"));
    EXPECT_FALSE(start(r, "t1").has_value());
    EXPECT_FALSE(exists(".mlt/m/started"));

    ASSERT_TRUE(lock(r, "t2"));
    ASSERT_TRUE(start(r, "t2").has_value());
    EXPECT_TRUE(job(r).void_start_tickets("run-1"));
    std::string log;
    mlt::test::follow_to_end(r, dir_, log);
    job(r).release_run("run-1");

    // A new run moves the claim aside with the rest of the old run's files.
    mlt::NewRun next = new_run(wrapper("run-2", "echo second"));
    next.start_ticket = "t3";
    ASSERT_TRUE(job(r).acquire_run(next));
    EXPECT_FALSE(exists(".mlt/m/start.claimed"));
    EXPECT_TRUE(exists(".mlt/m/previous/start.claimed"));
    EXPECT_FALSE(job(r).void_start_tickets("run-2"));
}

INSTANTIATE_JOB_SHELLS(StartAhead);

}  // namespace
