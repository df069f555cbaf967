// RangeRunner: ranges dealt over the links, lost links given back and reopened, auto growth.

#include "range_scheduler.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "mlt/ssh/connection.h"
#include "mlt/transfer/ranges.h"
#include "mlt/util/interrupt.h"

namespace mlt::transfer_detail {

namespace {

// Whether the host's channel listener pays for its one command: new channels log in, and
// `plan` opens more than the control shell's (on side connections too, up to `links` where
// the transfer may grow: they share it), or would if they did not.
bool listener_pays(const LinkCosts& costs, const LinkPlan& plan, size_t links, uint64_t bytes,
                   size_t ranges, bool up, size_t cores) {
    if (ranges < 2 || !costs.measured()) return false;
    size_t channels = std::max(plan.links, links) * plan.channels;
    if (channels <= 1) {
        const size_t most = std::min(channels_per_link(false, up), ranges);
        channels =
            channels_worth(bytes, costs.channel_rate(up), kConnectionRate, 0, most, 1, cores);
    }
    return costs.listener_pays(channels - 1);
}

}  // namespace

// One link's dealer: the ranges of the queue its commands take, held until they are settled
// (a link lost gives back those it held that are not done).
class RangeRunner::LinkDealer : public Dealer {
  public:
    // `shared`: other links take from the queue too (batches then even out).
    // `caller`: the caller's link, whose first command runs in its control shell.
    LinkDealer(RangeRunner& runner, bool shared, bool caller)
        : runner_(runner), shared_(shared), caller_(caller) {}

    size_t channels() const override { return runner_.channels_; }

    // On the caller's link, the new channels open one login apart per free core of the host
    // (its first command runs in the control shell); elsewhere, and where the cores are not
    // known, at once.
    double start_after(size_t c) const override {
        if (!caller_ || c == 0 || runner_.cores_ == 0 || !runner_.costs_.measured()) return 0;
        return static_cast<double>((c - 1) / runner_.cores_) * runner_.costs_.channel_s;
    }

    std::optional<Range> next() override {
        std::lock_guard<std::mutex> lock(runner_.mutex_);
        if (runner_.stop_ || runner_.queue_.empty()) return std::nullopt;
        return hold();
    }

    std::vector<Range> batch() override {
        std::lock_guard<std::mutex> lock(runner_.mutex_);
        std::vector<Range> out;
        if (runner_.stop_) return out;
        // Fewer ranges per command as the queue runs low, so that the links end together.
        const size_t links = shared_ ? std::max<size_t>(runner_.allowed_, 1) : 1;
        const size_t share =
            shared_ ? runner_.queue_.size() / (links * runner_.channels_) : runner_.per_command_;
        const size_t take = runner_.channels_ * std::clamp<size_t>(share, 1, runner_.per_command_);
        while (!runner_.queue_.empty() && out.size() < take) out.push_back(hold());
        return out;
    }

    void settled(const Range& r, Outcome outcome) override {
        std::lock_guard<std::mutex> lock(runner_.mutex_);
        held_.erase(r.index);
        if (outcome == Outcome::done) return;
        const int attempts = ++runner_.mismatches_[r.index];
        // Judged by the caller: tampering, unless the file changed meanwhile.
        if (attempts >= kMovesPerRange)
            throw tampered_error("moving range " + std::to_string(r.index) + " of a file",
                                 "it arrived with another sha256 than it was sent with, " +
                                     std::to_string(attempts) + " times");
        runner_.queue_.push_front(r);  // moved again, first
        runner_.changed_.notify_all();
    }

    // The ranges dealt here and not settled, back into the queue unless done (the runner's
    // mutex held).
    void give_back() {
        for (auto r = held_.rbegin(); r != held_.rend(); ++r)
            if (!runner_.done_(r->first)) runner_.queue_.push_front(r->second);
        held_.clear();
    }

  private:
    Range hold() {
        Range r = runner_.queue_.front();
        runner_.queue_.pop_front();
        held_.emplace(r.index, r);
        return r;
    }

    RangeRunner& runner_;
    const bool shared_;
    const bool caller_;
    std::map<size_t, Range> held_;
};

RangeRunner::RangeRunner(Remote& caller, LinkPool* pool, const std::atomic<uint64_t>& bytes,
                         std::function<bool(size_t)> done, bool up, size_t cores)
    : caller_(caller),
      pool_(pool),
      bytes_(bytes),
      done_(std::move(done)),
      near_(is_near(caller)),
      upload_(up),
      channels_(channels_per_link(near_, up)),
      per_command_(ranges_per_command(near_)),
      costs_(link_costs(caller)),
      cores_(cores) {}

size_t RangeRunner::run(const std::vector<Range>& todo, const Move& move) {
    if (todo.empty()) return 0;
    queue_.assign(todo.begin(), todo.end());
    for (const Range& r : todo) bytes_left_ += r.length;
    bytes_start_ = bytes_.load();
    const size_t links = pool_ ? pool_->limit() + 1 : 1;
    const auto make_plan = [&] {
        return plan_links(caller_, bytes_left_, todo.size(), todo.front().length, upload_,
                          !pool_ || pool_->tuning(), links, cores_);
    };
    LinkPlan plan = make_plan();
    // Channels that log in are asked to go to the host's listener instead (one command, once
    // a connection): then they cost next to nothing, and the plan takes as many as pay.
    const bool grows = pool_ && pool_->tuning() && !near_;
    if (listener_pays(costs_, plan, grows ? links : plan.links, bytes_left_, todo.size(), upload_,
                      cores_) &&
        caller_.listen_for_channels()) {
        costs_ = link_costs(caller_);
        plan = make_plan();
    }
    channels_ = plan.channels;
    per_command_ = plan.per_command;
    spdlog::debug(
        "ranges: {} channel(s) a connection, {} connection(s) to start, {} range(s) a "
        "command (a new channel costs {:.3f} s)",
        channels_, plan.links, per_command_, costs_.channel_s);
    // One link by the model: the caller's alone. The growth would measure the rate while the
    // new channels still log in (staggered on a host with few cores) and take a slow start
    // for a link that wants more (measured: 10 channels instead of 4, 11.5 s instead of 9).
    if (!pool_ || pool_->limit() == 0 || todo.size() <= channels_ || plan.links == 1) {
        move_all(move);
        return 1;
    }
    // The caller's own link (worker 0) moves ranges from the start; the side links join as
    // they connect, side by side.
    allowed_ = plan.links;
    settled_ = !pool_->tuning() || near_;  // growth: auto over a far link
    if (pool_->tuning() && settled_)
        spdlog::debug("ranges: {} connection(s) over a near link ({} local cores)", allowed_,
                      std::thread::hardware_concurrency());
    up_.assign(links, false);
    window_ = window_for(caller_);  // before worker 0 uses the caller's link
    // While growing, the links of the next step connect while this one is measured.
    const size_t open = settled_ ? allowed_ : std::min(2 * allowed_, links);
    const size_t useful = (todo.size() + channels_ - 1) / channels_;
    for (size_t i = 0; i < std::min(open, useful); ++i) start(i, move);
    control(move);
    for (auto& t : threads_) t.join();
    if (fatal_) std::rethrow_exception(fatal_);
    // What the links could not move (refused, or lost too often) goes over the caller's own
    // link: if that one is lost too, the caller's reconnect takes it from there.
    if (!queue_.empty() && link_error_) spdlog::debug("ranges: {}", link_error_->what());
    move_all(move);
    return std::max<size_t>(most_, 1);
}

void RangeRunner::move_all(const Move& move) {
    LinkDealer dealer(*this, false, true);
    while (!queue_.empty() && !stop_) move(caller_, dealer);
}

void RangeRunner::start(size_t index, const Move& move) {
    std::lock_guard<std::mutex> lock(mutex_);
    ++active_;
    next_ = std::max(next_, index + 1);
    // The caller's stop (a live pull asked to end) ends the links' waits too.
    const std::atomic<bool>* stop = current_stop();
    threads_.push_back(thread_without_signals([this, index, move, stop] {
        std::unique_ptr<StopScope> scope;
        if (stop) scope = std::make_unique<StopScope>(*stop);
        work(index, move);
    }));
}

void RangeRunner::work(size_t index, const Move& move) {
    Remote* remote = nullptr;
    try {
        remote = index == 0 ? &caller_ : pool_->link(index - 1);
    } catch (...) {
        finish_with(std::current_exception());
        return;
    }
    {
        std::unique_lock<std::mutex> lock(mutex_);
        if (!remote) {
            settled_ = true;  // the server's limit: no more links
            leave();
            return;
        }
        up_[index] = true;
        changed_.notify_all();
        // A link opened ahead of its step waits for it, or for the end of the growth.
        changed_.wait(lock,
                      [&] { return index < allowed_ || settled_ || stop_ || queue_.empty(); });
        if (index >= allowed_) {
            leave();
            return;
        }
        most_ = std::max(most_, index + 1);
    }
    LinkDealer dealer(*this, true, index == 0);
    try {
        move(*remote, dealer);
    } catch (const StallError& e) {
        // A link that moves too little (a frozen side connection, a throttled one) gives its
        // ranges to the links that move; it is not opened again. When no link moves, the
        // caller's own takes the rest at the end, and its stall goes up.
        std::lock_guard<std::mutex> lock(mutex_);
        spdlog::debug("ranges: connection {}: {}; its ranges go to the others", index + 1,
                      e.what());
        dealer.give_back();
        if (index > 0) pool_->drop(index - 1);
        leave();
        return;
    } catch (const Error& e) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!is_link_loss(e)) {
            if (!fatal_) fatal_ = std::current_exception();
            stop_ = true;
        } else {
            dealer.give_back();
            link_error_ = std::make_unique<Error>(e);
            // The caller's link is reopened by the caller (after this transfer).
            if (index > 0) {
                lost_.push_back(index);
                pool_->drop(index - 1);
            }
        }
        leave();
        return;
    } catch (...) {
        finish_with(std::current_exception());
        return;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    spdlog::trace("ranges: connection {} has no more to move", index + 1);
    leave();
}

void RangeRunner::leave() {
    --active_;
    changed_.notify_all();
}

void RangeRunner::finish_with(std::exception_ptr error) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!fatal_) fatal_ = error;
    stop_ = true;
    leave();
}

bool RangeRunner::stopping() {
    const std::atomic<bool>* stop = current_stop();
    return interrupt_pending() || (stop && stop->load());
}

void RangeRunner::control(const Move& move) {
    auto window_start = Steady::now();
    uint64_t window_bytes = bytes_.load();
    double base_rate = 0;
    int windows = 0;
    int retries = 0;
    for (;;) {
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait_for(lock, std::chrono::milliseconds(200));
        if (stopping() && !stop_) {
            stop_ = true;
            changed_.notify_all();
        }
        if (active_ == 0 && (stop_ || queue_.empty())) break;
        if (active_ == 0 || (!lost_.empty() && !queue_.empty())) {
            // Every link lost (or one of them): open them again, a few times.
            if (++retries > kLinkRetries || lost_.empty()) {
                if (active_ == 0) break;
                lost_.clear();
                continue;
            }
            const size_t index = lost_.front();
            lost_.erase(lost_.begin());
            lock.unlock();
            start(index, move);
            continue;
        }
        const auto now = Steady::now();
        if (settled_ || now - window_start < window_) continue;
        if (std::count(up_.begin(), up_.begin() + static_cast<std::ptrdiff_t>(allowed_), true) <
            static_cast<std::ptrdiff_t>(allowed_)) {  // links still connecting: no rate yet
            window_start = now;
            window_bytes = bytes_.load();
            windows = 0;
            continue;
        }
        const double seconds = std::chrono::duration<double>(now - window_start).count();
        const double rate = static_cast<double>(bytes_.load() - window_bytes) / seconds;
        window_start = now;
        window_bytes = bytes_.load();
        if (++windows < 2) continue;  // the first window after they connected: ramp-up
        const size_t links = pool_->limit() + 1;
        // As many again (2, 4, 8): a far host needs many. Their connections are open already
        // (opened during this step), so a step costs two windows.
        const size_t grow_to =
            std::min({2 * allowed_, links, allowed_ + queue_.size() / channels_});
        const uint64_t moved = bytes_.load() - bytes_start_;
        const uint64_t left = bytes_left_ > moved ? bytes_left_ - moved : 0;
        const bool pays =
            grow_to > allowed_ &&
            (!costs_.measured() ||
             more_links_pay(left, rate, allowed_, grow_to - allowed_, channels_, costs_));
        if ((base_rate > 0 && rate < base_rate * kWorthGrowing) || !pays) {
            settled_ = true;  // the links opened ahead give up
            changed_.notify_all();
            spdlog::debug("ranges: {} connections ({:.1f} MB/s){}", allowed_, rate / 1e6,
                          grow_to <= allowed_ ? ""
                          : pays              ? "; more did not pay"
                                              : "; more would not pay for their logins");
            continue;
        }
        base_rate = rate;
        windows = 0;
        allowed_ = grow_to;
        changed_.notify_all();
        const size_t ahead = std::min(2 * allowed_, links), from = next_;
        lock.unlock();
        for (size_t index = from; index < ahead; ++index) start(index, move);
    }
    if (stopping()) {
        for (auto& t : threads_) t.join();
        threads_.clear();
        throw_if_interrupted();
    }
}

}  // namespace mlt::transfer_detail
