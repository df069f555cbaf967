// A run's time and cost (its RunLedger): the attempts it opens, the live line while it
// follows its job, the stop at --max-hours / --max-cost, and the summary block at its end.
#include <algorithm>
#include <cmath>
#include <filesystem>

#include "mlt/train/run/run_summary.h"
#include "mlt/train/run/train_run.h"
#include "mlt/transfer/progress.h"
#include "mlt/util/text.h"

namespace mlt {

void TrainRun::begin_attempt(double when) {
    account_.ledger.begin_attempt(attempt_, host(), plan_.price_per_hour, when);
}

bool TrainRun::may_stop_job() const {
    return outcome_.ending == Ending::completed && watch_.may_still_run() &&
           watch_.stop == JobWatch::Stop::none;
}

void TrainRun::stop_job_for(Ending ending, std::string note) {
    outcome_.stop_note = std::move(note);
    reporter_.alert(outcome_.stop_note + ": stopping the remote job of " + which() +
                    ", then collecting its results");
    outcome_.ending = ending;
    watch_.stop = JobWatch::Stop::wanted;
}

Budget TrainRun::node_budget() const {
    Budget budget = plan_.budget;
    if (gang_) budget.max_cost /= gang_.gang->size();
    return budget;
}

std::string TrainRun::limit_reached(double now) const {
    const std::string limit = account_.ledger.limit_reached(node_budget(), now);
    if (limit.rfind("--max-cost ", 0) != 0) return limit;
    return "--max-cost " + number_text(plan_.budget.max_cost);
}

void TrainRun::check_budget() {
    if (!plan_.budget.any() || !may_stop_job()) return;
    const double now = wall_now();
    const std::string limit = limit_reached(now);
    if (limit.empty()) return;
    const auto cost = account_.ledger.cost(now);
    stop_job_for(Ending::limited, limit + " (reached after " +
                                      format_duration(account_.ledger.elapsed(now)) +
                                      (cost ? ", " + format_usd(*cost) : std::string()) + ")");
}

bool TrainRun::limit_blocks_start() {
    // A gang's nodes start together or not at all (the barrier): their limit is the follow's.
    if (gang_ || watch_.started() || !plan_.budget.any() || outcome_.ending != Ending::completed)
        return false;
    const double now = wall_now();
    const std::string limit = limit_reached(now);
    if (limit.empty()) return false;
    const auto cost = account_.ledger.cost(now);
    outcome_.ending = Ending::limited;
    outcome_.stop_note = limit + " (reached after " +
                         format_duration(account_.ledger.elapsed(now)) +
                         (cost ? ", " + format_usd(*cost) : std::string()) + ")";
    reporter_.alert(outcome_.stop_note + ": not starting the job of " + which() + " on " + host());
    return true;
}

int TrainRun::segment_seconds() const {
    // A segment ends by the limit, so that the stop comes within a second or two of it.
    // A node of a gang looks at the others every kGangSegmentSeconds.
    const double left = account_.ledger.seconds_left(node_budget(), wall_now());
    const int most = gang_ ? kGangSegmentSeconds : kFollowSegmentSeconds;
    return static_cast<int>(std::clamp(std::ceil(left), 1.0, static_cast<double>(most)));
}

void TrainRun::show_cost() {
    const double now = wall_now();
    const auto cost = account_.ledger.cost(now);
    terminal_.status.set("1-cost", "running " + format_duration(account_.ledger.elapsed(now)) +
                                       (cost ? ", " + format_usd(*cost) : std::string()));
}

void TrainRun::summarize(const Error* error) {
    if (gang_.role == GangSeat::Role::settling) return;
    const bool bad_input = error && error->code() == exit_code::kUsage;
    // No machine is left to bill once shutdown_cmds that power it off ran (phase done), and
    // none was ever reached by a run that never connected.
    const bool powered_off = phase_ == Phase::done && powers_host_off(plan_.shutdown_cmds);
    std::string billing = phase_ == Phase::connect || powered_off || bad_input || plan_.rented
                              ? std::string()
                              : host();
    if (lock_ == LockHold::none) {
        // Nothing of this run on the remote (a conflict, a refused --resume): the reminder alone.
        if (!billing.empty()) reporter_.notice(billing_reminder(billing, false));
        return;
    }
    const double now = wall_now();
    RunSummary s;
    s.model = plan_.model;
    s.run_id = run_id_;
    s.status = error ? std::string("failed: ") + error->what() : outcome_.end_note;
    s.exit_code = exit_code();
    s.attempts = account_.ledger.attempts();
    if (!account_.ledger.empty()) s.duration_s = account_.ledger.elapsed(now);
    s.cost = account_.ledger.cost(now);
    std::error_code ec;
    if (outcome_.collected == Collected::with_archive &&
        std::filesystem::exists(plan_.local_archive, ec))
        s.archive = plan_.local_archive;
    if (outcome_.collected != Collected::nothing) s.logs = plan_.local_logs;
    if (watch_.started()) s.console = plan_.local_console;
    if (watch_.started() && outcome_.collected == Collected::nothing)
        s.collect_hint = "still on the remote; collect them with: " + plan_.resume_line;
    // A host left after a failover may come back and bill again; one that a watch.on_failure
    // rule left (exclude_host) is still on.
    std::string lost, left;
    const auto was_left = [&](const std::string& h) {
        for (const auto& e : relocation_.excluded)
            if (e.host == h && e.left) return true;
        return false;
    };
    for (const auto& a : account_.ledger.attempts()) {
        std::string& list = was_left(a.host) ? left : lost;
        if (a.how == "host lost" && a.host != host() && list.find(a.host) == std::string::npos)
            list += (list.empty() ? "" : ", ") + a.host;
    }
    if (!billing.empty() && !lost.empty())
        billing += " (and the lost " + lost + ", should it come back)";
    if (!billing.empty() && !left.empty()) billing += " (and " + left + ", which the run left)";
    s.billing_host = billing;
    s.detached = outcome_.ending == Ending::detached;
    s.gpu_use = watchers_.gpu.summary();
    for (const auto& line : summary_lines(s)) reporter_.notice(line);
}

}  // namespace mlt
