#pragma once
// The legs of a ranged transfer: each remote command's ranges in the order it moves them, and
// the moving of a batch (down) or a stream (up) of them over one link. Private to
// src/transfer/.
//
// The remote side is a short sh command per channel, moving ranges one after the other:
//   down: a run of ranges fixed when it starts (range_send.sh, a `for` loop over them): each
//         range's bytes (`dd skip=BLOCK`, padded or cut to exactly LEN) on stdout, then their
//         sha256 (read from the file once more) as "INDEX SHA256" on stderr;
//   up:   ranges dealt to it as it is ready for one (range_receive.sh, a `while read` loop
//         until its stdin ends): each a header line "I:BLOCK:LEN", its bytes read off stdin
//         (`head -c LEN`) and written at its offset (`dd seek= conv=notrunc`), then the
//         sha256 of what landed in the partial file, as "INDEX SHA256" on stderr and into
//         `<partial>.d/<index>.sha`.
// The local side hashes what it sends or receives; a range counts as done only when both
// hashes agree, judged as soon as its bytes and the remote's hash have both come. Hashing the
// remote file again (down) or what was written (up) is what finds a range that changed on its
// way: it is moved again, never taken.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mlt/ssh/remote.h"
#include "mlt/util/bounded.h"
#include "mlt/util/error.h"
#include "mlt/util/sha256.h"
#include "range_commands.h"
#include "range_scheduler.h"

namespace mlt::transfer_detail {

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
struct CommandRun {
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

    CommandRun() = default;
    CommandRun(const CommandRun&) = delete;  // `err` points at this one
    CommandRun& operator=(const CommandRun&) = delete;

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

// Judges each leg of `run` whose bytes and hash both came (the hash proves the range), or,
// with `status` given (the command ended), every leg not judged yet; each goes to `dealer`.
template <class Mover>
void judge_legs(Mover& self, Remote& remote, CommandRun& run, Dealer& dealer,
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
void run_legs(Mover& self, Remote& remote, std::deque<CommandRun>& runs,
              std::vector<StreamJob> jobs, Dealer& dealer) {
    for (size_t r = 0; r < jobs.size(); ++r) {
        CommandRun& run = runs[r];
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
        for (CommandRun& run : runs) judge_legs(self, remote, run, dealer);
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
    std::deque<CommandRun> runs((batch.size() + per_run - 1) / per_run);
    for (size_t i = 0; i < batch.size(); ++i) runs[i / per_run].legs.emplace_back(batch[i]);
    std::vector<StreamJob> jobs;
    for (CommandRun& run : runs) jobs.push_back(self.job_for(run));
    run_legs(self, remote, runs, std::move(jobs), dealer);
}

// Moves ranges over `remote` on up to dealer.channels() commands side by side, each taking
// its next range from `dealer` as it is ready for one (`self.stream_job`), until the dealer
// has none. Returns false when it had none to start with.
template <class Mover>
bool move_stream(Mover& self, Remote& remote, Dealer& dealer) {
    std::deque<CommandRun> runs;  // a deque: a run stays where it is (its jobs point at it)
    for (size_t c = 0; c < dealer.channels(); ++c) {
        std::optional<Range> first = dealer.next();
        if (!first) break;
        runs.emplace_back().legs.emplace_back(*first);
    }
    if (runs.empty()) return false;
    std::vector<StreamJob> jobs;
    for (CommandRun& run : runs) {
        jobs.push_back(self.stream_job(run, dealer));
        jobs.back().start_after_s = dealer.start_after(jobs.size() - 1);
    }
    run_legs(self, remote, runs, std::move(jobs), dealer);
    return true;
}

}  // namespace mlt::transfer_detail
