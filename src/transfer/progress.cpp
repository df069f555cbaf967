// TransferProgress: the progress line of a transfer, its bytes, files and rate.

#include "mlt/transfer/progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <string_view>

namespace mlt {

namespace {

using std::chrono::steady_clock;

// Often enough to look alive, rarely enough that a fast transfer does not spend its time
// (or a slow terminal link its bandwidth) on redraws.
constexpr auto kRedrawInterval = std::chrono::milliseconds(100);
// The rate is measured over this window, not since the start: after a slow start or a
// stall the ETA follows what the link does now, yet stays steady between redraws.
constexpr auto kRateWindow = std::chrono::seconds(3);
constexpr uint64_t kLargeUploadFiles = 10000;
// 2^30, not 10^9: the summary shows GiB, so it never reads "0.9 GiB" for a "large" upload.
constexpr uint64_t kLargeUploadBytes = uint64_t{1} << 30;
constexpr size_t kDefaultColumns = 80;
// The live line carries it itself (the reporter draws progress text as given); the summary
// and the kept last state are alerts, which get it from the reporter.
constexpr std::string_view kPrefix = "mlt: ";

double seconds(steady_clock::duration d) {
    return std::chrono::duration<double>(d).count();
}

std::string files_text(uint64_t n) {
    return format_count(n) + (n == 1 ? " file" : " files");
}

std::string format_rate(double bytes_per_second) {
    // The clamp keeps the conversion defined; no link gets near it.
    return format_bytes(static_cast<uint64_t>(std::clamp(bytes_per_second, 0.0, 1e18))) + "/s";
}

// One column less than the terminal has: a line that fills the last column makes some
// terminals wrap, and the next `\r` then returns to the wrapped half. stderr, not the
// reporter: a Reporter has no terminal to ask, and the one that draws the line writes there.
size_t line_columns() {
    winsize ws{};
    if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1) return ws.ws_col - 1u;
    return kDefaultColumns - 1;
}

}  // namespace

std::string format_duration(double seconds) {
    if (!(seconds >= 0)) seconds = 0;  // also NaN
    char buf[32];
    if (seconds < 9.95) {
        std::snprintf(buf, sizeof buf, "%.1f s", seconds);
        return buf;
    }
    if (seconds >= 359999.5) return ">99h";  // keeps the conversion below defined
    const long total = std::lround(seconds);
    if (total < 60)
        std::snprintf(buf, sizeof buf, "%ld s", total);
    else if (total < 3600)
        std::snprintf(buf, sizeof buf, "%ldm%02lds", total / 60, total % 60);
    else
        std::snprintf(buf, sizeof buf, "%ldh%02ldm%02lds", total / 3600, total / 60 % 60,
                      total % 60);
    return buf;
}

std::string format_count(uint64_t n) {
    const std::string digits = std::to_string(n);
    std::string out;
    for (size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return out;
}

std::optional<std::string> large_upload_summary(uint64_t files, uint64_t bytes,
                                                const std::string& destination) {
    if (files <= kLargeUploadFiles && bytes <= kLargeUploadBytes) return std::nullopt;
    std::string text = "about to upload " + files_text(files) + ", " + format_bytes(bytes);
    if (!destination.empty()) text += " to " + destination;
    return text;
}

TransferProgress::TransferProgress(std::string label, uint64_t total_files, uint64_t total_bytes,
                                   Reporter& reporter, bool interactive, Clock clock)
    : label_(std::move(label)),
      total_files_(total_files),
      total_bytes_(total_bytes),
      reporter_(reporter),
      interactive_(interactive),
      clock_(clock ? std::move(clock) : Clock(&steady_clock::now)),
      start_(clock_()),
      width_(interactive ? line_columns() : kDefaultColumns - 1),
      // The first line waits one interval: a transfer that ends sooner shows only its
      // summary, and the first rate is not measured over a few microseconds.
      next_draw_(start_ + kRedrawInterval),
      samples_{{start_, 0}} {}

TransferProgress::~TransferProgress() {
    fail();
}

void TransferProgress::add_bytes(uint64_t n) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (ended_) return;
    bytes_ += n;
    maybe_draw_locked();
}

void TransferProgress::file_done() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (ended_) return;
    ++files_;
    maybe_draw_locked();
}

void TransferProgress::clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (ended_ || !drawn_) return;
    erase_locked();
}

void TransferProgress::finish() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (ended_) return;
    ended_ = true;
    // Erased first: the reporter would draw the stale line again below the summary.
    erase_locked();
    // Nothing to summarize, no line: a download of nothing is no news.
    if (files_ > 0 || bytes_ > 0) reporter_.alert(summary_locked(clock_()));
}

void TransferProgress::dismiss() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (ended_) return;
    ended_ = true;
    erase_locked();
}

void TransferProgress::fail() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (ended_) return;
    ended_ = true;
    // A "done" summary would be a lie; the last state shows how far the transfer got. As a
    // line of its own (the live line is the reporter's to redraw or drop), it stays above
    // the error message that follows.
    if (!drawn_) return;
    erase_locked();
    reporter_.alert(last_line_);
}

uint64_t TransferProgress::files_done() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return files_;
}

uint64_t TransferProgress::bytes_done() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return bytes_;
}

void TransferProgress::maybe_draw_locked() {
    // The throttle is on the clock, not on the number of calls: the chunk size decides how
    // often we are called, not how often the terminal should change.
    if (!interactive_) return;
    const TimePoint now = clock_();
    if (now < next_draw_) return;
    next_draw_ = now + kRedrawInterval;
    const std::string line = live_line_locked(now);
    reporter_.emit(Event::progress, line);
    // Kept for fail(); on a terminal too narrow for even the prefix the cut line is all.
    last_line_ = line.compare(0, kPrefix.size(), kPrefix) == 0 ? line.substr(kPrefix.size()) : line;
    drawn_ = true;
}

std::string TransferProgress::live_line_locked(TimePoint now) {
    // Samples are taken at redraws only; the oldest one kept is the last that is at least
    // a window old, so the rate spans a full window once there is one.
    samples_.push_back({now, bytes_});
    while (samples_.size() > 2 && samples_[1].time <= now - kRateWindow) samples_.pop_front();
    const Sample& base = samples_.front();
    const double span = seconds(now - base.time);
    const double rate = span > 0 ? static_cast<double>(bytes_ - base.bytes) / span : 0;

    std::string head = std::string(kPrefix) + label_ + ":";
    // 100.0 * done / total, not done / total * 100: the latter makes 29/100 into 28.99...
    double percent = -1;
    if (total_bytes_ > 0)
        percent = 100.0 * static_cast<double>(bytes_) / static_cast<double>(total_bytes_);
    else if (total_files_ > 0)
        percent = 100.0 * static_cast<double>(files_) / static_cast<double>(total_files_);
    if (percent >= 0) {
        // Rounded down and capped: 100% only once everything is there, even if a file grew.
        char text[16];
        std::snprintf(text, sizeof text, " %3d%%",
                      static_cast<int>(std::min(100.0, std::floor(percent))));
        head += text;
    }
    const std::string files = total_files_ > 0
                                  ? format_count(files_) + "/" + files_text(total_files_)
                                  : files_text(files_);
    std::string bytes = format_bytes(bytes_);
    if (total_bytes_ > 0) bytes += "/" + format_bytes(total_bytes_);
    std::string eta;
    if (total_bytes_ > bytes_ && rate > 0)
        eta = ", ETA " + format_duration(static_cast<double>(total_bytes_ - bytes_) / rate);
    // On a narrow terminal (or with big counts) what matters most stays: the file counts go
    // first, then the rate; only then is the line cut.
    auto join = [&](bool with_files, bool with_rate) {
        return head + " " + (with_files ? files + ", " : "") + bytes +
               (with_rate ? ", " + format_rate(rate) : "") + eta;
    };
    std::string line = join(true, true);
    if (line.size() > width_) line = join(false, true);
    if (line.size() > width_) line = join(false, false);
    if (line.size() > width_) line.resize(width_);
    return line;
}

std::string TransferProgress::summary_locked(TimePoint now) const {
    const double elapsed = seconds(now - start_);
    std::string line = label_ + ": " + files_text(files_) + ", " + format_bytes(bytes_) + " in " +
                       format_duration(elapsed);
    // Below 0.05 s (shown as "0.0 s") a rate would be noise.
    if (elapsed >= 0.05 && bytes_ > 0)
        line += " (" + format_rate(static_cast<double>(bytes_) / elapsed) + ")";
    return line;
}

void TransferProgress::erase_locked() {
    if (!drawn_) return;
    reporter_.emit(Event::progress, {});
    drawn_ = false;
}

}  // namespace mlt
