// util/bounded.h: the tail a remote's stderr is kept as, and the progress floor of data
// streams; util/log.h: the debug log's cap.
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "mlt/util/bounded.h"
#include "mlt/util/log.h"
#include "transfer_fixtures.h"

namespace {

using mlt::test::slurp;
using mlt::test::TempDir;
using Clock = mlt::ProgressWatch::Clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(BoundedTail, KeepsTheEndOfAStreamOfAnyLength) {
    mlt::BoundedTail tail(100);
    std::string all;
    for (int i = 0; i < 10000; ++i) {
        const std::string piece = "line " + std::to_string(i) + "\n";
        tail.append(piece);
        all += piece;
        ASSERT_LE(tail.str().size(), 100u);
    }
    EXPECT_EQ(tail.str(), all.substr(all.size() - 100));
    EXPECT_EQ(tail.dropped(), all.size() - 100);
    // One piece bigger than the whole limit.
    tail.append(std::string(1000, 'x') + "end");
    EXPECT_EQ(tail.str(), std::string(97, 'x') + "end");
}

TEST(BoundedTail, ShortStreamsAreKeptWhole) {
    mlt::BoundedTail tail;
    EXPECT_EQ(tail.str(), "");
    tail.append("tar: x: Cannot open\n");
    tail.append("no newline at the end");
    EXPECT_EQ(tail.str(), "tar: x: Cannot open\nno newline at the end");
    EXPECT_EQ(tail.dropped(), 0u);
}

TEST(BoundedTail, LinesTakenByTheReaderAreNotKept) {
    std::vector<std::string> taken;
    mlt::BoundedTail tail(64, [&](std::string_view line) {
        if (line.substr(0, 5) != "hash ") return false;
        taken.emplace_back(line);
        return true;
    });
    const auto sink = tail.sink();
    sink("hash 1\nan error\nha");  // a line in pieces
    sink("sh 2\n");
    sink("hash 3");  // not ended yet: not offered, but shown
    EXPECT_EQ(taken, (std::vector<std::string>{"hash 1", "hash 2"}));
    EXPECT_EQ(tail.str(), "an error\nhash 3");
    sink("\n");
    EXPECT_EQ(taken.back(), "hash 3");
    EXPECT_EQ(tail.str(), "an error\n");
}

TEST(BoundedTail, ALineLongerThanTheLimitIsNeverOfferedAndStaysBounded) {
    int offered = 0;
    mlt::BoundedTail tail(64, [&](std::string_view) {
        ++offered;
        return true;
    });
    for (int i = 0; i < 1000; ++i) tail.append(std::string(1000, 'e'));  // no newline: 1 MB
    EXPECT_EQ(offered, 0);
    EXPECT_EQ(tail.str(), std::string(64, 'e'));
    tail.append("tail of it\nhash 9\n");
    EXPECT_EQ(offered, 1);  // the line after it is one again
    EXPECT_EQ(tail.str().substr(tail.str().size() - 11), "tail of it\n");
}

TEST(BoundedTail, AReaderThatThrowsLosesOnlyThatLine) {
    mlt::BoundedTail tail(64, [](std::string_view line) -> bool {
        if (line == "bad") throw std::runtime_error("bad line");
        return false;
    });
    EXPECT_THROW(tail.append("bad\n"), std::runtime_error);
    tail.append("good\n");
    EXPECT_EQ(tail.str(), "good\n");
}

TEST(ProgressWatch, IsJudgedOnlyOnceAWholeWindowHasPassed) {
    const auto t0 = Clock::now();
    mlt::ProgressWatch watch({1000, 10}, t0);
    EXPECT_FALSE(watch.below_floor(t0 + seconds(9)));  // nothing moved, but too early
    const auto stalled = watch.below_floor(t0 + seconds(10));
    ASSERT_TRUE(stalled);
    EXPECT_EQ(*stalled, 0.0);
}

TEST(ProgressWatch, AStreamAtTheFloorPassesAndATrickleDoesNot) {
    const auto t0 = Clock::now();
    mlt::ProgressWatch steady({1000, 10}, t0), trickle({1000, 10}, t0);
    for (int ms = 100; ms <= 30000; ms += 100) {
        const auto now = t0 + milliseconds(ms);
        steady.add(110, now);  // 1100 B/s
        trickle.add(90, now);  // 900 B/s
        if (ms >= 10000) {
            EXPECT_FALSE(steady.below_floor(now)) << ms;
            const auto rate = trickle.below_floor(now);
            ASSERT_TRUE(rate) << ms;
            EXPECT_NEAR(*rate, 900, 40) << ms;
        }
    }
}

TEST(ProgressWatch, ABurstAtTheStartDoesNotCarryAStreamThatStoppedLater) {
    const auto t0 = Clock::now();
    mlt::ProgressWatch watch({1000, 10}, t0);
    watch.add(1000000, t0 + milliseconds(500));  // a window's worth and more, then nothing
    EXPECT_FALSE(watch.below_floor(t0 + seconds(10)));
    EXPECT_FALSE(watch.below_floor(t0 + milliseconds(10400)));
    const auto later = watch.below_floor(t0 + seconds(11));
    ASSERT_TRUE(later);
    EXPECT_EQ(*later, 0.0);
}

TEST(ProgressWatch, WithoutAFloorNothingIsJudged) {
    const auto t0 = Clock::now();
    mlt::ProgressWatch off({0, 30}, t0), no_window({65536, 0}, t0);
    EXPECT_FALSE(off.below_floor(t0 + std::chrono::hours(1)));
    EXPECT_FALSE(no_window.below_floor(t0 + std::chrono::hours(1)));
}

TEST(ProgressWatch, StallTextSaysStalledOrTrickledWithTheRateAndTheFloor) {
    EXPECT_EQ(mlt::stall_text({65536, 30}, 0), "stalled: nothing moved in the last 30 s");
    EXPECT_EQ(mlt::stall_text({65536, 30}, 1536),
              "trickled: 1.5 KiB/s over the last 30 s, under the floor of 64.0 KiB/s");
}

// The debug log file stays within its cap whatever is logged: rotated at kLogFileBytes,
// kLogFilesKept older files, each message cut at kMaxLogMessage.
TEST(DebugLog, AFloodOfLinesStaysWithinTheCapAndTheOldestGo) {
    TempDir dir;
    const std::string log = dir / "cli_logs/mlt.log";
    mlt::setup_logging(0, log);
    const std::string line(4000, 'l');
    const uint64_t flood = 4 * mlt::kLogFileBytes;
    for (uint64_t n = 0; n < flood; n += line.size()) spdlog::debug("{}", line);
    spdlog::debug("one remote said {}", std::string(10 * 1024 * 1024, 'e'));  // 10 MB
    spdlog::debug("the last line");
    mlt::setup_logging(0);  // closes the file
    namespace fs = std::filesystem;
    uint64_t total = 0;
    for (const std::string name : {"mlt.log", "mlt.log.1", "mlt.log.2"}) {
        const std::string path = dir / ("cli_logs/" + name);
        ASSERT_TRUE(fs::exists(path)) << name;
        EXPECT_LE(fs::file_size(path), mlt::kLogFileBytes) << name;
        total += fs::file_size(path);
    }
    EXPECT_FALSE(fs::exists(dir / "cli_logs/mlt.log.3"));
    EXPECT_LE(total, 3 * mlt::kLogFileBytes);
    const std::string newest = slurp(log);
    EXPECT_NE(newest.find("the last line"), std::string::npos);
    EXPECT_NE(newest.find(" more bytes)"), std::string::npos) << "the 10 MB message was not cut";
}

}  // namespace
