// TrainRun as one node of a multi-node run (GangSeat): the barrier before the start, and the
// gang stop.
#include <algorithm>

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
    if (own_error || !gang->stopping()) return false;
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

void TrainRun::continue_gang(int attempt, const std::string& came_from,
                             const std::vector<std::string>& earlier_hosts) {
    attempt_ = attempt;
    if (!came_from.empty()) {
        relocation_.where = Relocation::Where::moved;
        relocation_.came_from = came_from;
    }
    gang_.role = GangSeat::Role::new_attempt;
    int skipped = 0;
    const double now = wall_now();
    // This node's rank's own, on every host it was on: every node records the gang's run under
    // its one id.
    const auto runs = read_history(history_path(), &skipped);
    std::vector<AttemptRecord> earlier = earlier_attempts_on(runs, run_id_, host(), attempt_, now);
    for (const auto& h : earlier_hosts) {
        if (h == host()) continue;
        for (auto& a : earlier_attempts_on(runs, run_id_, h, attempt_, now)) earlier.push_back(a);
    }
    std::stable_sort(
        earlier.begin(), earlier.end(),
        [](const AttemptRecord& a, const AttemptRecord& b) { return a.start < b.start; });
    account_.ledger.restore(std::move(earlier));
    begin_attempt(now);
}

}  // namespace mlt
