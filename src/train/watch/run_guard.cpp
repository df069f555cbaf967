// TrainRun and the host's guard (guard.sh): what the lock hands it (the deadline left of the
// budget, the silence rule, the unattended shutdown), and how a run it stopped ends.
#include <algorithm>
#include <cmath>

#include "mlt/train/run/train_run.h"
#include "mlt/util/text.h"

namespace mlt {

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

}  // namespace mlt
