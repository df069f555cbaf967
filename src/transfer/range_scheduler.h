#pragma once
// The scheduler of a ranged transfer: RangeRunner deals the ranges of a file to the caller's
// link and the pool's links (a thread each), gives back those of a link lost, and grows the
// links with `auto` while they gain. Private to src/transfer/.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "channel_cost.h"
#include "mlt/ssh/remote.h"
#include "mlt/transfer/link_pool.h"
#include "mlt/util/error.h"
#include "range_plan.h"

namespace mlt::transfer_detail {

// What became of one range of a batch: done, or its two hashes differed (it is moved again,
// a few times, never taken).
enum class Outcome { done, mismatch };

// Deals the ranges one link moves and takes back what became of each (RangeRunner's queue).
class Dealer {
  public:
    virtual ~Dealer() = default;
    // The commands the link runs at once.
    virtual size_t channels() const = 0;
    // When the channel of the link's command `c` may open (StreamJob::start_after_s).
    virtual double start_after(size_t c) const {
        (void)c;
        return 0;
    }
    // One range to move now; none once the queue is empty (or the transfer stops).
    virtual std::optional<Range> next() = 0;
    // A run of ranges for channels() commands at once, fewer as the queue runs low.
    virtual std::vector<Range> batch() = 0;
    // A range dealt here was judged: done, or moved again (an error after a few times).
    virtual void settled(const Range& r, Outcome outcome) = 0;
};

// Runs `move` for every range of `todo` over the caller's link and the pool's links at once
// (a thread each), or over the caller's alone without links. The caller's link starts at
// once; the links connect side by side. With `auto`, starts with start_links and, over a
// far link, doubles them while the last step raised the rate by more than 10 % (measured
// over a window, window_for, once the new links are connected, after one window to ramp
// up); the links of the next step connect during the current one and wait for it (or give
// up). A link whose transport fails gives its ranges back and is opened anew (kLinkRetries
// in all; the caller's own is the caller's to reopen); other errors stop every link and go
// up.
class RangeRunner {
  public:
    // Moves ranges dealt by the Dealer over the Remote until it has none.
    using Move = std::function<void(Remote&, Dealer&)>;

    // `done(index)`: whether a range is done (one a lost link had in flight may be); `up`:
    // an upload (channels_per_link).
    // `cores`: the host's free cores (0: not known), whose logins the new channels share.
    RangeRunner(Remote& caller, LinkPool* pool, const std::atomic<uint64_t>& bytes,
                std::function<bool(size_t)> done, bool up, size_t cores = 0);

    // Returns the most links used at once (1 without links).
    size_t run(const std::vector<Range>& todo, const Move& move);

  private:
    class LinkDealer;

    // The queue over the caller's own link, until it is empty.
    void move_all(const Move& move);
    void start(size_t index, const Move& move);
    // Worker 0 is the caller's link, worker i the pool's link i - 1.
    void work(size_t index, const Move& move);
    // A worker ends (mutex_ held).
    void leave();
    void finish_with(std::exception_ptr error);
    // A signal, or the caller's StopScope.
    static bool stopping();
    // The caller's loop: Ctrl+C, links lost, and growth.
    void control(const Move& move);

    Remote& caller_;
    LinkPool* pool_;
    const std::atomic<uint64_t>& bytes_;
    const std::function<bool(size_t)> done_;
    std::mutex mutex_;
    std::condition_variable changed_;
    std::deque<Range> queue_;
    std::vector<std::thread> threads_;
    std::vector<size_t> lost_;
    size_t active_ = 0, most_ = 0, next_ = 0;
    size_t allowed_ = 0;    // links 0..allowed_-1 move ranges; those above wait for their step
    std::vector<bool> up_;  // per link: connected
    std::chrono::duration<double> window_{0.5};  // growth: the rate's window (window_for)
    bool stop_ = false;
    bool settled_ = false;  // no more growth (the links opened ahead give up)
    std::exception_ptr fatal_;
    std::unique_ptr<Error> link_error_;
    std::map<size_t, int> mismatches_;  // per range index
    // The caller's link was near when the transfer began: its channels, links and growth
    // follow from that once (a round trip measured meanwhile changes none of them).
    const bool near_;
    const bool upload_;
    size_t channels_;           // per link (plan_links, once per run)
    size_t per_command_;        // likewise
    LinkCosts costs_;           // the caller's link's, for the growth and the logins' pace
    const size_t cores_;        // the host's free cores (0: not known)
    uint64_t bytes_left_ = 0;   // what the run has to move (for the growth)
    uint64_t bytes_start_ = 0;  // bytes_ when it began
};

}  // namespace mlt::transfer_detail
