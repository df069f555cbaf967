// TrainRun::on_signal(): Ctrl+C once while the job runs stops it and still collects; a
// second Ctrl+C, SIGTERM or SIGHUP leaves at once, saying what is left on the remote.
#include "mlt/train/run/train_run.h"
#include "mlt/util/interrupt.h"

namespace mlt {

std::optional<int> TrainRun::on_signal(const Error& signal) {
    if (signal.kind() != ErrorKind::interrupted) return leave(signal);  // SIGTERM, SIGHUP
    acknowledge_interrupt();
    if (outcome_.ending == Ending::interrupted || interrupt_pending())
        return leave(signal);  // twice
    outcome_.ending = Ending::interrupted;
    if (!watch_.started()) {
        if (lock_ == LockHold::held) {
            reporter_.alert("Ctrl+C: nothing was started; releasing the job lock");
            try {
                job_->release(run_id_);
                lock_ = LockHold::released;
            } catch (const Error& e) {
                reporter_.alert(std::string("could not release the job lock (") + e.what() +
                                "); continue the run with: " + plan_.resume_line +
                                " or discard it with --force");
            }
        }
        record("stopped", std::nullopt);
        outcome_.end_note = "stopped by Ctrl+C before its job started";
        return exit_code::kInterrupted;
    }
    if (!watch_.may_still_run()) return leave(signal);  // the job has ended already
    reporter_.alert(
        "Ctrl+C: stopping the remote job, then collecting its results (Ctrl+C again "
        "to leave now, without collecting)");
    watch_.stop = JobWatch::Stop::wanted;
    phase_ = Phase::follow;
    return std::nullopt;
}

std::string TrainRun::still_running() const {
    return "the remote job of " + plan_.model + " is STILL RUNNING on " + host() +
           "; stop it with: " + plan_.stop_line + "; reattach with: " + plan_.resume_line;
}

int TrainRun::leave(const Error& signal) {
    const std::string why =
        signal.kind() == ErrorKind::interrupted
            ? (outcome_.ending == Ending::interrupted ? "Ctrl+C again" : "Ctrl+C")
            : std::string(signal.what());
    reporter_.alert(why + ": leaving now; " + leave_state());
    record("left", outcome_.job.exit_status);
    outcome_.left = true;
    outcome_.end_note = "left after " + why;
    return signal.code();
}

// What a user leaving now must know about the remote.
std::string TrainRun::leave_state() const {
    if (lock_ != LockHold::held) return "nothing remote was changed";
    if (!watch_.started())
        return "the run of " + plan_.model + " is kept; continue it with: " + plan_.resume_line +
               " (or discard it with --force)";
    if (watch_.may_still_run() && watch_.stop_under_way())
        // The stop runs on the remote by itself once sent: the job is not "still running"
        // for long, whatever mlt does now.
        return "the stop of the remote job of " + plan_.model +
               " was sent (TERM, then KILL after " + std::to_string(kStopGraceSeconds) +
               " s) and goes on without mlt; if the job still runs, stop it with: " +
               plan_.stop_line + "; collect its results with: " + plan_.resume_line;
    if (watch_.may_still_run()) return still_running();
    return std::string(watch_.stop == JobWatch::Stop::done ? "the remote job was stopped; "
                                                           : "the job has ended; ") +
           "collect its results with: " + plan_.resume_line;
}

}  // namespace mlt
