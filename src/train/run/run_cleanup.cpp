// TrainRun::fail_cleanup(): what a run leaves when a phase fails for good, and the run's
// records in the local history.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <ctime>

#include "mlt/train/local/history.h"
#include "mlt/train/run/train_run.h"

namespace mlt {

Error TrainRun::fail_cleanup(const Error& error) {
    if (lock_ != LockHold::held) {
        // The lock round trip itself failed after its O_EXCL step: a lock of this run may be
        // there. Releasing it is scoped to this run id, so it is safe to try.
        if (phase_ == Phase::lock && !plan_.resume && !run_id_.empty()) {
            try {
                job_->release(run_id_);
            } catch (const Error& e) {
                spdlog::debug("releasing a lock this run may hold: {}", e.what());
            }
        }
        return error;
    }
    if (error.kind() == ErrorKind::conflict) {
        // Another mlt took the run over (or stopped it): nothing remote is ours to touch.
        record("taken over", outcome_.job.exit_status);
        return error;
    }
    const bool job_over = outcome_.job.exit_status.has_value() || watch_.over();
    try {
        if (!watch_.started()) {
            // Failed before the job was started (an upload): nothing to collect, so the next
            // run must not find a lock (exit 3).
            job_->release(run_id_);
            lock_ = LockHold::released;
            record("failed", std::nullopt);
            return error;
        }
        if (!job_over) {
            // The job may still be training: shutdown_cmds (which may power the host off)
            // must wait for its end, and the user must know it runs on.
            record("failed", std::nullopt);
            return Error(error.kind(), error.what(), still_running());
        }
        account_.ledger.end_attempt("failed", wall_now());
        // shutdown_cmds run after failures too; the lock stays so that --resume can collect
        // again (and then does not run them a second time).
        gang_.own_error = true;
        if (phase_ < Phase::shutdown) {
            phase_ = Phase::shutdown;
            while (phase_ == Phase::shutdown) phase_ = shutdown();
        }
    } catch (const Error& e) {
        reporter_.warning(std::string("after the error below, ") + describe(phase_) +
                          " failed too: " + e.what());
    }
    record("failed", outcome_.job.exit_status);
    if (error.kind() == ErrorKind::io) {
        // A local write failed after the training ran (a full disk): not a usage error (2),
        // and nothing on the remote is lost.
        return Error(ErrorKind::io_after_run, error.what(),
                     "the job's results stay on the remote; once fixed, collect them with: " +
                         plan_.resume_line);
    }
    return error;
}

void TrainRun::record(const std::string& status, std::optional<int> exit_status) {
    if (run_id_.empty()) return;
    nlohmann::json r = {{"id", run_id_},
                        {"model", plan_.model},
                        {"hosts", {host()}},
                        {"remote_dir", plan_.remote_dir},
                        {"start", account_.started_iso},
                        {"status", status},
                        {"bytes_up", outcome_.up.bytes},
                        {"bytes_down", outcome_.down.bytes},
                        {"reconnects", outcome_.reconnects},
                        {"attempt", attempt_}};
    const double now = wall_now();
    add_ledger(r, account_.ledger, now);
    if (plan_.price_per_hour > 0) r["price_per_hour"] = plan_.price_per_hour;
    if (plan_.budget.max_hours > 0) r["max_hours"] = plan_.budget.max_hours;
    if (plan_.budget.max_cost > 0) r["max_cost"] = plan_.budget.max_cost;
    if (status != "running") r["end"] = iso_time(static_cast<std::time_t>(now));
    if (exit_status) r["exit_status"] = *exit_status;
    if (outcome_.shutdown_by == RunOutcome::ShutdownBy::host_guard) r["shutdown"] = "unattended";
    if (!relocation_.excluded.empty()) r["excluded_hosts"] = excluded_json(relocation_.excluded);
    if (!outcome_.failure_rule.empty()) r["on_failure"] = outcome_.failure_rule;
    if (!plan_.rented_id.empty() &&
        std::find(rented_ids_.begin(), rented_ids_.end(), plan_.rented_id) == rented_ids_.end())
        rented_ids_.push_back(plan_.rented_id);
    if (!rented_ids_.empty()) r["instances"] = rented_ids_;
    append_history(r, reporter_);
}

}  // namespace mlt
