// TrainRun as one node of a multi-node run: the barrier before the start, and the gang stop.
#include "mlt/train/run/train_run.h"
#include "mlt/util/interrupt.h"

namespace mlt {

void TrainRun::wait_for_gang() {
    for (;;) {
        throw_if_interrupted();
        const std::optional<bool> all_ready = gang_->arrive(rank_, 0.25);
        if (!all_ready) continue;
        if (*all_ready) return;
        const auto failed = gang_->first_failure();
        throw Error(ErrorKind::remote,
                    "rank " + std::to_string(failed ? failed->rank : -1) +
                        " failed before the training started; rank " + std::to_string(rank_) +
                        " does not start its job",
                    "see that node's lines above");
    }
}

void TrainRun::check_gang() {
    gang_->passed(rank_);  // a job that is followed started before: no node waits for this one
    if (!gang_->stopping() || watch_.stop != JobWatch::Stop::none || !watch_.may_still_run())
        return;
    const auto failed = gang_->first_failure();
    reporter_.alert("rank " + std::to_string(failed ? failed->rank : -1) +
                    " failed: stopping this node's job (its process group), then collecting");
    watch_.stop = JobWatch::Stop::wanted;
    stopped_for_gang_ = true;
}

void TrainRun::continue_gang(int attempt) {
    attempt_ = attempt;
    gang_attempt_ = true;
    int skipped = 0;
    const double now = wall_now();
    // This node's own: every node records the gang's run under its one id.
    ledger_.restore(earlier_attempts_on(read_history(history_path(), &skipped), run_id_, host(),
                                        attempt_, now));
    begin_attempt(now);
}

}  // namespace mlt
