// TrainRun::after_the_job(): what follows a job's end. A failed or lost attempt is judged by
// watch.on_failure (docs/usage.md, "When an attempt fails"); a lost job (its processes gone
// without an exit status) starts again in place as the run's next attempt, from --resume or,
// within max_restarts, from the follow that saw it end lost; a `restart` rule restarts a failed
// one too, and `exclude_host` leaves the host for a standby one.
#include <algorithm>

#include "mlt/train/run/train_run.h"
#include "mlt/util/interrupt.h"

namespace mlt {

namespace {

std::string how_it_ended(const JobResult& result) {
    return result.exit_status ? "failed with exit status " + std::to_string(*result.exit_status)
                              : std::string("was lost (its processes are gone, no exit status)");
}

}  // namespace

Phase TrainRun::restart() {
    long pgid = 0;
    // Kept until the restart returned: a restart cut by the link is sent again as it was.
    const bool failed = watch_.restarts_failed;
    {
        InterruptDeferral hold;  // as start(): the job may be launched before the reply
        pgid = job_->restart(run_id_, attempt_, failed);
    }
    watch_.restarts_failed = false;
    // The lost attempt may have stopped inside a sequence: the new one's lines must show.
    terminal_.shown = ConsoleFilter(plan_.raw_console);
    reporter_.notice("restarted " + plan_.model + " on " + host() + " (run " + run_id_ +
                     ", attempt " + std::to_string(attempt_) + ", process group " +
                     std::to_string(pgid) + ")");
    record("running", std::nullopt);
    notify(NotifyEventKind::restarted,
           failed ? "its job failed, and " + outcome_.failure_rule
                  : std::string("its job was lost (its processes gone, no exit status)"));
    notify(NotifyEventKind::started);  // the new attempt's (the host's guard tells it too)
    return Phase::follow;
}

std::optional<FailureVerdict> TrainRun::judge_job(const JobResult& result) const {
    if (result.stopped_with || !result.guard_stop.empty() ||
        (result.exit_status && *result.exit_status == 0))
        return std::nullopt;
    return judge_failure(plan_.on_failure, attempt_last_lines(plan_.local_console),
                         !result.exit_status);
}

std::optional<FailureVerdict> TrainRun::judge_attempt(
    const std::optional<JobResult>& result) const {
    // A gang's nodes are judged as the gang's causes (gang_cause); a stop is no failure.
    if (!result || result->run_id != run_id_ || watch_.stop != JobWatch::Stop::none || gang_)
        return std::nullopt;
    return judge_job(*result);
}

void TrainRun::mark_host_bad(bool left) {
    relocation_.excluded.push_back(
        {host(), wall_now() + kExcludedSeconds, outcome_.failure_rule, run_id_, left});
    if (relocation_.failover) relocation_.failover->exclude(host());
}

bool TrainRun::left_by_rule() const {
    return !relocation_.excluded.empty() && relocation_.excluded.back().host == host() &&
           relocation_.excluded.back().left;
}

Phase TrainRun::after_the_job(const std::optional<JobResult>& result) {
    const std::optional<FailureVerdict> verdict = judge_attempt(result);
    if (!verdict) {
        if (restart_attempt(result, nullptr)) return Phase::restart;
    } else {
        outcome_.failure_rule = verdict->describe();
        switch (verdict->then) {
            case FailureAction::restart:
                if (restart_attempt(result, &*verdict)) return Phase::restart;
                break;
            case FailureAction::exclude_host:
                if (leave_host(*result)) return phase_;
                break;
            case FailureAction::no_restart:
                reporter_.alert("the job of " + which() + " " + how_it_ended(*result) +
                                "; the run ends here, not restarted: " + outcome_.failure_rule);
                break;
        }
    }
    watch_.life = JobWatch::Life::ended;
    outcome_.followed = result;
    return Phase::collect;
}

Gang::Cause TrainRun::gang_cause(const JobResult& result) {
    const Gang::Cause plain = result.exit_status ? Gang::Cause::training : Gang::Cause::job_lost;
    const auto verdict = judge_job(result);
    if (!verdict) return plain;
    outcome_.failure_rule = verdict->describe();
    reporter_.alert("the job of " + which() + " on rank " + std::to_string(gang_.rank) + " " +
                    how_it_ended(result) + ": " + outcome_.failure_rule);
    switch (verdict->then) {
        case FailureAction::no_restart:
            return Gang::Cause::other;
        case FailureAction::exclude_host:
            mark_host_bad(true);
            return Gang::Cause::host_lost;  // a standby host takes the rank's place
        case FailureAction::restart:
            return Gang::Cause::ruled_restart;
    }
    return plain;
}

bool TrainRun::restart_attempt(const std::optional<JobResult>& result, const FailureVerdict* rule) {
    // A gang's node is not restarted alone: the others could not meet it at the rendezvous.
    if (!result || result->run_id != run_id_ || watch_.stop != JobWatch::Stop::none || gang_)
        return false;
    if (result->exit_status && !rule) return false;  // only a rule restarts a failed job
    const int allowed = rule ? std::max(plan_.max_restarts, 1) : plan_.max_restarts;
    if (attempt_ - 1 >= allowed) {
        if (allowed > 0 && !rule)
            outcome_.restarts = RunOutcome::Restarts::used_up;  // said in the collection's one line
        if (rule)
            reporter_.alert("the job of " + which() + " " + how_it_ended(*result) +
                            "; not restarted: the " + std::to_string(allowed) +
                            " restart(s) of max_restarts are used up (" + outcome_.failure_rule +
                            ")");
        return false;
    }
    const double now = wall_now();
    const std::string limit = limit_reached(now);
    if (!limit.empty()) {
        // No new attempt past a limit: the ended one is collected, and the run ends with exit 5.
        outcome_.ending = Ending::limited;
        outcome_.stop_note =
            limit + " (reached when the job " + (result->exit_status ? "failed)" : "was lost)");
        return false;
    }
    const std::string how = result->exit_status ? "failed" : "lost";
    account_.ledger.end_attempt(how, now);
    // Not "failed": a record that a killed mlt leaves last must not read as the run's end.
    record(result->exit_status ? "restarting" : "lost", result->exit_status);
    ++attempt_;
    begin_attempt(now);
    watch_.restarts_failed = result->exit_status.has_value();
    reporter_.notice("the job of " + which() + " " + how_it_ended(*result) +
                     "; restarting it as attempt " + std::to_string(attempt_) +
                     (rule ? ": " + outcome_.failure_rule
                           : " (max_restarts " + std::to_string(plan_.max_restarts) + ")"));
    return true;
}

bool TrainRun::leave_host(const JobResult& result) {
    const std::string left = host();
    const std::string ended = "the job of " + which() + " " + how_it_ended(result);
    mark_host_bad(true);  // whether or not the run can leave it
    if (!relocation_.failover || !plan_.failover || !relocation_.failover->has_more()) {
        reporter_.alert(ended + "; " + outcome_.failure_rule +
                        ", but no standby host is left (fallback_hosts, provision_cmd" +
                        (plan_.failover ? "" : "; --no-failover") +
                        "): the run ends here; the host is marked bad for 24 h");
        return false;
    }
    const std::string limit = limit_reached(wall_now());
    if (!limit.empty()) {
        // No standby host is taken past a limit: the run ends here with exit 5.
        outcome_.ending = Ending::limited;
        outcome_.stop_note = limit + " (reached when the job failed)";
        return false;
    }
    reporter_.alert(ended + ": " + outcome_.failure_rule + "; leaving " + left +
                    " (marked bad for 24 h) for a standby host");
    // What the attempt left in its log dir (the checkpoints) comes home before the run moves
    // on; not its archive, nor download_files: they are no result of this run.
    stop_sync();
    try {
        TrainPlan logs_only = plan_;
        logs_only.local_archive.clear();
        logs_only.download_files.clear();
        const TransferStats got = job_->collect(logs_only, result, reporter_);
        outcome_.down.files += got.files;
        outcome_.down.bytes += got.bytes;
    } catch (const Error& e) {
        if (is_signal(e.kind())) throw;
        reporter_.warning("the log dir of the failed attempt on " + left + " did not come home: " +
                          e.what() + "; the run continues from what came home before");
    }
    return fail_over("");
}

}  // namespace mlt
