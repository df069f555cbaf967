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

void TrainRun::check_budget() {
    if (!plan_.budget.any() || !may_stop_job()) return;
    const double now = wall_now();
    const std::string limit = account_.ledger.limit_reached(plan_.budget, now);
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
    const std::string limit = account_.ledger.limit_reached(plan_.budget, now);
    if (limit.empty()) return false;
    const auto cost = account_.ledger.cost(now);
    outcome_.ending = Ending::limited;
    outcome_.stop_note = limit + " (reached after " +
                         format_duration(account_.ledger.elapsed(now)) +
                         (cost ? ", " + format_usd(*cost) : std::string()) + ")";
    reporter_.alert(outcome_.stop_note + ": not starting the job of " + which() + " on " + host());
    return true;
}

void TrainRun::hand_to_guard(NewRun& run) const {
    run.budget_seconds.reset();
    run.limit.clear();
    run.silent_seconds = 0;
    run.unattended_seconds = 0;
    if (gang_) return;
    run.silent_seconds = static_cast<long>(std::ceil(plan_.silent_minutes * 60));
    run.stop_silent = plan_.stop_silent;
    run.unattended_seconds = 0;
    run.shutdown_script.clear();
    if (plan_.unattended_shutdown_minutes > 0 && !plan_.shutdown_cmds.empty()) {
        run.unattended_seconds =
            static_cast<long>(std::ceil(plan_.unattended_shutdown_minutes * 60));
        run.shutdown_script = make_shutdown_script(
            {plan_.model, run_id_, plan_.environment, plan_.create_venv, plan_.shutdown_cmds});
    }
    const Budget& budget = plan_.budget;
    if (!budget.any()) return;
    // Before this attempt opens: what the run's earlier attempts used counts.
    const double now = wall_now();
    double left = 0;
    if (budget.max_hours > 0) {
        left = budget.max_hours * 3600 - account_.ledger.elapsed(now);
        run.limit = "--max-hours " + number_text(budget.max_hours);
    }
    if (budget.max_cost > 0 && plan_.price_per_hour > 0) {
        const double spent = account_.ledger.cost(now).value_or(0);
        const double by_cost = (budget.max_cost - spent) / plan_.price_per_hour * 3600;
        if (run.limit.empty() || by_cost < left) {
            left = by_cost;
            run.limit = "--max-cost " + number_text(budget.max_cost);
        }
    }
    if (!run.limit.empty()) run.budget_seconds = static_cast<long>(std::max(0.0, std::ceil(left)));
}

void TrainRun::note_guard_stop(const std::string& why) {
    // "limit NOTE" or "silent SECONDS"; an mlt that stopped the job itself said why already.
    if (outcome_.ending != Ending::completed) return;
    if (why.rfind("limit ", 0) == 0)
        outcome_.stop_note =
            why.substr(6) + " (reached; the guard on " + host() + " stopped the job)";
    else if (why.rfind("silent ", 0) == 0)
        outcome_.stop_note = "watch.silent_minutes " + number_text(plan_.silent_minutes) +
                             " (no new console output for " + why.substr(7) + " s; the guard on " +
                             host() + " stopped the job)";
    else
        return;
    outcome_.ending = Ending::limited;
    reporter_.alert(outcome_.stop_note + ": collecting the results of " + which());
}

int TrainRun::segment_seconds() const {
    // A segment ends by the limit, so that the stop comes within a second or two of it.
    // A node of a gang looks at the others every kGangSegmentSeconds.
    const double left = account_.ledger.seconds_left(plan_.budget, wall_now());
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
    std::string billing =
        phase_ == Phase::connect || powered_off || bad_input ? std::string() : host();
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
    // A host left after a failover may come back and bill again.
    std::string lost;
    for (const auto& a : account_.ledger.attempts())
        if (a.how == "host lost" && a.host != host() && lost.find(a.host) == std::string::npos)
            lost += (lost.empty() ? "" : ", ") + a.host;
    if (!billing.empty() && !lost.empty())
        billing += " (and the lost " + lost + ", should it come back)";
    s.billing_host = billing;
    s.detached = outcome_.ending == Ending::detached;
    s.gpu_use = watchers_.gpu.summary();
    for (const auto& line : summary_lines(s)) reporter_.notice(line);
}

}  // namespace mlt
