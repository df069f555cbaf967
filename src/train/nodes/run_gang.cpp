// TrainRun as one node of a multi-node run (GangSeat): the barrier before the start, and the
// gang stop.
#include "mlt/train/run/train_run.h"
#include "mlt/util/interrupt.h"

namespace mlt {

void GangSeat::wait_for_all() const {
    for (;;) {
        throw_if_interrupted();
        const std::optional<bool> all_ready = gang->arrive(rank, 0.25);
        if (!all_ready) continue;
        if (*all_ready) return;
        const auto failed = gang->first_failure();
        throw Error(ErrorKind::remote,
                    "rank " + std::to_string(failed ? failed->rank : -1) +
                        " failed before the training started; rank " + std::to_string(rank) +
                        " does not start its job",
                    "see that node's lines above");
    }
}

bool GangSeat::holds_shutdown() const {
    if (!gang->stopping()) return false;
    for (;;) {
        throw_if_interrupted();
        if (const std::optional<bool> restarts = gang->holds_shutdown(rank, 0.25)) return *restarts;
    }
}

void TrainRun::check_gang() {
    gang_.gang->passed(
        gang_.rank);  // a job that is followed started before: no node waits for this one
    if (!gang_.gang->stopping() || watch_.stop != JobWatch::Stop::none || !watch_.may_still_run())
        return;
    const auto failed = gang_.gang->first_failure();
    reporter_.alert("rank " + std::to_string(failed ? failed->rank : -1) +
                    " failed: stopping this node's job (its process group), then collecting");
    watch_.stop = JobWatch::Stop::wanted;
    gang_.stop = GangSeat::Stop::for_another_node;
}

void TrainRun::continue_gang(int attempt, const std::string& came_from) {
    attempt_ = attempt;
    if (!came_from.empty()) {
        relocation_.where = Relocation::Where::moved;
        relocation_.came_from = came_from;
    }
    gang_.role = GangSeat::Role::new_attempt;
    int skipped = 0;
    const double now = wall_now();
    // This node's own: every node records the gang's run under its one id.
    account_.ledger.restore(earlier_attempts_on(read_history(history_path(), &skipped), run_id_,
                                                host(), attempt_, now));
    begin_attempt(now);
}

}  // namespace mlt
