// Big files as ranges over several connections (see mlt/transfer/ranges.h).
//
// The remote side is a short sh command per channel, moving ranges one after the other:
//   down: a run of ranges fixed when it starts (a `for` loop over them): each range's bytes
//         (`dd skip=BLOCK`, padded or cut to exactly LEN) on stdout, then their sha256 (read
//         from the file once more) as "INDEX SHA256" on stderr;
//   up:   ranges dealt to it as it is ready for one (a `while read` loop until its stdin
//         ends): each a header line "I:BLOCK:LEN", its bytes read off stdin (`head -c LEN`)
//         and written at its offset (`dd seek= conv=notrunc`), then the sha256 of what landed
//         in the partial file, as "INDEX SHA256" on stderr and into `<partial>.d/<index>.sha`.
// The local side hashes what it sends or receives; a range counts as done only when both
// hashes agree, judged as soon as its bytes and the remote's hash have both come. Hashing the
// remote file again (down) or what was written (up) is what finds a range that changed on its way:
// it is moved again, never taken.

#include "mlt/transfer/ranges.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>
#include <tuple>

#include "internal.h"
#include "mlt/ssh/connection.h"
#include "mlt/transfer/progress.h"
#include "mlt/util/interrupt.h"
#include "mlt/util/sha256.h"
#include "mlt/util/shell.h"
#include "mlt/util/text.h"

namespace mlt {

using namespace transfer_detail;

namespace {

// `n` rounded up to whole kRangeBlock blocks.
uint64_t whole_blocks(uint64_t n) {
    return (n + kRangeBlock - 1) / kRangeBlock * kRangeBlock;
}

}  // namespace

uint64_t range_size_for(uint64_t file_size) {
    constexpr uint64_t kMin = 16ull * 1024 * 1024;
    return std::max(kMin, whole_blocks(file_size / 256));
}

bool is_near(const Remote& remote) {
    const double rtt = remote.round_trip_s();
    return rtt >= 0 && rtt < kNearRoundTrip;
}

std::string remote_hash_setup() {
    const std::string empty_sha256 =
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
    return "hash_cmd=sha256sum; [ \"$(printf '' | openssl dgst -sha256 -r 2>/dev/null | "
           "cut -c1-64)\" = " +
           empty_sha256 + " ] && hash_cmd='openssl dgst -sha256 -r'; export hash_cmd; ";
}

bool ranges_pay(const Remote& remote, uint64_t size, const LinkPool* links) {
    const bool near = is_near(remote) && (!links || links->tuning());
    return size >= (near ? kNearRangeThreshold : kRangeThreshold);
}

ConnectionLinks::ConnectionLinks(Connection& primary, int wanted)
    : primary_(primary),
      wanted_(wanted),
      links_(limit()),
      ahead_(limit()),
      failed_ahead_(limit(), 0) {}

ConnectionLinks::~ConnectionLinks() {
    for (auto& t : ahead_)
        if (t.joinable()) t.join();
}

// The links a RangeRunner connects first: with auto its first step and the next (4
// connections, the caller's among them), and one more for tar streams beside the ranges.
constexpr size_t kAheadLinks = 4;

void ConnectionLinks::open_ahead() {
    open_links(std::min(limit(), wanted_ > 0 ? limit() : kAheadLinks));
}

void ConnectionLinks::open_first() {
    open_links(std::min<size_t>(limit(), 1));
}

void ConnectionLinks::open_links(size_t n) {
    for (size_t i = 0; i < n; ++i) {
        if (links_[i] || ahead_[i].joinable()) continue;
        ++connecting_;  // before the thread, which may end first
        try {
            ahead_[i] = thread_without_signals([this, i] {
                try {
                    if (!connect(i)) failed_ahead_[i] = 1;
                } catch (const Error&) {
                    failed_ahead_[i] = 1;  // a signal: the caller's thread sees it
                }
                --connecting_;
            });
        } catch (...) {
            --connecting_;  // no thread
            throw;
        }
    }
}

size_t ConnectionLinks::limit() const {
    return (wanted_ > 0 ? static_cast<size_t>(wanted_) : kAutoConnections) - 1;
}

Remote* ConnectionLinks::link(size_t i) {
    if (i >= links_.size()) return nullptr;
    if (ahead_[i].joinable()) ahead_[i].join();
    if (failed_ahead_[i]) {
        failed_ahead_[i] = 0;
        return nullptr;  // as a refusal: the links open so far carry the transfer
    }
    return connect(i);
}

Remote* ConnectionLinks::connect(size_t i) {
    if (!offered_) return nullptr;
    if (!links_[i]) {
        links_[i] = primary_.open_side();
        if (!links_[i]) {
            offered_ = false;
            return nullptr;
        }
    }
    try {
        return &links_[i]->remote();
    } catch (const Error& e) {
        // A server at its MaxStartups or MaxSessions refuses more: the links open so far
        // carry the transfer.
        if (is_signal(e.kind())) throw;
        spdlog::debug("no connection {} for ranges: {}", i + 1, e.what());
        links_[i].reset();
        return nullptr;
    }
}

void ConnectionLinks::drop(size_t i) {
    if (i < links_.size()) links_[i].reset();
}

namespace {

using Steady = std::chrono::steady_clock;

struct Range {
    size_t index = 0;
    uint64_t offset = 0;
    uint64_t length = 0;
};

std::vector<Range> cut_ranges(uint64_t size, uint64_t range_size) {
    std::vector<Range> out;
    for (uint64_t at = 0; at < size || (size == 0 && out.empty()); at += range_size) {
        out.push_back({out.size(), at, std::min(range_size, size - at)});
        if (size == 0) break;
    }
    return out;
}

// What became of one range of a batch: done, or its two hashes differed (it is moved again,
// a few times, never taken).
enum class Outcome { done, mismatch };
constexpr int kMovesPerRange = 3;
// Channels per link, each running one remote command for its ranges: one's start (a
// channel, the command, the remote shell) overlaps the others' bytes, and each channel
// brings its window. sshd's is 2 MiB, so an upload moves at most 2 MiB per round trip per
// channel: over a far link 8 give a connection 84 MB/s at 200 ms (4 gave 42, and the two
// connections auto starts with then held an upload to 84 MB/s for the 2 s its first growth
// step took); with the control shell that is 9 of sshd's 10 (MaxSessions). A download
// reads with windows of up to 16 MiB (read_size), so 4 do there. Over a near link the
// window is no limit and every remote command more costs CPU (a login shell each): 2 there.
constexpr size_t kChannelsPerFarLinkUp = 8;
constexpr size_t kChannelsPerFarLinkDown = 4;
constexpr size_t kChannelsPerNearLink = 2;

size_t channels_per_link(bool near, bool up) {
    if (near) return kChannelsPerNearLink;
    return up ? kChannelsPerFarLinkUp : kChannelsPerFarLinkDown;
}
}  // namespace

bool uses_links(const Remote& remote, uint64_t size, const LinkPool* links) {
    if (!links || links->limit() == 0 || !ranges_pay(remote, size, links)) return false;
    const uint64_t range = range_size_for(size);
    return (size + range - 1) / range > channels_per_link(is_near(remote), true);
}

namespace {

// The most ranges one remote command moves, one after the other: each command costs a
// channel, its start and a login shell's profile (round trips, and 0.1-0.2 s of CPU with
// pyenv). Over a near link that CPU is the transfer's own (the cipher's cores): 16 ranges
// a command moved 1 GiB over loopback on 2 cores at 309-323 MB/s down and 351-376 up, where
// 4 moved 165-262 and 264-276. Over a far link 4 keep the commands of the tail short, so
// that the links end together. A range is recorded as its hash comes (judge_legs), so a
// long command killed midway keeps what it moved.
size_t ranges_per_command(bool near) {
    return near ? 16 : 4;
}

// Whether `line` is "INDEX SHA256", what the remote prints for a range it hashed; sets
// `index` and `hash` when it is.
bool hash_line(const std::string& line, size_t& index, std::string& hash) {
    const size_t space = line.find(' ');
    if (space == 0 || space == std::string::npos || space > 18 ||
        line.find_first_not_of("0123456789") != space || line.size() != space + 65 ||
        line.find_first_not_of("0123456789abcdef", space + 1) != std::string::npos)
        return false;
    index = std::stoul(line.substr(0, space));
    hash = line.substr(space + 1);
    return true;
}

// The hashes the remote printed in `text`, by range index (the last line of each counts).
std::map<size_t, std::string> hash_lines(const std::string& text) {
    std::map<size_t, std::string> out;
    std::istringstream in(text);
    std::string line, hash;
    size_t index = 0;
    while (std::getline(in, line))
        if (hash_line(line, index, hash)) out[index] = hash;
    return out;
}

// One range of a remote command, in the order the command moves them: the hash of its bytes
// at this end, how far they got, the hash the remote printed for it, and whether it was
// judged (as soon as its bytes and that hash have both come).
struct Leg {
    Range range;
    Sha256 hash;
    uint64_t at = 0;
    std::string remote;
    bool judged = false;
    bool announced = false;  // up, streamed: its header line went to the command

    explicit Leg(const Range& r) : range(r), at(r.offset) {}
    uint64_t end() const { return range.offset + range.length; }
    bool complete() const { return at == end(); }
};
struct Run {
    std::deque<Leg> legs;  // a deque: a leg stays where it is while more are added
    // The command's stderr: a line "INDEX SHA256" per range done goes to `hashes`, the rest
    // (errors) is kept, its end, for messages.
    std::deque<std::pair<size_t, std::string>> hashes;
    BoundedTail err{kKeptStderr, [this](std::string_view line) {
                        size_t index = 0;
                        std::string hash;
                        if (!hash_line(std::string(line), index, hash)) return false;
                        hashes.emplace_back(index, std::move(hash));
                        return true;
                    }};
    size_t heard = 0;      // the legs whose hash line came (the first `heard`)
    bool begun = false;    // down: the command's marker line has come
    std::string preamble;  // down: what came before it (a login profile that prints)

    Run() = default;
    Run(const Run&) = delete;  // `err` points at this one
    Run& operator=(const Run&) = delete;

    // Gives the legs the hash lines heard so far: the remote prints one per range, in the
    // order it moves them (a range moved twice by one command gets its own each time).
    void hear(const std::string& shown) {
        for (; !hashes.empty(); hashes.pop_front()) {
            const auto& [index, hash] = hashes.front();
            if (heard >= legs.size() || legs[heard].range.index != index)
                throw remote_error("moving " + shown + ": the remote hashed range " +
                                   std::to_string(index) + ", which was not the next");
            legs[heard++].remote = hash;
        }
    }
};

// What a login profile may print before a command's own output, at most.
constexpr size_t kMaxPreamble = 64 * 1024;

// Deals the ranges one link moves and takes back what became of each (RangeRunner's queue).
class Dealer {
  public:
    virtual ~Dealer() = default;
    // The commands the link runs at once.
    virtual size_t channels() const = 0;
    // One range to move now; none once the queue is empty (or the transfer stops).
    virtual std::optional<Range> next() = 0;
    // A run of ranges for channels() commands at once, fewer as the queue runs low.
    virtual std::vector<Range> batch() = 0;
    // A range dealt here was judged: done, or moved again (an error after a few times).
    virtual void settled(const Range& r, Outcome outcome) = 0;
};

// Judges each leg of `run` whose bytes and hash both came (the hash proves the range), or,
// with `status` given (the command ended), every leg not judged yet; each goes to `dealer`.
template <class Mover>
void judge_legs(Mover& self, Remote& remote, Run& run, Dealer& dealer,
                std::optional<int> status = std::nullopt) {
    run.hear(remote.name());
    for (size_t i = 0; i < run.legs.size(); ++i) {
        Leg& leg = run.legs[i];
        const bool arrived = i < run.heard && leg.complete();
        if (leg.judged || (!arrived && !status)) continue;
        // A command that failed after some of its ranges: those whose hash came stand.
        const Outcome outcome = self.judge(remote, leg, arrived ? 0 : *status, run.err.str());
        leg.judged = true;
        dealer.settled(leg.range, outcome);
    }
}

// Runs `jobs` (one per run of `runs`), judging each leg as soon as its bytes and hash have
// both come, while its command goes on: a command killed midway keeps the ranges it
// recorded. A link lost midway leaves the legs not judged with the dealer (given back).
template <class Mover>
void run_legs(Mover& self, Remote& remote, std::deque<Run>& runs, std::vector<StreamJob> jobs,
              Dealer& dealer) {
    for (size_t r = 0; r < jobs.size(); ++r) {
        Run& run = runs[r];
        StreamJob& job = jobs[r];
        // Either may come last: a hash line, or the last bytes of its range.
        job.on_stderr = [&self, &remote, &run, &dealer,
                         sink = std::move(job.on_stderr)](std::string_view d) {
            sink(d);
            if (d.find('\n') != std::string_view::npos) judge_legs(self, remote, run, dealer);
        };
        if (job.on_stdout)
            job.on_stdout = [&self, &remote, &run, &dealer,
                             sink = std::move(job.on_stdout)](std::string_view d) {
                sink(d);
                judge_legs(self, remote, run, dealer);
            };
    }
    std::vector<int> statuses;
    try {
        statuses = remote.stream_parallel(jobs);
    } catch (const Error&) {
        for (Run& run : runs) judge_legs(self, remote, run, dealer);
        throw;
    }
    for (size_t r = 0; r < runs.size(); ++r) judge_legs(self, remote, runs[r], dealer, statuses[r]);
}

// Moves `batch` over `remote`, in up to dealer.channels() runs side by side (one channel and
// one remote command each, its ranges fixed when it starts): `self` gives each run's
// StreamJob (job_for) and judges each range (judge).
template <class Mover>
void move_batch(Mover& self, Remote& remote, const std::vector<Range>& batch, Dealer& dealer) {
    const size_t channels = dealer.channels();
    const size_t per_run = (batch.size() + channels - 1) / channels;
    std::deque<Run> runs((batch.size() + per_run - 1) / per_run);
    for (size_t i = 0; i < batch.size(); ++i) runs[i / per_run].legs.emplace_back(batch[i]);
    std::vector<StreamJob> jobs;
    for (Run& run : runs) jobs.push_back(self.job_for(run));
    run_legs(self, remote, runs, std::move(jobs), dealer);
}

// Moves ranges over `remote` on up to dealer.channels() commands side by side, each taking
// its next range from `dealer` as it is ready for one (`self.stream_job`), until the dealer
// has none. Returns false when it had none to start with.
template <class Mover>
bool move_stream(Mover& self, Remote& remote, Dealer& dealer) {
    std::deque<Run> runs;  // a deque: a run stays where it is (its jobs point at it)
    for (size_t c = 0; c < dealer.channels(); ++c) {
        std::optional<Range> first = dealer.next();
        if (!first) break;
        runs.emplace_back().legs.emplace_back(*first);
    }
    if (runs.empty()) return false;
    std::vector<StreamJob> jobs;
    for (Run& run : runs) jobs.push_back(self.stream_job(run, dealer));
    run_legs(self, remote, runs, std::move(jobs), dealer);
    return true;
}

// "I:BLOCK:LEN", one range as the remote commands read it back (IFS=:, then `set --`): $1
// its index, $2 its first block of kRangeBlock bytes (ranges start on one), $3 its length.
std::string range_word(const Range& r) {
    return std::to_string(r.index) + ":" + std::to_string(r.offset / kRangeBlock) + ":" +
           std::to_string(r.length);
}

// The head of a remote `for` loop over the ranges of `run`, each in $1 $2 $3 (range_word).
std::string range_loop(const Run& run) {
    std::string words;
    for (const Leg& leg : run.legs) words += (words.empty() ? "" : " ") + range_word(leg.range);
    return "for r in " + words + "; do IFS=:; set -- $r; unset IFS; ";
}
// A changed source is moved again this many rounds in all.
constexpr int kRounds = 3;
// `auto`: links at the start, and the gain a new link must bring to keep growing.
constexpr size_t kStartLinks = 2;
constexpr double kWorthGrowing = 1.10;
// The links `auto` starts with: 2 over a far link; over a near link one per two local cores
// (1 to 8), and no growth. There a stream is bound by a core's cipher at each end, not by a
// window: on 2 cores the caller's link alone moved 1 GiB over loopback at 240-260 MB/s each
// way, where 2 connections moved 155-225 down; on 16 cores a 2 GiB file took 8 connections
// to 1.1 GB/s, and one that started at 2 was home before the growth (a second a step) got
// past 4 (0.65 GB/s).
size_t start_links(bool near) {
    if (!near) return kStartLinks;
    return std::clamp<size_t>(std::thread::hardware_concurrency() / 2, 1, kAutoConnections);
}
// The rate is measured over windows of 0.5 s, or 5 round trips of a far link (up to 2 s): a
// new link's first command takes a few round trips before its bytes flow, and a window
// that ends before would make a step that pays look as if it did not.
std::chrono::duration<double> window_for(const Remote& remote) {
    return std::chrono::duration<double>(std::clamp(5 * remote.round_trip_s(), 0.5, 2.0));
}
// A link lost mid-transfer is opened again this many times in all before the loss goes up.
constexpr int kLinkRetries = 4;

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
    RangeRunner(Remote& caller, LinkPool* pool, const std::atomic<uint64_t>& bytes,
                std::function<bool(size_t)> done, bool up)
        : caller_(caller),
          pool_(pool),
          bytes_(bytes),
          done_(std::move(done)),
          near_(is_near(caller)),
          channels_(channels_per_link(near_, up)),
          per_command_(ranges_per_command(near_)) {}

    // Returns the most links used at once (1 without links).
    size_t run(const std::vector<Range>& todo, const Move& move) {
        if (todo.empty()) return 0;
        queue_.assign(todo.begin(), todo.end());
        if (!pool_ || pool_->limit() == 0 || todo.size() <= channels_) {
            move_all(move);
            return 1;
        }
        // The caller's own link (worker 0) moves ranges from the start; the side links join
        // as they connect, side by side.
        const size_t links = pool_->limit() + 1;
        allowed_ = pool_->tuning() ? std::min(start_links(near_), links) : links;
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
        // What the links could not move (refused, or lost too often) goes over the caller's
        // own link: if that one is lost too, the caller's reconnect takes it from there.
        if (!queue_.empty() && link_error_) spdlog::debug("ranges: {}", link_error_->what());
        move_all(move);
        return std::max<size_t>(most_, 1);
    }

  private:
    // One link's dealer: the ranges of the queue its commands take, held until they are
    // settled (a link lost gives back those it held that are not done).
    class LinkDealer : public Dealer {
      public:
        // `shared`: other links take from the queue too (batches then even out).
        LinkDealer(RangeRunner& runner, bool shared) : runner_(runner), shared_(shared) {}

        size_t channels() const override { return runner_.channels_; }

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
            const size_t share = shared_ ? runner_.queue_.size() / (links * runner_.channels_)
                                         : runner_.per_command_;
            const size_t take =
                runner_.channels_ * std::clamp<size_t>(share, 1, runner_.per_command_);
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

        // The ranges dealt here and not settled, back into the queue unless done (the
        // runner's mutex held).
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
        std::map<size_t, Range> held_;
    };

    // The queue over the caller's own link, until it is empty.
    void move_all(const Move& move) {
        LinkDealer dealer(*this, false);
        while (!queue_.empty() && !stop_) move(caller_, dealer);
    }

    void start(size_t index, const Move& move) {
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

    // Worker 0 is the caller's link, worker i the pool's link i - 1.
    void work(size_t index, const Move& move) {
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
        LinkDealer dealer(*this, true);
        try {
            move(*remote, dealer);
        } catch (const StallError& e) {
            // A link that moves too little (a frozen side connection, a throttled one) gives
            // its ranges to the links that move; it is not opened again. When no link moves,
            // the caller's own takes the rest at the end, and its stall goes up.
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

    // A worker ends (mutex_ held).
    void leave() {
        --active_;
        changed_.notify_all();
    }

    void finish_with(std::exception_ptr error) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!fatal_) fatal_ = error;
        stop_ = true;
        leave();
    }

    // A signal, or the caller's StopScope.
    static bool stopping() {
        const std::atomic<bool>* stop = current_stop();
        return interrupt_pending() || (stop && stop->load());
    }

    // The caller's loop: Ctrl+C, links lost, and growth.
    void control(const Move& move) {
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
            // As many again (2, 4, 8): a far host needs many. Their connections are open
            // already (opened during this step), so a step costs two windows.
            const size_t grow_to =
                std::min({2 * allowed_, links, allowed_ + queue_.size() / channels_});
            if ((base_rate > 0 && rate < base_rate * kWorthGrowing) || grow_to <= allowed_) {
                settled_ = true;  // the links opened ahead give up
                changed_.notify_all();
                spdlog::debug("ranges: {} connections ({:.1f} MB/s){}", allowed_, rate / 1e6,
                              grow_to > allowed_ ? "; more did not pay" : "");
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
    const size_t channels_;
    const size_t per_command_;  // ranges_per_command
};

// `<dir>/<name>` split at the last `/`: ("." when there is none).
std::pair<std::string, std::string> split_last(const std::string& path) {
    const size_t slash = path.rfind('/');
    if (slash == std::string::npos) return {".", path};
    return {slash == 0 ? "/" : path.substr(0, slash), path.substr(slash + 1)};
}

// The directory of `path` and the partial file beside it, `.<name>.mlt-ranges` (room left
// for the suffixes of its state file and hash dir).
std::pair<std::string, std::string> partial_beside(const std::string& path) {
    const auto [dir, leaf] = split_last(path);
    return {dir, dir + "/" + side_name(leaf, ".mlt-ranges", 6)};
}

// `f=<path>` for a remote command, with "./" before a relative path (never an option).
std::string remote_file_word(const std::string& var, const std::string& path) {
    return var + "=" + shell_quote_path(path) + "; case $" + var + " in /*) ;; *) " + var + "=./$" +
           var + " ;; esac; ";
}

// Shell words that write the bytes of the range in $2 and $3 (range_word) of the file in
// variable `file` to stdout, rounded up to whole blocks (a cut follows where it matters). One
// dd reading whole blocks copies a range once; `tail -c +OFF | head -c LEN` copied it twice
// in 8 KiB pieces, twice the remote's CPU for a download.
std::string range_read(const std::string& file) {
    const std::string b = std::to_string(kRangeBlock);
    return "dd if=\"$" + file + "\" bs=" + b + " skip=$2 count=$((($3 + " +
           std::to_string(kRangeBlock - 1) + ") / " + b + ")) 2>/dev/null";
}

// The sha256 of each of `ranges` of the remote file `path`, up to 8 at a time: index ->
// hash (a range it could not read is left out).
std::map<size_t, std::string> remote_range_hashes(Remote& remote, const std::string& path,
                                                  const std::vector<Range>& ranges) {
    if (ranges.empty()) return {};
    std::string specs;
    for (const Range& r : ranges) specs += range_word(r) + "\n";
    const RemoteOutput got = remote.run(
        remote_hash_setup() + remote_file_word("f", path) +
            "xargs -P 8 -n 1 sh -c 'IFS=:; set -- $1; unset IFS; "
            "f=$0; h=$(" +
            range_read("f") + " | head -c $3 | $hash_cmd) && echo \"$1 ${h%% *}\"' \"$f\"",
        specs);
    return hash_lines(got.out);
}

// Reads up to `size` bytes of the local `fd` at `at` (at least one: a file that ends
// before is one that shrank); throws io errors naming `shown`.
size_t read_at(int fd, char* buffer, uint64_t size, uint64_t at, const std::string& shown) {
    ssize_t n;
    do {
        n = ::pread(fd, buffer, size, static_cast<off_t>(at));
    } while (n < 0 && errno == EINTR);
    if (n <= 0)
        throw io_error("cannot read " + shown + ": " +
                       (n == 0 ? "it shrank" : std::string(std::strerror(errno))));
    return static_cast<size_t>(n);
}

// The sha256 of `length` bytes of the local `fd` from `offset`.
std::string local_range_hash(int fd, const Range& r, const std::string& shown) {
    std::vector<char> buf(1024 * 1024);
    Sha256 hash;
    for (uint64_t at = r.offset, end = r.offset + r.length; at < end;) {
        const size_t n =
            read_at(fd, buf.data(), std::min<uint64_t>(buf.size(), end - at), at, shown);
        hash.update(buf.data(), n);
        at += n;
    }
    return hash.hex_digest();
}

// The stats of a finished transfer, with the bytes moved, logged for -v.
RangeStats log_done(const char* way, const std::string& shown, RangeStats s, uint64_t moved,
                    Steady::time_point began) {
    s.bytes_moved = moved;
    const double seconds = std::chrono::duration<double>(Steady::now() - began).count();
    spdlog::debug(
        "{} {}: {} range(s), {} kept from before, {} moved again, {} link(s), "
        "{:.1f} MB/s",
        way, shown, s.ranges, s.kept, s.moved_again, s.links,
        seconds > 0 ? static_cast<double>(moved) / seconds / 1e6 : 0.0);
    return s;
}

// What both ways share: the file's ranges and those done (index -> sha256), the bytes
// moved, and the moving itself. `Self` moves the ranges a Dealer gives it (move_on: down in
// batches of job_for, up in streams of stream_job) and judges each range as its bytes and
// hash have come (judge, through settle).
template <class Self>
class RangedFile {
  protected:
    RangedFile(Remote& remote, std::string remote_path, std::string local_path,
               const RangeOptions& options)
        : remote_(remote),
          path_(std::move(remote_path)),
          local_(std::move(local_path)),
          options_(options) {}

    TransferProgress* progress() const { return options_.progress; }

    // `n` bytes of a range moved.
    void count(uint64_t n) {
        moved_ += n;
        if (progress()) progress()->add_bytes(n);
    }

    // The leg of `run` whose bytes move now: the first from `leg` on that is not complete
    // (`leg` is moved on to it); nullptr once every leg is.
    static Leg* current_leg(Run& run, size_t& leg) {
        while (leg < run.legs.size() && run.legs[leg].complete()) ++leg;
        return leg < run.legs.size() ? &run.legs[leg] : nullptr;
    }

    // `n` bytes at `data` of `leg`'s range passed this end: hashed, and counted.
    void passed(Leg& leg, const char* data, size_t n) {
        leg.hash.update(data, n);
        leg.at += n;
        count(n);
    }

    // The bytes of the ranges done already (kept from an earlier attempt), counted.
    uint64_t count_kept() {
        uint64_t kept = 0;
        for (const auto& [index, hash] : done_) kept += ranges_[index].length;
        stats_.kept = done_.size();
        if (progress() && kept) progress()->add_bytes(kept);
        return kept;
    }

    // Cuts a file of `size` into ranges_. The range size is chosen once per transfer (the
    // state of a resume names it): a file that does not pay for several connections
    // (ranges_pay) is one range over the caller's link, one remote command.
    void cut(uint64_t size) {
        if (range_size_ == 0) {
            pays_ = ranges_pay(remote_, size, options_.links);
            range_size_ = pays_ ? range_size_for(size) : std::max(kRangeBlock, whole_blocks(size));
        }
        ranges_ = cut_ranges(size, range_size_);
        stats_.ranges = ranges_.size();
    }

    // The ranges not done, over the links (when they pay).
    void move_missing() {
        std::vector<Range> todo;
        for (const Range& r : ranges_)
            if (!done_.count(r.index)) todo.push_back(r);
        // Up, the growth is measured by what the server took, not by what went into the
        // channels (a window ahead of it).
        const std::atomic<uint64_t>& rated = Self::kUp ? taken_ : moved_;
        RangeRunner runner(
            remote_, pays_ ? options_.links : nullptr, rated,
            [this](size_t index) {
                std::lock_guard<std::mutex> lock(mutex_);
                return done_.count(index) > 0;
            },
            Self::kUp);
        stats_.links = std::max(stats_.links, runner.run(todo, [this](Remote& r, Dealer& d) {
            static_cast<Self&>(*this).move_on(r, d);
        }));
    }

    // A range judged with `status` (0 once its bytes and hash came, while its command may go
    // on; else its command's exit status; `doing`: "reading", "writing"): done when all of
    // it went and both hashes agree (then recorded, and `record` is called with its hash
    // under the lock), else moved again.
    Outcome settle(Remote& remote, const char* doing, Leg& leg, int status, const std::string& err,
                   const std::function<void(const std::string&)>& record = {}) {
        if (status != 0) throw remote_failure(remote, doing + (" " + path_), status, err);
        const std::string hash = leg.hash.hex_digest();
        const Range& r = leg.range;
        std::lock_guard<std::mutex> lock(mutex_);
        if (!leg.complete() || leg.remote != hash) {
            ++stats_.moved_again;
            return Outcome::mismatch;
        }
        done_[r.index] = hash;
        if (record) record(hash);
        return Outcome::done;
    }

    Remote& remote_;
    const std::string path_;   // the remote file
    const std::string local_;  // the local file
    const RangeOptions options_;
    std::string dir_, partial_;  // the partial file's directory (created as needed), its path
    UniqueFd fd_;
    std::vector<Range> ranges_;
    uint64_t range_size_ = 0;  // 0: not cut yet
    bool pays_ = false;        // ranges_pay: over several connections
    std::map<size_t, std::string> done_;
    std::mutex mutex_;  // guards done_ and stats_ while the links move ranges
    std::atomic<uint64_t> moved_{0};
    std::atomic<uint64_t> taken_{0};  // up: the bytes the server took (StreamJob::on_taken)
    RangeStats stats_;
};

// ---- down ----

class Download : public RangedFile<Download> {
  public:
    static constexpr bool kUp = false;  // the rate: what arrived is what moved
    Download(Remote& remote, const std::string& remote_path, const RemoteFileInfo& listed,
             const std::string& local_path, const RangeOptions& options)
        : RangedFile(remote, remote_path, local_path, options), listed_(listed) {
        std::tie(dir_, partial_) = partial_beside(local_path);
        state_ = partial_ + ".state";
    }

    RangeStats run() {
        const auto began = Steady::now();
        open_base(dir_);  // the destination's directory, created as needed
        for (int round = 1;; ++round) {
            cut(listed_.size);
            if (round == 1) open_partial();
            std::optional<Error> mismatch;
            try {
                move_missing();
            } catch (const Error& e) {
                if (e.kind() != ErrorKind::tampered) throw;
                mismatch = e;
            }
            const auto now = stat_remote_files(remote_, split_last(path_).first,
                                               {split_last(path_).second}, &stats_.seen_clock_ns);
            if (now.empty())
                throw remote_error("reading " + path_ + ": it vanished while it was read");
            // Ranges that kept arriving with other bytes than the remote hashed, from a file
            // that did not change: the remote sends one thing and vouches for another.
            if (mismatch && now.front().same_version(listed_)) throw *mismatch;
            if (mismatch)
                throw remote_error("reading " + path_ + ": it kept changing while it was read");
            stats_.seen = now.front();
            if (now.front().same_version(listed_)) break;
            if (round >= kRounds)
                throw remote_error("reading " + path_ + ": it kept changing while it was read");
            recheck(now.front());
        }
        finish();
        return log_done("pulled", path_, stats_, moved_.load(), began);
    }

    // The run's ranges one after the other on stdout, each exactly its length (a file that
    // shrank is padded with zeros: its hash then differs), each followed by its sha256 read
    // from the file once more, on stderr.
    StreamJob job_for(Run& run) {
        StreamJob job;
        job.command = "printf '%s\\n' " + token_ + "; " + remote_hash_setup() +
                      remote_file_word("f", path_) + range_loop(run) + "{ " + range_read("f") +
                      "; head -c $3 /dev/zero; } | head -c $3; h=$(" + range_read("f") +
                      " | head -c $3 | $hash_cmd) || exit 1; echo \"$1 ${h%% *}\" >&2; done";
        job.on_stdout = [this, &run, leg = size_t(0)](std::string_view d) mutable {
            if (!run.begun && !(d = after_marker(run, d)).data()) return;
            while (!d.empty()) {
                Leg* now = current_leg(run, leg);
                if (!now)
                    throw remote_error("reading " + path_ +
                                       ": the remote sent more bytes than asked for");
                const size_t n =
                    static_cast<size_t>(std::min<uint64_t>(d.size(), now->end() - now->at));
                write_at(d.substr(0, n), now->at);
                passed(*now, d.data(), n);
                d.remove_prefix(n);
            }
        };
        job.on_stderr = run.err.sink();
        job.data_stream = "the ranges of " + path_;
        return job;
    }

    // The bytes of `d` after the command's marker line (what a login profile printed before
    // it is dropped); a null view while the marker has not come yet.
    std::string_view after_marker(Run& run, std::string_view d) {
        run.preamble.append(d);
        const std::string marker = token_ + "\n";
        const size_t at = run.preamble.find(marker);
        if (at == std::string::npos) {
            if (run.preamble.size() > kMaxPreamble)
                throw remote_error("reading " + path_ +
                                       ": the remote printed more than 64 KiB before the "
                                       "command's output",
                                   "make the account's ~/.bashrc print nothing when it is not "
                                   "interactive");
            return {};
        }
        run.begun = true;
        if (at > 0)
            spdlog::debug("the login on {} printed first: {}", remote_.name(),
                          run.preamble.substr(0, std::min<size_t>(at, 200)));
        const size_t rest = run.preamble.size() - at - marker.size();
        run.preamble.clear();
        // The rest is the tail of `d` (the marker ended inside it).
        return rest == 0 ? std::string_view("", 0) : d.substr(d.size() - rest);
    }

    Outcome judge(Remote& remote, Leg& leg, int status, const std::string& err) {
        return settle(remote, "reading", leg, status, err, [&](const std::string& hash) {
            std::ofstream(state_, std::ios::app) << leg.range.index << " " << hash << "\n";
        });
    }

    // Batches of ranges, each command's fixed when it starts (its words in a `for` loop).
    void move_on(Remote& remote, Dealer& dealer) {
        for (std::vector<Range> b; !(b = dealer.batch()).empty();)
            move_batch(*this, remote, b, dealer);
    }

  private:
    // The partial file and the done ranges of an earlier attempt at this version (its
    // state file's first line is the version; a range line is "INDEX SHA256").
    void open_partial() {
        fd_ = UniqueFd(::open(partial_.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
        if (!fd_ && errno == ELOOP) {  // a symlink in mlt's place: never written through
            ::unlink(partial_.c_str());
            fd_ =
                UniqueFd(::open(partial_.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
        }
        if (!fd_) throw io_error("cannot write " + partial_ + ": " + std::strerror(errno));
        std::ifstream in(state_);
        std::string header;
        std::getline(in, header);
        if (header == version_line(listed_)) {
            size_t index = 0;
            std::string hash;
            while (in >> index >> hash)
                if (index < ranges_.size() && hash.size() == 64) done_[index] = hash;
        }
        write_state();
        // The file grows as ranges land (a partial file's size is how far it got); one of
        // another version starts empty. One that is empty already is not truncated: ext4
        // flushes a file truncated to 0 when it is closed (auto_da_alloc), and that close took
        // 0.24 s after a 1 GiB download here.
        struct stat st;
        if (done_.empty() && (::fstat(fd_.get(), &st) != 0 || st.st_size > 0) &&
            ::ftruncate(fd_.get(), 0) != 0)
            throw io_error("cannot write " + partial_ + ": " + std::strerror(errno));
        const uint64_t kept = count_kept();
        if (!done_.empty())
            spdlog::info("resumed {} after {} bytes kept ({} of {} ranges were there)", local_,
                         kept, done_.size(), ranges_.size());
    }

    std::string version_line(const RemoteFileInfo& f) const {
        return "mlt-ranges 2 " + std::to_string(f.size) + " " + std::to_string(f.mtime_ns) + " " +
               std::to_string(f.ctime_ns) + " " + std::to_string(f.inode) + " " +
               std::to_string(range_size_);
    }

    void write_state() {
        std::string text = version_line(listed_) + "\n";
        for (const auto& [index, hash] : done_) text += std::to_string(index) + " " + hash + "\n";
        const std::string tmp = state_ + ".tmp";
        {
            std::ofstream out(tmp, std::ios::trunc);
            out << text;
            if (!out.flush()) throw io_error("cannot write " + tmp);
        }
        if (::rename(tmp.c_str(), state_.c_str()) != 0)
            throw io_error("cannot write " + state_ + ": " + std::strerror(errno));
    }

    void write_at(std::string_view d, uint64_t at) {
        size_t put = 0;
        while (put < d.size()) {
            const ssize_t n =
                ::pwrite(fd_.get(), d.data() + put, d.size() - put, static_cast<off_t>(at + put));
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) throw io_error("cannot write " + partial_ + ": " + std::strerror(errno));
            put += static_cast<size_t>(n);
        }
    }

    // The source is another version now: ranges whose bytes are the same stay done.
    void recheck(const RemoteFileInfo& now) {
        std::map<size_t, std::string> keep;
        if (now.size == listed_.size)
            for (const auto& [index, hash] : remote_range_hashes(remote_, path_, ranges_))
                if (done_.count(index) && done_[index] == hash) keep[index] = hash;
        stats_.moved_again += done_.size() - keep.size();
        done_ = keep;
        listed_ = now;
        write_state();
    }

    void finish() {
        const timespec times[2] = {{0, UTIME_OMIT}, to_timespec(listed_.mtime_ns)};
        if (::ftruncate(fd_.get(), static_cast<off_t>(listed_.size)) != 0 ||
            ::futimens(fd_.get(), times) != 0 || ::rename(partial_.c_str(), local_.c_str()) != 0)
            throw io_error("cannot write " + local_ + ": " + std::strerror(errno));
        ::unlink(state_.c_str());
        if (progress()) progress()->file_done();
    }

    RemoteFileInfo listed_;
    std::string state_;
    const std::string token_ = random_token();  // the marker line before a command's ranges
};

// ---- up ----

struct LocalVersion {
    uint64_t size = 0;
    int64_t mtime_ns = 0, ctime_ns = 0;
    uint64_t inode = 0;
    mode_t mode = 0644;
    bool operator==(const LocalVersion& o) const {
        return size == o.size && mtime_ns == o.mtime_ns && ctime_ns == o.ctime_ns &&
               inode == o.inode;
    }
};

LocalVersion local_version(int fd, const std::string& shown) {
    struct stat st;
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        throw io_error("cannot read " + shown + ": not a regular file");
    LocalVersion v;
    v.size = static_cast<uint64_t>(st.st_size);
    v.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
    v.ctime_ns = static_cast<int64_t>(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec;
    v.inode = st.st_ino;
    v.mode = st.st_mode & 0777;
    return v;
}

class Upload : public RangedFile<Upload> {
  public:
    static constexpr bool kUp = true;
    Upload(Remote& remote, const std::string& local_path, const std::string& remote_path,
           const RangeOptions& options)
        : RangedFile(remote, remote_path, local_path, options) {
        std::tie(dir_, partial_) = partial_beside(remote_path);
        hashes_ = partial_ + ".d";
    }

    // Opens the local file and cuts its ranges.
    void open() {
        fd_ = UniqueFd(::open(local_.c_str(), O_RDONLY | O_CLOEXEC));
        if (!fd_) throw io_error("cannot read " + local_ + ": " + std::strerror(errno));
        version_ = local_version(fd_.get(), local_);
        cut(version_.size);
    }

    RangeStats run() {
        const auto began = Steady::now();
        open();
        resume();
        for (int round = 1;; ++round) {
            move_missing();
            const LocalVersion now = local_version(fd_.get(), local_);
            if (now == version_) break;
            if (round >= kRounds || now.size != version_.size)
                throw io_error("cannot upload " + local_ + ": it kept changing while it was sent",
                               "upload it again once nothing writes to it");
            version_ = now;
            for (const Range& r : ranges_)  // what changed is sent again
                if (done_.count(r.index) &&
                    local_range_hash(fd_.get(), r, local_) != done_[r.index]) {
                    done_.erase(r.index);
                    ++stats_.moved_again;
                }
        }
        finish();
        return log_done("pushed", local_, stats_, moved_.load(), began);
    }

    // A command that takes ranges from its stdin until it ends, each a header line (its
    // range_word) and its bytes: read off exactly (head -c reads no further than it writes)
    // into the partial file at its offset; then the sha256 of what landed goes into
    // <partial>.d/<index>.sha and, as "INDEX SHA256", to stderr. The next range is taken
    // from `dealer` once the last one's bytes are in the channel, so every channel stays
    // busy to the end: a command's ranges are not fixed when it starts.
    StreamJob stream_job(Run& run, Dealer& dealer) {
        StreamJob job;
        job.command = words() + remote_hash_setup() +
                      "while read -r r; do IFS=:; set -- $r; unset IFS; "
                      "head -c $3 | dd of=\"$p\" bs=" +
                      std::to_string(kRangeBlock) +
                      " seek=$2 conv=notrunc 2>/dev/null || exit 1; h=$(" + range_read("p") +
                      " | head -c $3 | $hash_cmd | cut -c1-64) && echo \"$h\" > \"$d/$1.sha\" || "
                      "exit 1; echo \"$1 $h\" >&2; done";
        job.input = [this, &run, &dealer, leg = size_t(0), head = std::string()](
                        char* buffer, size_t capacity) mutable -> size_t {
            Leg* now = current_leg(run, leg);
            if (!now) {
                const std::optional<Range> r = dealer.next();
                if (!r) return 0;
                now = &run.legs.emplace_back(*r);
            }
            if (!now->announced) {
                now->announced = true;
                head = range_word(now->range) + "\n";
            }
            if (!head.empty()) {  // the header line first (in pieces if need be)
                const size_t n = std::min(capacity, head.size());
                std::memcpy(buffer, head.data(), n);
                head.erase(0, n);
                return n;
            }
            const size_t n =
                read_at(fd_.get(), buffer, std::min<uint64_t>(capacity, now->end() - now->at),
                        now->at, local_);
            passed(*now, buffer, n);
            return n;
        };
        job.on_stderr = run.err.sink();
        job.on_taken = [this](uint64_t n) { taken_ += n; };
        job.data_stream = "the ranges sent to " + path_;
        return job;
    }

    Outcome judge(Remote& remote, Leg& leg, int status, const std::string& err) {
        return settle(remote, "writing", leg, status, err);
    }

    // Streams: each command takes its next range when it is ready for one.
    void move_on(Remote& remote, Dealer& dealer) {
        while (move_stream(*this, remote, dealer)) {
        }
    }

    // The remote command that prepares the partial file and lists the hashes of the ranges
    // an earlier attempt at this size left there (a range size or file size of their own:
    // those go).
    std::string resume_command() const {
        const std::string id =
            "mlt-ranges 2 " + std::to_string(version_.size) + " " + std::to_string(range_size_);
        return words() + "mkdir -p -- " + shell_quote_path(dir_) +
               " && { [ ! -L \"$p\" ] || rm -f -- \"$p\"; } && mkdir -p -- \"$d\" || exit 1; "
               "if [ \"$(cat \"$d/id\" 2>/dev/null)\" = " +
               shell_quote(id) +
               " ]; then "
               "for h in \"$d\"/*.sha; do [ -f \"$h\" ] && n=${h##*/} && "
               "echo \"${n%.sha} $(cut -c1-64 \"$h\")\"; done; "
               "else rm -f -- \"$d\"/*.sha; printf '%s\\n' " +
               shell_quote(id) + " > \"$d/id\"; fi; true";
    }

  private:
    std::string words() const {
        return "p=" + shell_quote_path(partial_) + "; d=" + shell_quote_path(hashes_) + "; ";
    }

    // The ranges an earlier attempt left remotely: each <index>.sha there names the hash of
    // what landed; a range counts as done when this file's bytes there hash the same.
    void resume() {
        const RemoteOutput got = remote_.run(resume_command());
        if (got.exit_status != 0)
            throw remote_failure(remote_, "preparing " + path_, got.exit_status, got.err);
        std::istringstream in(got.out);
        size_t index = 0;
        std::string hash;
        while (in >> index >> hash)
            if (index < ranges_.size() && hash.size() == 64 &&
                local_range_hash(fd_.get(), ranges_[index], local_) == hash)
                done_[index] = hash;
        count_kept();
    }

    void finish() {
        const int64_t sec = version_.mtime_ns / 1000000000;
        const int64_t nsec = version_.mtime_ns % 1000000000;
        char mtime[48], mode[8];
        std::snprintf(mtime, sizeof mtime, "@%lld.%09lld", static_cast<long long>(sec),
                      static_cast<long long>(nsec));
        std::snprintf(mode, sizeof mode, "%o", static_cast<unsigned>(version_.mode));
        // A file of no bytes has no range that would have created the partial file.
        const RemoteOutput got = remote_.run(
            words() + ": >> \"$p\" && touch -m -d " + mtime + " \"$p\" && chmod " + mode +
            " \"$p\" && mv -f -- \"$p\" " + shell_quote_path(path_) + " && rm -rf -- \"$d\"");
        if (got.exit_status != 0)
            throw remote_failure(remote_, "writing " + path_, got.exit_status, got.err);
        if (progress()) progress()->file_done();
    }

    std::string hashes_;  // <partial>.d: the hash of each range that landed
    LocalVersion version_;
};

}  // namespace

RangeStats download_ranges(Remote& remote, const std::string& remote_path,
                           const RemoteFileInfo& listed, const std::string& local_path,
                           const RangeOptions& options) {
    return Download(remote, remote_path, listed, local_path, options).run();
}

RangeStats upload_ranges(Remote& remote, const std::string& local_path,
                         const std::string& remote_path, const RangeOptions& options) {
    return Upload(remote, local_path, remote_path, options).run();
}

void upload_ranges_ahead(Remote& remote, const std::string& local_path,
                         const std::string& remote_path, const RangeOptions& options) {
    Upload upload(remote, local_path, remote_path, options);
    upload.open();
    remote.run_ahead(upload.resume_command(), {});
}

}  // namespace mlt
