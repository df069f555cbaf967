#pragma once
// Bounds on what a remote host can make mlt keep or wait for: the end of a stream that is
// only kept for messages (a remote command's stderr), and the progress a data stream must
// make (docs/settings.md, `transfer.min_rate`, `transfer.stall_seconds`).

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace mlt {

// How much of a remote command's stderr mlt keeps: its last 64 KiB.
constexpr size_t kKeptStderr = 64 * 1024;

// The last `limit` bytes of a stream, whatever its length: memory stays within 2 x limit.
// With `take_line`, each complete line (without its newline) is offered to it first, and a
// line it takes (returns true) is not kept: a command's stderr that also carries lines for
// mlt (a range's hash, a sample) keeps only the rest for messages. A line longer than
// `limit` is never offered, only kept. `take_line` may throw; the line is gone then.
class BoundedTail {
  public:
    explicit BoundedTail(size_t limit = kKeptStderr,
                         std::function<bool(std::string_view)> take_line = {});

    // Adds the next bytes of the stream.
    void append(std::string_view data);
    // The end of what was kept (a line not ended yet included): at most `limit` bytes.
    std::string str() const;
    // Bytes of the kept stream left out before str() (0 while nothing was cut).
    uint64_t dropped() const;
    // An OutputSink (mlt/ssh/remote.h) that appends here; this must outlive it.
    std::function<void(std::string_view)> sink();

  private:
    void keep(std::string_view data);

    size_t limit_;
    std::function<bool(std::string_view)> take_line_;
    std::string kept_;         // its last limit_ bytes are the tail
    std::string line_;         // with take_line_: the line not ended yet
    bool long_line_ = false;   // the current line passed limit_: kept, not offered
    uint64_t kept_total_ = 0;  // bytes ever kept (dropped() counts from it)
};

// The floor under a data stream's progress: at least `min_rate` bytes per second over the
// last `stall_seconds` (transfer.min_rate, transfer.stall_seconds). Either 0: no floor.
struct ProgressFloor {
    uint64_t min_rate = 0;
    double stall_seconds = 0;
    bool on() const { return min_rate > 0 && stall_seconds > 0; }
};

// Measures one stream against a ProgressFloor: fed the bytes as they move, asked as often
// as the caller likes. A stream is judged only once it has run for a whole window.
class ProgressWatch {
  public:
    using Clock = std::chrono::steady_clock;

    explicit ProgressWatch(ProgressFloor floor, Clock::time_point start = Clock::now());

    // `bytes` moved at `now`.
    void add(uint64_t bytes, Clock::time_point now = Clock::now());
    // The rate over the last window (bytes per second) when it is under the floor and the
    // stream has run a whole window; nullopt otherwise (also without a floor).
    std::optional<double> below_floor(Clock::time_point now = Clock::now());
    const ProgressFloor& floor() const { return floor_; }

  private:
    struct Sample {
        Clock::time_point at;
        uint64_t total;  // bytes moved up to `at`
    };
    ProgressFloor floor_;
    Clock::time_point start_;
    uint64_t total_ = 0;
    std::deque<Sample> samples_;  // oldest first; the first one at or before the window
};

// What a stream that fell under `floor` did, for its error: "stalled: nothing moved in the
// last 30 s" or "trickled: 1.2 KiB/s over the last 30 s, under the floor of 64 KiB/s".
std::string stall_text(const ProgressFloor& floor, double rate);

}  // namespace mlt
