// TrainRun::restart(): a lost job (its processes gone without an exit status) starts again
// in place as the run's next attempt, from --resume or, within max_restarts, from the follow
// that saw it end lost.
#include "mlt/train/run/train_run.h"
#include "mlt/util/interrupt.h"

namespace mlt {

Phase TrainRun::restart() {
    long pgid = 0;
    {
        InterruptDeferral hold;  // as start(): the job may be launched before the reply
        pgid = job_->restart(run_id_, attempt_);
    }
    // The lost attempt may have stopped inside a sequence: the new one's lines must show.
    terminal_.shown = ConsoleFilter(plan_.raw_console);
    reporter_.notice("restarted " + plan_.model + " on " + host() + " (run " + run_id_ +
                     ", attempt " + std::to_string(attempt_) + ", process group " +
                     std::to_string(pgid) + ")");
    record("running", std::nullopt);
    notify(NotifyEventKind::restarted, "its job was lost (its processes gone, no exit status)");
    notify(NotifyEventKind::started);  // the new attempt's (the host's guard tells it too)
    return Phase::follow;
}

bool TrainRun::restart_lost(const std::optional<JobResult>& result) {
    // A gang's node is not restarted alone: the others could not meet it at the rendezvous.
    if (!result || result->exit_status || result->run_id != run_id_ ||
        watch_.stop != JobWatch::Stop::none || gang_)
        return false;
    if (attempt_ - 1 >= plan_.max_restarts) {
        if (plan_.max_restarts > 0)
            outcome_.restarts = RunOutcome::Restarts::used_up;  // said in the collection's one line
        return false;
    }
    const double now = wall_now();
    const std::string limit = limit_reached(now);
    if (!limit.empty()) {
        // No new attempt past a limit: the lost one is collected, and the run ends with exit 5.
        outcome_.ending = Ending::limited;
        outcome_.stop_note = limit + " (reached when the job was lost)";
        return false;
    }
    account_.ledger.end_attempt("lost", now);
    record("lost", std::nullopt);
    ++attempt_;
    begin_attempt(now);
    reporter_.notice("the job of " + which() + " was lost (its processes are gone, no exit " +
                     "status); restarting it as attempt " + std::to_string(attempt_) +
                     " (max_restarts " + std::to_string(plan_.max_restarts) + ")");
    return true;
}

}  // namespace mlt
