// StatusLine: parts kept by several watchers, shown as one progress line in key order.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "mlt/train/run/status_line.h"

namespace mlt {
namespace {

class ProgressLog : public Reporter {
  public:
    void emit(Event event, std::string_view text) override {
        if (event == Event::progress) shown.emplace_back(text);
    }
    std::vector<std::string> shown;
};

TEST(StatusLine, PartsAreShownInKeyOrderAndAnEmptyTextRemovesOne) {
    ProgressLog log;
    {
        StatusLine line(log);
        line.set("2-sync", "synced 12:00:00");
        line.set("1-cost", "3m00s, $0.10");
        EXPECT_EQ(line.text(), "3m00s, $0.10 | synced 12:00:00");
        ASSERT_EQ(log.shown.size(), 2u);
        EXPECT_EQ(log.shown.back(), "mlt: 3m00s, $0.10 | synced 12:00:00");
        line.set("1-cost", "");
        EXPECT_EQ(log.shown.back(), "mlt: synced 12:00:00");
        line.set("2-sync", "");
        EXPECT_EQ(log.shown.back(), "");  // nothing left: the line is erased
    }
    EXPECT_EQ(log.shown.size(), 4u);  // empty at destruction: nothing more to erase
}

TEST(StatusLine, DestructionErasesAShownLine) {
    ProgressLog log;
    {
        StatusLine line(log);
        line.set("a", "x");
    }
    ASSERT_EQ(log.shown.size(), 2u);
    EXPECT_EQ(log.shown.back(), "");
}

TEST(StatusLine, UpdatesFromSeveralThreadsKeepEveryPart) {
    ProgressLog log;
    StatusLine line(log);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&line, t] {
            for (int i = 0; i < 200; ++i) line.set(std::to_string(t), "p" + std::to_string(i));
        });
    for (auto& th : threads) th.join();
    EXPECT_EQ(line.text(), "p199 | p199 | p199 | p199");
    EXPECT_EQ(log.shown.size(), 800u);
}

}  // namespace
}  // namespace mlt
