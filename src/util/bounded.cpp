// BoundedTail: the last bytes and lines of a stream (a remote's stderr), kept within a bound.
#include "mlt/util/bounded.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "mlt/util/text.h"

namespace mlt {

BoundedTail::BoundedTail(size_t limit, std::function<bool(std::string_view)> take_line)
    : limit_(std::max<size_t>(limit, 1)), take_line_(std::move(take_line)) {}

void BoundedTail::keep(std::string_view data) {
    kept_total_ += data.size();
    if (data.size() >= limit_) {
        kept_.assign(data.substr(data.size() - limit_));
        return;
    }
    kept_.append(data);
    // Cut only once twice the limit is held: each byte is moved at most once more.
    if (kept_.size() > 2 * limit_) kept_.erase(0, kept_.size() - limit_);
}

void BoundedTail::append(std::string_view data) {
    if (!take_line_) {
        keep(data);
        return;
    }
    while (!data.empty()) {
        const size_t eol = data.find('\n');
        const std::string_view piece = data.substr(0, eol);
        data.remove_prefix(eol == std::string_view::npos ? data.size() : eol + 1);
        if (long_line_) {
            keep(piece);
            if (eol != std::string_view::npos) {
                keep("\n");
                long_line_ = false;
            }
            continue;
        }
        line_.append(piece);
        if (eol == std::string_view::npos) {
            if (line_.size() > limit_) {  // no line mlt reads is this long: text only
                keep(line_);
                line_.clear();
                long_line_ = true;
            }
            continue;
        }
        std::string line = std::move(line_);
        line_.clear();
        if (!take_line_(line)) {
            line.push_back('\n');
            keep(line);
        }
    }
}

std::string BoundedTail::str() const {
    std::string out = kept_.size() > limit_ ? kept_.substr(kept_.size() - limit_) : kept_;
    out += line_;
    if (out.size() > limit_) out.erase(0, out.size() - limit_);
    return out;
}

uint64_t BoundedTail::dropped() const {
    const uint64_t shown = std::min<uint64_t>(kept_.size(), limit_);
    return kept_total_ - shown;
}

std::function<void(std::string_view)> BoundedTail::sink() {
    return [this](std::string_view d) { append(d); };
}

ProgressWatch::ProgressWatch(ProgressFloor floor, Clock::time_point start)
    : floor_(floor), start_(start) {
    samples_.push_back({start, 0});
}

void ProgressWatch::add(uint64_t bytes, Clock::time_point now) {
    total_ += bytes;
    if (!floor_.on()) return;
    // Samples at least 1/32 of a window apart: a window holds about 32 of them, and the
    // bytes of one land at most that much early (the rate is understated by 3 % at most).
    const auto step = std::chrono::duration<double>(floor_.stall_seconds / 32);
    if (now - samples_.back().at >= step)
        samples_.push_back({now, total_});
    else
        samples_.back().total = total_;
}

std::optional<double> ProgressWatch::below_floor(Clock::time_point now) {
    if (!floor_.on()) return std::nullopt;
    const auto window = std::chrono::duration<double>(floor_.stall_seconds);
    if (now - start_ < window) return std::nullopt;
    const auto from = now - std::chrono::duration_cast<Clock::duration>(window);
    // The base is the last sample at or before the window's start; older ones go.
    while (samples_.size() > 1 && samples_[1].at <= from) samples_.pop_front();
    const uint64_t moved = total_ - samples_.front().total;
    const double rate = static_cast<double>(moved) / floor_.stall_seconds;
    if (static_cast<double>(moved) >= static_cast<double>(floor_.min_rate) * floor_.stall_seconds)
        return std::nullopt;
    return rate;
}

std::string stall_text(const ProgressFloor& floor, double rate) {
    const std::string window = number_text(floor.stall_seconds) + " s";
    if (rate <= 0) return "stalled: nothing moved in the last " + window;
    return "trickled: " + format_bytes(static_cast<uint64_t>(std::llround(rate))) +
           "/s over the last " + window + ", under the floor of " + format_bytes(floor.min_rate) +
           "/s";
}

}  // namespace mlt
