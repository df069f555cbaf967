// RunLedger: a run's attempts (host, price, start, end), its time and cost, and its limits.
#include "mlt/train/cost/run_ledger.h"

#include <algorithm>
#include <cstdio>

#include "mlt/util/text.h"

namespace mlt {

namespace {

constexpr double kNever = 1e18;  // seconds_left() when no limit can be reached

// When `a` ended, or `now` while it runs; never before its start.
double end_of(const AttemptRecord& a, double now) {
    return std::max(a.start, a.end ? *a.end : now);
}

}  // namespace

void RunLedger::begin_attempt(int attempt, const std::string& host, double price_per_hour,
                              double when) {
    end_attempt("moved", when);
    AttemptRecord a;
    a.attempt = attempt;
    a.host = host;
    a.price_per_hour = price_per_hour;
    a.start = when;
    attempts_.push_back(std::move(a));
}

void RunLedger::end_attempt(const std::string& how, double when) {
    if (attempts_.empty() || attempts_.back().end) return;
    // A clock that went back (a remote start time ahead of the local clock) ends it at its start.
    attempts_.back().end = std::max(when, attempts_.back().start);
    attempts_.back().how = how;
}

void RunLedger::restore(std::vector<AttemptRecord> earlier) {
    if (!attempts_.empty()) return;
    for (auto& a : earlier)
        if (!a.end) a.end = a.start;
    attempts_ = std::move(earlier);
}

double RunLedger::elapsed(double now) const {
    if (attempts_.empty()) return 0;
    return std::max(0.0, end_of(attempts_.back(), now) - attempts_.front().start);
}

double RunLedger::cost_of(const AttemptRecord& a, double now) {
    return (end_of(a, now) - a.start) / 3600.0 * a.price_per_hour;
}

std::optional<double> RunLedger::cost(double now) const {
    bool priced = false;
    double sum = 0;
    for (const auto& a : attempts_) {
        priced = priced || a.price_per_hour > 0;
        sum += cost_of(a, now);
    }
    if (!priced) return std::nullopt;
    return sum;
}

double RunLedger::current_price() const {
    return attempts_.empty() || attempts_.back().end ? 0 : attempts_.back().price_per_hour;
}

double RunLedger::seconds_left(const Budget& budget, double now) const {
    return seconds_left(budget, now, current_price());
}

double RunLedger::seconds_left(const Budget& budget, double now, double price) const {
    double left = kNever;
    if (budget.max_hours > 0) left = std::min(left, budget.max_hours * 3600 - elapsed(now));
    if (budget.max_cost > 0) {
        const double spent = cost(now).value_or(0);
        if (spent >= budget.max_cost)
            left = std::min(left, 0.0);
        else if (price > 0)
            left = std::min(left, (budget.max_cost - spent) / price * 3600);
    }
    return left;
}

std::string RunLedger::limit_reached(const Budget& budget, double now) const {
    if (budget.max_hours > 0 && elapsed(now) >= budget.max_hours * 3600)
        return "--max-hours " + number_text(budget.max_hours);
    if (budget.max_cost > 0 && cost(now).value_or(0) >= budget.max_cost)
        return "--max-cost " + number_text(budget.max_cost);
    return "";
}

}  // namespace mlt
