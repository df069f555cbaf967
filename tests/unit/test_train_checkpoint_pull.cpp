// checkpoints on this machine: the ledger as a hostile host may forge it, which listed files a
// pull leaves on the host, and which local copies go after a pull (and which never do).
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utime.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "mlt/job/job.h"
#include "mlt/train/run/checkpoints.h"
#include "mlt/transfer/transfer.h"

namespace fs = std::filesystem;

namespace mlt {
namespace {

CheckpointSettings settings() {
    CheckpointSettings c;
    c.pattern = "ck/*.pt";
    c.keep_last = 1;
    return c;
}

TEST(CheckpointLedger, ForgedLinesAreDropped) {
    const CheckpointLedger l = parse_checkpoint_ledger(
        "ck/a.pt\t3\t100\t100\t1\t0.5\tkept\n"
        "ck/b.pt\t3\t100\t100\t0\t\tdeleted\n"
        "/etc/passwd\t3\t100\t100\t1\t\tdeleted\n"
        "ck/../../.bashrc\t3\t100\t100\t1\t\tdeleted\n"
        "ck//c.pt\t3\t100\t100\t1\t\tdeleted\n"
        "ck/d.pt\t-3\t100\t100\t1\t\tdeleted\n"
        "ck/e.pt\t3\t100\t100\t3\t\tdeleted\n"
        "ck/a.pt\t3\t101\t100\t1\t\tdeleted\n"  // a.pt again: forged
        "ck/f.pt\t3\t100\t100\t1\t\tgone\n"
        "ck/g.pt\t3\t100\t100\t1\tdeleted\n"
        "ck/h\x01.pt\t3\t100\t100\t1\t\tdeleted\n");
    ASSERT_EQ(l.entries.size(), 2u);
    EXPECT_EQ(l.entries[0].name, "ck/a.pt");
    EXPECT_TRUE(l.entries[0].whole);
    EXPECT_TRUE(l.entries[0].kept);
    EXPECT_EQ(l.entries[0].metric, "0.5");
    EXPECT_EQ(l.entries[1].name, "ck/b.pt");
    EXPECT_FALSE(l.entries[1].kept);
}

TEST(CheckpointLedger, APullTakesOnlyWholeKeptCheckpointsInTheVersionListed) {
    const CheckpointLedger l = parse_checkpoint_ledger(
        "ck/whole.pt\t3\t100\t100\t1\t\tkept\n"
        "ck/torn.pt\t3\t100\t100\t0\t\tkept\n"
        "ck/gone.pt\t3\t100\t100\t1\t\tdeleted\n");
    const auto file = [](const std::string& path, uint64_t size, int64_t mtime_s) {
        RemoteFileInfo info;
        info.path = path;
        info.size = size;
        info.mtime_ns = mtime_s * 1000000000 + 123;
        return info;
    };
    const CheckpointSettings c = settings();
    EXPECT_FALSE(pull_leaves_out(c, l, file("ck/whole.pt", 3, 100)));
    EXPECT_TRUE(pull_leaves_out(c, l, file("ck/whole.pt", 4, 100)));  // changed since
    EXPECT_TRUE(pull_leaves_out(c, l, file("ck/whole.pt", 3, 101)));
    EXPECT_TRUE(pull_leaves_out(c, l, file("ck/torn.pt", 3, 100)));
    EXPECT_TRUE(pull_leaves_out(c, l, file("ck/gone.pt", 3, 100)));
    EXPECT_TRUE(pull_leaves_out(c, l, file("ck/new.pt", 3, 100)));       // not seen yet
    EXPECT_TRUE(pull_leaves_out(c, l, file("ck/sub/deep.pt", 3, 100)));  // `*` crosses `/`
    EXPECT_FALSE(pull_leaves_out(c, l, file("train.log", 3, 100)));      // no checkpoint
}

class LocalPrune : public ::testing::Test {
  protected:
    void SetUp() override {
        std::string dir = (fs::temp_directory_path() / "mlt-prune-XXXXXX").string();
        ASSERT_NE(mkdtemp(dir.data()), nullptr);
        dir_ = dir;
        fs::create_directories(dir_ + "/logs/ck");
    }
    void TearDown() override { fs::remove_all(dir_); }
    void put(const std::string& name, const std::string& text, long mtime) {
        std::ofstream(dir_ + "/logs/" + name, std::ios::binary) << text;
        struct utimbuf t {
            mtime, mtime
        };
        ASSERT_EQ(::utime((dir_ + "/logs/" + name).c_str(), &t), 0);
    }
    bool here(const std::string& name) const {
        struct stat st;
        return ::lstat((dir_ + "/logs/" + name).c_str(), &st) == 0;
    }
    std::string dir_;
};

TEST_F(LocalPrune, OnlyTheSameCheckpointReachedWithoutASymlinkGoes) {
    put("ck/a.pt", "aaa", 100);    // deleted there: goes here
    put("ck/b.pt", "bbbb", 100);   // deleted there, but this copy differs: stays
    put("ck/c.pt", "ccc", 100);    // kept
    put("train.log", "lll", 100);  // named as deleted, but no checkpoint: stays
    fs::create_directories(dir_ + "/outside");
    put("../outside/x.pt", "xxx", 100);
    fs::create_directory_symlink(dir_ + "/outside", dir_ + "/logs/ck/link");
    const CheckpointLedger l = parse_checkpoint_ledger(
        "ck/a.pt\t3\t100\t100\t1\t\tdeleted\n"
        "ck/b.pt\t3\t100\t100\t1\t\tdeleted\n"
        "ck/c.pt\t3\t100\t100\t1\t\tkept\n"
        "train.log\t3\t100\t100\t1\t\tdeleted\n"
        "ck/link/x.pt\t3\t100\t100\t1\t\tdeleted\n");
    CheckpointTally t;
    CheckpointSettings c = settings();
    prune_local_checkpoints(dir_ + "/logs", c, l, {".mlt-pull"}, t);
    EXPECT_FALSE(here("ck/a.pt"));
    EXPECT_TRUE(here("ck/b.pt"));
    EXPECT_TRUE(here("ck/c.pt"));
    EXPECT_TRUE(here("train.log"));
    EXPECT_TRUE(fs::exists(dir_ + "/outside/x.pt"));
    EXPECT_EQ(t.host_kept, 1u);
    EXPECT_EQ(t.host_deleted, 4u);
    EXPECT_EQ(t.local_deleted, 1u);
    EXPECT_EQ(t.local_freed, 3u);
    // The next pull counts what an earlier one deleted here, from the local ledger's marks.
    CheckpointTally again;
    prune_local_checkpoints(dir_ + "/logs", c, l, {".mlt-pull"}, again);
    EXPECT_EQ(again.local_deleted, 1u);
    EXPECT_EQ(checkpoints_summary(again),
              "checkpoints: 1 kept on the host (4 deleted there, 12 B freed); 1 local copy "
              "deleted (3 B freed)");
}

// What a push (--restore, a failover) tells the new host of the checkpoints it sends, from the
// local ledger: a copy of a save that was cut stays not whole there, the metric goes along, and
// the earlier host's deletions go on being counted.
TEST_F(LocalPrune, ThePushSeedsTheNewHostsLedgerFromTheLocalOne) {
    put("ck/a.pt", "aaa", 100);   // whole there, with its metric
    put("ck/b.pt", "bb", 110);    // not whole there in this version: a copy of a cut save
    put("ck/c.pt", "cccc", 120);  // the ledger knows another version: came home whole
    put("ck/d.pt", "d", 130);     // the user's own
    put("ck/e.pt", "ee", 140);    // "not yet" there: a copy fetched by hand
    put("notes.txt", "n", 130);   // no checkpoint
    put(".mlt-checkpoints",
        "ck/a.pt\t3\t100\t100\t1\t0.25\tkept\n"
        "ck/b.pt\t2\t110\t110\t2\t0.5\tkept\n"
        "ck/c.pt\t5\t125\t125\t0\t0.75\tkept\n"
        "ck/e.pt\t2\t140\t140\t0\t0.3\tkept\n"
        "ck/old.pt\t9\t90\t90\t1\t0.1\tdeleted\there\n"
        "../../.bashrc\t9\t90\t90\t1\t\tdeleted\n",
        200);
    std::vector<UploadItem> pushed;
    for (const char* name : {"ck/a.pt", "ck/b.pt", "ck/c.pt", "ck/d.pt", "ck/e.pt", "notes.txt"})
        pushed.push_back({dir_ + "/logs/" + name, name});
    EXPECT_EQ(checkpoint_seed(dir_ + "/logs", settings(), pushed),
              "ck/a.pt\t3\t100\t100\t1\t0.25\tkept\n"
              "ck/b.pt\t2\t110\t110\t2\t0.5\tkept\n"
              "ck/c.pt\t4\t120\t120\t1\t\tkept\n"
              "ck/d.pt\t1\t130\t130\t1\t\tkept\n"
              "ck/e.pt\t2\t140\t140\t2\t0.3\tkept\n"
              "ck/old.pt\t9\t90\t90\t1\t0.1\tdeleted\n");
    EXPECT_EQ(checkpoint_seed(dir_ + "/logs", CheckpointSettings{}, pushed), "");
}

TEST(CheckpointSummary, NothingWithoutALedger) {
    EXPECT_EQ(checkpoints_summary(CheckpointTally{}), "");
}

}  // namespace
}  // namespace mlt
