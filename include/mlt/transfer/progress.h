#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

#include "mlt/util/reporter.h"  // also stderr_is_terminal(), the default of `interactive`
#include "mlt/util/text.h"      // format_bytes

namespace mlt {

// "3.2 s" below 10 s, then "42 s", "3m07s", "1h02m03s"; negative or NaN gives "0.0 s",
// 100 hours or more ">99h".
std::string format_duration(double seconds);

// "12,345": a count with thousands separators.
std::string format_count(uint64_t n);

// The line to show before an upload of more than 10,000 files or more than 1 GiB (2^30
// bytes, the unit the line is written in), e.g. "about to upload 12,345 files, 1.3 GiB to
// gpu1:~/runs"; nullopt when neither threshold is passed. An empty `destination` leaves the
// "to ..." part out. No "mlt: " prefix (the caller logs it).
std::optional<std::string> large_upload_summary(uint64_t files, uint64_t bytes,
                                                const std::string& destination = {});

// The progress of one transfer, shown through `reporter`. Interactive: one Event::progress
// line (e.g. "mlt: upload:  40% 20/200 files, 40.0 MiB/100.0 MiB, 10.0 MiB/s, ETA 6.0 s")
// redrawn at most every 100 ms (only when add_bytes/file_done are called) with percent,
// files, bytes, rate over the last 3 s and ETA, cut to the width of stderr's terminal (80
// columns when it is none). Otherwise nothing while it runs. finish() shows the summary as
// an alert in both modes, e.g. "upload: 2,002 files, 108.4 MiB in 3.2 s (33.9 MiB/s)", which
// a TerminalReporter writes to stderr as "mlt: upload: ..."; nothing transferred, no line.
// All methods may be called from any thread; elapsed time counts from construction.
class TransferProgress {
  public:
    using Clock = std::function<std::chrono::steady_clock::time_point()>;

    // `total_files` / `total_bytes`: what the transfer will move, 0 when unknown (then no
    // percent or ETA from it). `label` names the transfer ("upload", "logs"). An empty clock
    // means steady_clock::now. `reporter` must outlive this object; without `interactive`
    // no live line is sent to it.
    TransferProgress(std::string label, uint64_t total_files, uint64_t total_bytes,
                     Reporter& reporter = mlt::reporter(), bool interactive = stderr_is_terminal(),
                     Clock clock = {});
    // Without a finish() this is a fail(): a transfer left by an exception prints no summary.
    ~TransferProgress();
    TransferProgress(const TransferProgress&) = delete;
    TransferProgress& operator=(const TransferProgress&) = delete;

    // Counts `n` more content bytes moved (call per chunk); may redraw the line.
    void add_bytes(uint64_t n);
    // Counts one more file completed; may redraw the line.
    void file_done();
    // Erases the line (an empty progress event) until the next redraw. Rarely needed: the
    // reporter already erases it around other output. Does nothing when not interactive.
    void clear();
    // Erases the line and shows the summary line as an alert (in both modes). Later calls of
    // anything but the getters do nothing.
    void finish();
    // Erases the live line and ends without a summary: for callers that print their own
    // summary line. Later calls do nothing.
    void dismiss();
    // Erases a drawn line and shows its last state as an alert, so that it stays visible,
    // and shows no summary (the error that follows tells what happened). Later calls do
    // nothing.
    void fail();

    uint64_t files_done() const;  // files counted so far
    uint64_t bytes_done() const;  // bytes counted so far

  private:
    using TimePoint = std::chrono::steady_clock::time_point;
    struct Sample {
        TimePoint time;
        uint64_t bytes;
    };

    void maybe_draw_locked();
    std::string live_line_locked(TimePoint now);
    std::string summary_locked(TimePoint now) const;
    void erase_locked();

    const std::string label_;
    const uint64_t total_files_;
    const uint64_t total_bytes_;
    Reporter& reporter_;
    const bool interactive_;
    const Clock clock_;
    const TimePoint start_;
    const size_t width_;  // columns the live line may use

    mutable std::mutex mutex_;  // guards everything below
    uint64_t files_ = 0;
    uint64_t bytes_ = 0;
    TimePoint next_draw_;
    std::deque<Sample> samples_;  // (time, bytes) at the redraws of the rate window
    std::string last_line_;       // the last live line sent, without its "mlt: "
    bool drawn_ = false;          // a live line is on screen
    bool ended_ = false;          // finish() or fail() was called
};

}  // namespace mlt
