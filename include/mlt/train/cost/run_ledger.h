#pragma once

#include <optional>
#include <string>
#include <vector>

namespace mlt {

// One attempt of a run: its job on one host, from its start to its end.
struct AttemptRecord {
    // 1, then 2 on: a restart in place or a move to another host; 0 for a host the run left
    // before its job started there (the attempt that follows is still the first)
    int attempt = 1;
    std::string host;           // the host's name as the run shows it
    double price_per_hour = 0;  // USD per hour of that host; 0: not known
    double start = 0;           // epoch seconds
    std::optional<double> end;  // epoch seconds; none while it runs
    std::string how;            // how it ended ("lost", "moved", "success"...); empty while open
};

// The limits of a run (--max-hours, --max-cost); 0: none.
struct Budget {
    double max_hours = 0;
    double max_cost = 0;
    bool any() const { return max_hours > 0 || max_cost > 0; }
};

// The time and cost of one run over all its attempts and hosts: pure bookkeeping, every time
// given by the caller in epoch seconds (so tests use any clock). A run opens an attempt when
// its job starts on a host (or when --resume adopts it), ends it when the job is lost or the
// run moves on, and asks elapsed(), cost() and seconds_left() on the way. Failover: end the
// attempt on the old host ("moved"), then begin the next attempt on the new one with that
// host's own price.
class RunLedger {
  public:
    // Opens attempt `attempt` on `host` at `when`, billed at `price_per_hour` (0: unknown). An
    // attempt still open is ended at `when` first, as "moved".
    void begin_attempt(int attempt, const std::string& host, double price_per_hour, double when);
    // Ends the open attempt at `when` as `how`; nothing when none is open.
    void end_attempt(const std::string& how, double when);
    // Numbers the last attempt `attempt` (0: the job never started on that host).
    void renumber_last(int attempt) {
        if (!attempts_.empty()) attempts_.back().attempt = attempt;
    }
    // Puts the ended attempts of an earlier mlt of the run (the history's) first, when this
    // ledger has none yet: a --resume counts the run's time and cost from its first attempt.
    void restore(std::vector<AttemptRecord> earlier);

    // Every attempt, oldest first; the last may be open.
    const std::vector<AttemptRecord>& attempts() const { return attempts_; }
    bool empty() const { return attempts_.empty(); }
    // When the first attempt started (0 when none).
    double started() const { return attempts_.empty() ? 0 : attempts_.front().start; }

    // Seconds from the first attempt's start to `now` (or to the last end once all ended).
    double elapsed(double now) const;
    // USD so far: each attempt's time on its host times that host's price. nullopt when no
    // attempt has a price; an attempt on a host without one counts nothing.
    std::optional<double> cost(double now) const;
    // The cost of one attempt up to `now`.
    static double cost_of(const AttemptRecord& attempt, double now);
    // The price of the open attempt's host (0: none open, or no price).
    double current_price() const;

    // Seconds until the first of `budget`'s limits is reached at the current price (or at
    // `price`, the one of an attempt about to open): <= 0 once one is reached; a large number
    // (1e18) when there is none (or the cost cannot grow).
    double seconds_left(const Budget& budget, double now) const;
    double seconds_left(const Budget& budget, double now, double price) const;
    // The limit reached at `now`, as the user gave it ("--max-hours 0.5", "--max-cost 2"),
    // or "" when none is.
    std::string limit_reached(const Budget& budget, double now) const;

  private:
    std::vector<AttemptRecord> attempts_;
};

}  // namespace mlt
