// A ranged transfer whose links stall (the transport's progress floor ends their streams with
// StallError): the ranges of a stalled link go to the links that move, and the transfer
// fails only when no link moves. The remote is this machine (LocalRemote).

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include "local_remote.h"
#include "mlt/transfer/ranges.h"
#include "mlt/transfer/transfer.h"
#include "transfer_fixtures.h"

namespace {

using mlt::test::LocalRemote;
using mlt::test::slurp;
using mlt::test::TempDir;
using mlt::test::write_file;

constexpr uint64_t kMiB = 1024 * 1024;

// A near link (2 channels; ranges pay from 32 MiB with a number of connections) whose data
// streams either move, or stall: every stream_parallel ends with the StallError the
// transport throws for a frozen link.
class NearRemote : public LocalRemote {
  public:
    explicit NearRemote(bool stalls) : stalls_(stalls) {}
    double round_trip_s() const override { return 0.001; }
    std::vector<int> stream_parallel(const std::vector<mlt::StreamJob>& jobs) override {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            ++streams;
            for (const auto& job : jobs) named &= !job.data_stream.empty();
        }
        seen_.notify_all();
        if (stalls_)
            throw mlt::StallError(mlt::ErrorKind::remote,
                                  jobs.front().data_stream +
                                      " on a frozen link stalled: nothing moved in the last 30 s");
        // The moving link waits (bounded) until the frozen one took its first batch, so that
        // the frozen one surely holds ranges when it stalls.
        if (other_) {
            std::unique_lock<std::mutex> lock(other_->mutex_);
            other_->seen_.wait_for(lock, std::chrono::seconds(10),
                                   [&] { return other_->streams > 0; });
        }
        return LocalRemote::stream_parallel(jobs);
    }
    void wait_for(NearRemote& other) { other_ = &other; }

    int streams = 0;
    bool named = true;  // every job named its data stream (it is held to the floor)

  private:
    const bool stalls_;
    NearRemote* other_ = nullptr;
    std::mutex mutex_;
    std::condition_variable seen_;
};

// A pool of one side link: `link`.
class OneLink : public mlt::LinkPool {
  public:
    explicit OneLink(mlt::Remote& link) : link_(link) {}
    size_t limit() const override { return 1; }
    bool tuning() const override { return false; }  // transfer.connections 2
    mlt::Remote* link(size_t i) override { return i == 0 && dropped == 0 ? &link_ : nullptr; }
    void drop(size_t) override { ++dropped; }
    int dropped = 0;

  private:
    mlt::Remote& link_;
};

// The least that ranges pay for and that are more than a near link's 2 channels take at once:
// 3 ranges (16 MiB, 16 MiB and 64 KiB).
constexpr uint64_t kThreeRanges = 32 * kMiB + 64 * 1024;

// A file of three ranges (sparse: quick to make and to read).
std::vector<mlt::RemoteFileInfo> big_file(const TempDir& dir) {
    write_file(dir / "model.ckpt", "head");
    std::filesystem::resize_file(dir / "model.ckpt", kThreeRanges);
    LocalRemote lister;
    return mlt::stat_remote_files(lister, dir.path(), {"model.ckpt"});
}

TEST(TransferStall, AStalledSideLinkGivesItsRangesToTheLinksThatMove) {
    TempDir remote_dir, local;
    const auto listed = big_file(remote_dir);
    ASSERT_EQ(listed.size(), 1u);
    NearRemote caller(false), frozen(true);
    caller.wait_for(frozen);
    OneLink links(frozen);
    mlt::RangeOptions options;
    options.links = &links;
    const mlt::RangeStats stats = mlt::download_ranges(
        caller, remote_dir / "model.ckpt", listed.front(), local / "model.ckpt", options);
    EXPECT_EQ(stats.ranges, 3u);
    EXPECT_GE(frozen.streams, 1);
    EXPECT_EQ(links.dropped, 1) << "the stalled link is dropped, not used again";
    EXPECT_TRUE(slurp(local / "model.ckpt") == slurp(remote_dir / "model.ckpt"));
    EXPECT_TRUE(caller.named);
    EXPECT_TRUE(frozen.named);
}

TEST(TransferStall, WhenNoLinkMovesTheTransferFailsWithTheStall) {
    TempDir remote_dir, local;
    const auto listed = big_file(remote_dir);
    ASSERT_EQ(listed.size(), 1u);
    NearRemote caller(true), frozen(true);
    OneLink links(frozen);
    mlt::RangeOptions options;
    options.links = &links;
    try {
        mlt::download_ranges(caller, remote_dir / "model.ckpt", listed.front(),
                             local / "model.ckpt", options);
        FAIL() << "no error";
    } catch (const mlt::StallError& e) {
        EXPECT_NE(std::string(e.what()).find("stalled"), std::string::npos) << e.what();
        EXPECT_EQ(e.code(), 1);
    }
    EXPECT_FALSE(std::filesystem::exists(local / "model.ckpt"));
}

// Up, too: the ranges a stalled side link held are sent over the caller's.
TEST(TransferStall, AnUploadGivesTheRangesOfAStalledLinkToTheOthers) {
    TempDir remote_dir, local;
    write_file(local / "big.bin", "head");
    std::filesystem::resize_file(local / "big.bin", kThreeRanges);
    NearRemote caller(false), frozen(true);
    caller.wait_for(frozen);
    OneLink links(frozen);
    mlt::RangeOptions options;
    options.links = &links;
    const mlt::RangeStats stats =
        mlt::upload_ranges(caller, local / "big.bin", remote_dir / "big.bin", options);
    EXPECT_EQ(stats.ranges, 3u);
    EXPECT_GE(frozen.streams, 1);
    EXPECT_TRUE(slurp(remote_dir / "big.bin") == slurp(local / "big.bin"));
}

}  // namespace
