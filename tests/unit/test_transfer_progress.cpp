// TransferProgress (the live line and the summary) and its format helpers.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>

#include "mlt/transfer/progress.h"
#include "mlt/util/reporter.h"

namespace {

using mlt::TransferProgress;
using std::chrono::milliseconds;

constexpr uint64_t kMiB = 1024 * 1024;

// A FILE* whose contents the test can read (open_memstream).
class Capture {
  public:
    Capture() : file_(::open_memstream(&buf_, &size_)) {}
    ~Capture() {
        std::fclose(file_);
        std::free(buf_);
    }
    Capture(const Capture&) = delete;
    Capture& operator=(const Capture&) = delete;
    std::FILE* file() { return file_; }
    std::string text() {
        std::fflush(file_);
        return std::string(buf_, size_);
    }

  private:
    char* buf_ = nullptr;
    size_t size_ = 0;
    std::FILE* file_;
};

// A TerminalReporter whose output the test reads: stdout and stderr into one capture, as on
// a terminal that shows both.
struct Screen {
    explicit Screen(bool interactive) : reporter(capture.file(), capture.file(), interactive) {}
    std::string text() { return capture.text(); }

    Capture capture;
    mlt::TerminalReporter reporter;
};

// A TransferProgress whose line width does not depend on where the tests run: the width
// comes from stderr's terminal, so stderr is /dev/null while it is made (80 columns).
TransferProgress make_progress(std::string label, uint64_t files, uint64_t bytes,
                               mlt::Reporter& reporter, bool interactive,
                               TransferProgress::Clock clock = {}) {
    std::fflush(stderr);
    struct Restore {
        int saved = ::dup(STDERR_FILENO);
        ~Restore() {
            ::dup2(saved, STDERR_FILENO);
            ::close(saved);
        }
    } restore;
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, STDERR_FILENO);
    ::close(null);
    return TransferProgress(std::move(label), files, bytes, reporter, interactive,
                            std::move(clock));
}

// A clock that moves only when the test says so.
struct FakeClock {
    std::chrono::steady_clock::time_point now{};
    TransferProgress::Clock fn() {
        return [this] { return now; };
    }
    void advance(std::chrono::steady_clock::duration d) { now += d; }
};

size_t count_of(const std::string& s, char c) {
    size_t n = 0;
    for (char x : s) n += x == c;
    return n;
}

// The text of the last redraw: after the last '\r', without the clear-to-end.
std::string last_line(const std::string& out) {
    std::string line = out.substr(out.rfind('\r') + 1);
    const auto esc = line.find("\033[K");
    return esc == std::string::npos ? line : line.substr(0, esc);
}

TEST(ProgressFormat, Bytes) {
    const std::pair<uint64_t, const char*> cases[] = {
        {0, "0 B"},
        {1, "1 B"},
        {1023, "1023 B"},
        {1024, "1.0 KiB"},
        {1536, "1.5 KiB"},
        {1024 * 1023 + 972, "1023.9 KiB"},
        {kMiB - 1, "1.0 MiB"},  // not "1024.0 KiB"
        {kMiB, "1.0 MiB"},
        {static_cast<uint64_t>(108.4 * kMiB), "108.4 MiB"},
        {uint64_t{1} << 30, "1.0 GiB"},
        {uint64_t{3} << 40, "3.0 TiB"},
        {UINT64_MAX, "16.0 EiB"},
    };
    for (const auto& [bytes, text] : cases) EXPECT_EQ(mlt::format_bytes(bytes), text) << bytes;
}

TEST(ProgressFormat, Duration) {
    const std::pair<double, const char*> cases[] = {
        {0, "0.0 s"},       {0.04, "0.0 s"},    {3.24, "3.2 s"},    {9.94, "9.9 s"},
        {9.96, "10 s"},     {42.4, "42 s"},     {59.6, "1m00s"},    {187, "3m07s"},
        {3599.4, "59m59s"}, {3600, "1h00m00s"}, {3723, "1h02m03s"}, {359999, "99h59m59s"},
        {360000, ">99h"},   {1e300, ">99h"},    {-1, "0.0 s"},      {std::nan(""), "0.0 s"},
        {INFINITY, ">99h"},
    };
    for (const auto& [s, text] : cases) EXPECT_EQ(mlt::format_duration(s), text) << s;
}

TEST(ProgressFormat, Count) {
    const std::pair<uint64_t, const char*> cases[] = {
        {0, "0"},
        {999, "999"},
        {1000, "1,000"},
        {12345, "12,345"},
        {100000, "100,000"},
        {1234567, "1,234,567"},
        {UINT64_MAX, "18,446,744,073,709,551,615"},
    };
    for (const auto& [n, text] : cases) EXPECT_EQ(mlt::format_count(n), text) << n;
}

TEST(TransferProgress, LargeUploadSummaryOnlyAboveEitherThreshold) {
    const uint64_t gib = uint64_t{1} << 30;
    EXPECT_EQ(mlt::large_upload_summary(10000, gib), std::nullopt);
    EXPECT_EQ(mlt::large_upload_summary(0, 0), std::nullopt);
    EXPECT_EQ(mlt::large_upload_summary(10001, 5 * kMiB), "about to upload 10,001 files, 5.0 MiB");
    EXPECT_EQ(mlt::large_upload_summary(3, gib + 1), "about to upload 3 files, 1.0 GiB");
    EXPECT_EQ(mlt::large_upload_summary(1, 1400 * kMiB, "gpu1:~/runs/a"),
              "about to upload 1 file, 1.4 GiB to gpu1:~/runs/a");
}

TEST(TransferProgress, NonInteractivePrintsOnlyTheSummary) {
    Capture out, err;
    mlt::TerminalReporter reporter(out.file(), err.file(), false);
    FakeClock clock;
    {
        auto p = make_progress("upload", 2002, 0, reporter, false, clock.fn());
        const uint64_t total = static_cast<uint64_t>(108.4 * kMiB);
        for (int i = 0; i < 2002; ++i) {
            clock.advance(std::chrono::microseconds(1600));
            p.add_bytes(total / 2002);
            p.file_done();
        }
        p.add_bytes(total % 2002);
        clock.now = std::chrono::steady_clock::time_point{} + milliseconds(3200);
        EXPECT_EQ(err.text(), "");
        p.finish();
    }
    EXPECT_EQ(err.text(), "mlt: upload: 2,002 files, 108.4 MiB in 3.2 s (33.9 MiB/s)\n");
    EXPECT_EQ(out.text(), "");
}

TEST(TransferProgress, NothingTransferredPrintsNothing) {
    for (bool interactive : {false, true}) {
        Screen screen(interactive);
        FakeClock clock;
        auto p = make_progress("logs", 0, 0, screen.reporter, interactive, clock.fn());
        clock.advance(milliseconds(500));
        p.finish();
        EXPECT_EQ(screen.text(), "") << interactive;
    }
}

TEST(TransferProgress, ShortTransferHasNoRateAndNoLiveLine) {
    Screen screen(true);
    FakeClock clock;
    auto p = make_progress("upload", 1, 10, screen.reporter, true, clock.fn());
    clock.advance(milliseconds(40));
    p.add_bytes(10);
    p.file_done();
    p.finish();
    EXPECT_EQ(screen.text(), "mlt: upload: 1 file, 10 B in 0.0 s\n");
}

TEST(TransferProgress, RedrawsAreThrottledByTheClock) {
    Screen screen(true);
    FakeClock clock;
    auto p = make_progress("upload", 0, 0, screen.reporter, true, clock.fn());
    p.add_bytes(1);  // the first line waits one interval
    clock.advance(milliseconds(99));
    p.add_bytes(1);
    EXPECT_EQ(screen.text(), "");

    clock.advance(milliseconds(1));
    for (int i = 0; i < 1000; ++i) {  // 1000 chunks within 99.9 ms: one redraw
        p.add_bytes(256 * 1024);
        clock.advance(std::chrono::microseconds(99));
    }
    EXPECT_EQ(count_of(screen.text(), '\r'), 1u);
    clock.advance(milliseconds(1));
    p.file_done();
    EXPECT_EQ(count_of(screen.text(), '\r'), 2u);
    EXPECT_EQ(last_line(screen.text()).rfind("mlt: upload: 1 file, 250.0 MiB, ", 0), 0u)
        << last_line(screen.text());
}

TEST(TransferProgress, RateEtaAndPercent) {
    Screen screen(true);
    FakeClock clock;
    auto p = make_progress("upload", 200, 100 * kMiB, screen.reporter, true, clock.fn());
    for (int i = 0; i < 40; ++i) {  // 10 MiB/s for 4 s; the counts come between redraws
        if (i % 2 == 1) p.file_done();
        clock.advance(milliseconds(100));
        p.add_bytes(kMiB);
    }
    EXPECT_EQ(last_line(screen.text()),
              "mlt: upload:  40% 20/200 files, 40.0 MiB/100.0 MiB, 10.0 MiB/s, ETA 6.0 s");
}

TEST(TransferProgress, RateIsAMovingAverage) {
    Screen screen(true);
    FakeClock clock;
    auto p = make_progress("download", 0, 100 * kMiB, screen.reporter, true, clock.fn());
    for (int i = 0; i < 50; ++i) {  // 10 MiB/s for 5 s...
        clock.advance(milliseconds(100));
        p.add_bytes(kMiB);
    }
    for (int i = 0; i < 50; ++i) {  // ...then 1 MiB/s for 5 s (5.5 MiB/s since the start)
        clock.advance(milliseconds(100));
        p.add_bytes(kMiB / 10 + 1);
    }
    const std::string line = last_line(screen.text());
    EXPECT_NE(line.find(", 1.0 MiB/s, "), std::string::npos) << line;
    // 45 MiB left at 1 MiB/s.
    EXPECT_NE(line.find("ETA 45 s"), std::string::npos) << line;
    EXPECT_NE(line.find(" 55% 0 files, 55.0 MiB/100.0 MiB"), std::string::npos) << line;
}

TEST(TransferProgress, UnknownTotalsShowNoPercentNorEta) {
    Screen screen(true);
    FakeClock clock;
    auto p = make_progress("logs", 0, 0, screen.reporter, true, clock.fn());
    clock.advance(milliseconds(200));
    p.add_bytes(2 * kMiB);
    EXPECT_EQ(last_line(screen.text()), "mlt: logs: 0 files, 2.0 MiB, 10.0 MiB/s");
}

TEST(TransferProgress, PercentFromFilesWhenBytesUnknown) {
    Screen screen(true);
    FakeClock clock;
    auto p = make_progress("logs", 4, 0, screen.reporter, true, clock.fn());
    clock.advance(milliseconds(100));
    p.file_done();
    EXPECT_EQ(last_line(screen.text()), "mlt: logs:  25% 1/4 files, 0 B, 0 B/s");
}

TEST(TransferProgress, FinishReplacesTheLineWithTheSummary) {
    Screen screen(true);
    FakeClock clock;
    auto p = make_progress("upload", 2, 4 * kMiB, screen.reporter, true, clock.fn());
    clock.advance(milliseconds(1000));
    p.add_bytes(4 * kMiB);
    p.file_done();
    p.file_done();
    clock.advance(milliseconds(1000));
    p.finish();
    const std::string text = screen.text();
    // The live line as drawn, then erased, then the summary on a line of its own.
    EXPECT_EQ(text,
              "\rmlt: upload: 100% 0/2 files, 4.0 MiB/4.0 MiB, 4.0 MiB/s\033[K"
              "\r\033[Kmlt: upload: 2 files, 4.0 MiB in 2.0 s (2.0 MiB/s)\n");
    p.finish();  // idempotent; later counts are ignored
    p.add_bytes(1);
    p.fail();
    EXPECT_EQ(screen.text(), text);
}

TEST(TransferProgress, TheSummaryIsAnAlertOfTheDefaultReporter) {
    // With the default reporter argument: what set_reporter() installed gets the lines.
    Capture out, err;
    mlt::TerminalReporter reporter(out.file(), err.file(), false);
    mlt::set_reporter(&reporter);
    {
        TransferProgress p("logs", 1, 1);
        p.add_bytes(1);
        p.file_done();
        p.finish();
    }
    mlt::set_reporter(nullptr);
    EXPECT_EQ(err.text().rfind("mlt: logs: 1 file, 1 B in ", 0), 0u) << err.text();
    EXPECT_EQ(count_of(err.text(), '\n'), 1u) << err.text();
    EXPECT_EQ(out.text(), "");
}

TEST(TransferProgress, TypicalLinesFitEightyColumns) {
    Screen screen(true);
    FakeClock clock;
    auto p = make_progress("upload", 2002, 108 * kMiB, screen.reporter, true, clock.fn());
    for (int i = 0; i < 1234; ++i) p.file_done();
    clock.advance(milliseconds(5000));
    p.add_bytes(77 * kMiB);
    EXPECT_EQ(last_line(screen.text()),
              "mlt: upload:  71% 1,234/2,002 files, 77.0 MiB/108.0 MiB, 15.4 MiB/s, ETA 2.0 s");
}

TEST(TransferProgress, FileCountsGoFirstWhenTheLineIsTooLong) {
    Screen screen(true);
    FakeClock clock;
    auto p = make_progress("download", 23456, 900 * kMiB * 1024, screen.reporter, true, clock.fn());
    for (int i = 0; i < 12345; ++i) p.file_done();
    clock.advance(milliseconds(100));
    p.add_bytes(1000 * kMiB - 1);
    EXPECT_EQ(last_line(screen.text()),
              "mlt: download:   0% 1000.0 MiB/900.0 GiB, 9.8 GiB/s, ETA 1m32s");
}

TEST(TransferProgress, LongLinesAreCutToTheWidth) {
    Screen screen(true);
    FakeClock clock;
    auto p = make_progress(std::string(100, 'x'), 0, 0, screen.reporter, true, clock.fn());
    clock.advance(milliseconds(100));
    p.add_bytes(1);
    // No terminal on stderr while it was made: 80 columns, one kept free.
    EXPECT_EQ(last_line(screen.text()).size(), 79u);
}

TEST(TransferProgress, FailEndsTheLineWithoutASummary) {
    Screen screen(true);
    FakeClock clock;
    {
        auto p = make_progress("upload", 0, 10 * kMiB, screen.reporter, true, clock.fn());
        clock.advance(milliseconds(100));
        p.add_bytes(kMiB);
        p.fail();
        p.finish();
    }
    const std::string text = screen.text();
    EXPECT_EQ(count_of(text, '\n'), 1u);
    EXPECT_EQ(text.back(), '\n');
    EXPECT_EQ(text.find(" in "), std::string::npos) << text;
    // The last state stays: erased as a live line, written again as a line of its own.
    const std::string last = "mlt: upload:  10% 0 files, 1.0 MiB/10.0 MiB, 10.0 MiB/s, ETA 0.9 s";
    EXPECT_EQ(text, "\r" + last + "\033[K\r\033[K" + last + "\n");
}

TEST(TransferProgress, DestructionByAnExceptionIsAFailure) {
    for (bool interactive : {false, true}) {
        Screen screen(interactive);
        FakeClock clock;
        try {
            auto p = make_progress("upload", 0, 0, screen.reporter, interactive, clock.fn());
            clock.advance(milliseconds(100));
            p.add_bytes(kMiB);
            p.file_done();
            throw std::runtime_error("link lost");
        } catch (const std::runtime_error&) {
        }
        const std::string text = screen.text();
        EXPECT_EQ(text.find(" in "), std::string::npos) << text;
        // The line as last drawn (the file was counted after it), kept as a line of its own.
        EXPECT_EQ(text, interactive ? "\rmlt: upload: 0 files, 1.0 MiB, 10.0 MiB/s\033[K"
                                      "\r\033[Kmlt: upload: 0 files, 1.0 MiB, 10.0 MiB/s\n"
                                    : "");
    }
}

TEST(TransferProgress, ClearErasesTheLineUntilTheNextRedraw) {
    Screen screen(true);
    FakeClock clock;
    auto p = make_progress("upload", 0, 0, screen.reporter, true, clock.fn());
    clock.advance(milliseconds(100));
    p.add_bytes(1);
    p.clear();
    EXPECT_EQ(screen.text().substr(screen.text().size() - 4), "\r\033[K");
    p.clear();  // nothing drawn: nothing to erase
    EXPECT_EQ(count_of(screen.text(), '\r'), 2u);
    clock.advance(milliseconds(100));
    p.add_bytes(1);  // the next redraw draws it again
    EXPECT_EQ(count_of(screen.text(), '\r'), 3u);
    EXPECT_EQ(last_line(screen.text()), "mlt: upload: 0 files, 2 B, 10 B/s");
    p.clear();
    p.fail();  // nothing drawn: no line either
    EXPECT_EQ(count_of(screen.text(), '\r'), 4u);
    EXPECT_EQ(count_of(screen.text(), '\n'), 0u);
}

TEST(TransferProgress, ConcurrentCountsAddUp) {
    // The real clock and interactive mode, so that redraws race with the counting.
    Screen screen(true);
    auto p = make_progress("upload", 0, 0, screen.reporter, true);
    auto work = [&p] {
        for (int i = 0; i < 100000; ++i) {
            p.add_bytes(3);
            if (i % 10 == 0) p.file_done();
        }
    };
    std::thread a(work);
    std::thread b(work);
    a.join();
    b.join();
    EXPECT_EQ(p.bytes_done(), 600000u);
    EXPECT_EQ(p.files_done(), 20000u);
    p.finish();
    EXPECT_NE(screen.text().find("mlt: upload: 20,000 files, 585.9 KiB in "), std::string::npos);
}

}  // namespace
