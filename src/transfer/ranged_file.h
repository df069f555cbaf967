#pragma once
// What the download and the upload of a file in ranges share (RangedFile): the file's ranges
// and those done, the bytes moved, the moving over the links and the judging of each range;
// and the local helpers both use. Private to src/transfer/.

#include <sys/types.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "mlt/ssh/remote.h"
#include "mlt/transfer/progress.h"
#include "mlt/transfer/ranges.h"
#include "mlt/util/fd.h"
#include "range_legs.h"

namespace mlt::transfer_detail {

// `<dir>/<name>` split at the last `/`: ("." when there is none).
std::pair<std::string, std::string> split_last(const std::string& path);

// The directory of `path` and the partial file beside it, `.<name>.mlt-ranges` (room left
// for the suffixes of its state file and hash dir).
std::pair<std::string, std::string> partial_beside(const std::string& path);

// Reads up to `size` bytes of the local `fd` at `at` (at least one: a file that ends
// before is one that shrank); throws io errors naming `shown`.
size_t read_at(int fd, char* buffer, uint64_t size, uint64_t at, const std::string& shown);

// The sha256 of the range `r` of the local `fd`.
std::string local_range_hash(int fd, const Range& r, const std::string& shown);

// The stats of a finished transfer, with the bytes moved, logged for -v.
RangeStats log_done(const char* way, const std::string& shown, RangeStats s, uint64_t moved,
                    Steady::time_point began);

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
    static Leg* current_leg(CommandRun& run, size_t& leg) {
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
            Self::kUp, remote_cores_);
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
    size_t remote_cores_ = 0;  // the host's free cores, when its preparing command said (0: not)
    std::map<size_t, std::string> done_;
    std::mutex mutex_;  // guards done_ and stats_ while the links move ranges
    std::atomic<uint64_t> moved_{0};
    std::atomic<uint64_t> taken_{0};  // up: the bytes the server took (StreamJob::on_taken)
    RangeStats stats_;
};

}  // namespace mlt::transfer_detail
