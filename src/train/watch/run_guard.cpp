// TrainRun and the host's guard (guard.sh): what the lock hands it (the deadline left of the
// budget, the silence and idle-GPU rules, the unattended shutdown), and how a run it stopped
// ends.
#include <algorithm>
#include <cmath>

#include "mlt/config/rule_dialect.h"
#include "mlt/config/stop_rule_spec.h"
#include "mlt/train/run/train_run.h"
#include "mlt/transfer/progress.h"
#include "mlt/util/text.h"

namespace mlt {

namespace {

// The limits a run hands its guard, as the lock's limit= names them.
std::string hours_limit(const Budget& budget) {
    return "--max-hours " + number_text(budget.max_hours);
}
std::string cost_limit(const Budget& budget) {
    return "--max-cost " + number_text(budget.max_cost);
}

// Whether `text` is a number as number_text writes one (a guard.stop record is the host's
// word: only what a guard writes is taken).
bool number_like(const std::string& text) {
    return !text.empty() && text.size() <= 32 &&
           text.find_first_not_of("0123456789.eE+-") == std::string::npos;
}

// Whether `text` is a count of seconds as a guard writes one.
bool seconds_like(const std::string& text) {
    return !text.empty() && text.size() <= 9 &&
           text.find_first_not_of("0123456789") == std::string::npos;
}

}  // namespace

void TrainRun::hand_to_guard(NewRun& run) const {
    // A gang's nodes: every one the same deadline, from the run's budget at the sum of their
    // prices (node_budget), and the silence rule on its own console (a rank whose peer was
    // stopped hangs in its next collective, falls silent, and its guard stops it too); the
    // rules are rank 0's, the unattended shutdown a single node's.
    const bool single = !gang_;
    const bool lead = single || gang_.rank == 0;
    run.silent_seconds = static_cast<long>(std::ceil(plan_.silent_minutes * 60));
    // watch.stop_when: decided on rank 0's console (one rule engine, the host's).
    run.rules_text = lead && !plan_.stop_when.empty() ? host_rules_text(plan_.stop_when) : "";
    // checkpoints: each node's guard keeps its own log dir's.
    run.checkpoints_text = plan_.checkpoints.on() ? checkpoints_file_text(plan_.checkpoints) : "";
    run.notify = lead && plan_.notify_from == NotifyFrom::host && !plan_.notify.empty();
    run.stop_silent = plan_.stop_silent;
    const bool unattended = single && plan_.unattended_shutdown_minutes > 0 &&
                            (!plan_.shutdown_cmds.empty() ||
                             (!plan_.unattended_release.empty() && !plan_.rented_id.empty()));
    run.unattended_seconds =
        unattended ? static_cast<long>(std::ceil(plan_.unattended_shutdown_minutes * 60)) : 0;
    run.shutdown_script = unattended ? shutdown_script(true) : std::string();
    // The idle rule is each node's own (a gang's others stop as their rank does).
    run.sample_every = plan_.watch_every_s;
    run.idle_seconds = static_cast<long>(std::ceil(plan_.idle_gpu_minutes * 60));
    run.stop_idle = plan_.stop_idle;
    run.idle_below_percent = kIdleGpuPercent;
    const JobDir::GuardDeadline deadline = guard_deadline();
    run.budget_seconds = deadline.budget_seconds;
    run.limit = deadline.limit;
}

JobDir::GuardDeadline TrainRun::guard_deadline() const {
    const Budget budget = node_budget();
    const bool by_cost = budget.max_cost > 0 && plan_.price_per_hour > 0;
    if (budget.max_hours <= 0 && !by_cost) return {};
    // Before this attempt opens, at this host's price: what the earlier attempts used counts.
    const double now = wall_now();
    const double left = account_.ledger.seconds_left(budget, now, plan_.price_per_hour);
    const bool hours_first =
        budget.max_hours > 0 && budget.max_hours * 3600 - account_.ledger.elapsed(now) <= left;
    return {static_cast<long>(std::max(0.0, std::ceil(left))),
            hours_first ? hours_limit(plan_.budget) : cost_limit(plan_.budget)};
}

void TrainRun::reguard(const JobStatus& job) {
    // A --resume with a limit sets what is left of the run's budget as the host's deadline
    // (without one, the host keeps the limit it has). Nothing on the host keeps the run's
    // limit while its guard is gone (killed): started again.
    std::optional<JobDir::GuardDeadline> deadline;
    if (plan_.budget.any()) deadline = guard_deadline();
    if (job.guard != GuardState::gone && !deadline) return;
    if (job_->restart_guard(run_id_, deadline ? &*deadline : nullptr) &&
        job.guard == GuardState::gone)
        reporter_.warning("the guard of " + which() + " on " + host() +
                          " was not running (its process was gone): started it again");
}

bool TrainRun::rule_stop(const std::string& hit) {
    // "INDEX<TAB>LINE": the rule is named by this mlt's own list, the line is the host's word.
    const size_t tab = hit.find('\t');
    const std::string index = hit.substr(0, tab);
    if (tab == std::string::npos || !seconds_like(index) ||
        std::stoul(index) >= plan_.stop_when.size())
        return false;
    outcome_.stop_note =
        "watch.stop_when rule " + describe_rule(plan_.stop_when[std::stoul(index)]) + " (line: '" +
        printable(hit.substr(tab + 1), 200) + "'; the guard on " + host() + " stopped the job)";
    outcome_.ending = Ending::ruled;
    reporter_.alert(outcome_.stop_note + ": collecting the results of " + which());
    return true;
}

void TrainRun::note_guard_stop(const std::string& why) {
    // "limit --max-hours H", "limit --max-cost C", "silent SECONDS", "idle SECONDS" or "rule
    // INDEX<TAB>LINE"; an mlt that stopped the job itself said why already.
    if (outcome_.ending != Ending::completed) return;
    const auto after = [&](const std::string& prefix) {
        return why.rfind(prefix, 0) == 0 ? why.substr(prefix.size()) : std::string();
    };
    if (number_like(after("limit --max-hours ")) || number_like(after("limit --max-cost ")))
        outcome_.stop_note =
            why.substr(6) + " (reached; the guard on " + host() + " stopped the job)";
    else if (const std::string s = after("silent "); seconds_like(s))
        outcome_.stop_note = "watch.silent_minutes " + number_text(plan_.silent_minutes) +
                             " (no new console output for " + s + " s; the guard on " + host() +
                             " stopped the job)";
    else if (const std::string rule = after("rule "); !rule.empty() && rule_stop(rule))
        return;
    else if (const std::string idle = after("idle "); seconds_like(idle))
        outcome_.stop_note = "every GPU of " + host() + " was under " +
                             std::to_string(kIdleGpuPercent) + " % for " +
                             format_duration(std::stod(idle)) + " (watch.idle_gpu_minutes " +
                             number_text(plan_.idle_gpu_minutes) + "; the guard stopped the job)";
    else {
        reporter_.warning("the job of " + which() + " on " + host() +
                          " records a stop by its guard that no guard writes ('" +
                          printable(why, 100) + "'); it is not taken as the run's reason");
        return;
    }
    outcome_.ending = Ending::limited;
    reporter_.alert(outcome_.stop_note + ": collecting the results of " + which());
}

}  // namespace mlt
