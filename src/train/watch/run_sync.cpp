// TrainRun and --sync-every: the pulls run beside the follow of a job that may still train,
// never beside the collection (same local dir, same staging dir) or after the run.
#include "mlt/train/run/train_run.h"

namespace mlt {

void TrainRun::start_sync() {
    // --no-wait (and MLTK's poll, --resume --no-wait) does not wait for the job: nothing to
    // pull beside.
    if (plan_.sync_every_s <= 0 || plan_.no_wait || !watch_.may_still_run()) return;
    if (live_pull_ && live_pull_->running()) return;
    if (!live_pull_) live_pull_ = std::make_unique<LivePull>(plan_, run_id_, status_, reporter_);
    live_pull_->start(connection_);
}

void TrainRun::stop_sync() {
    if (!live_pull_ || !live_pull_->running()) return;
    live_pull_->stop();
    status_.set(kSyncPart, "");
}

void TrainRun::throw_if_sync_tampered() const {
    // A host that lied to a pull beside the training may have lied to the collection in ways
    // no check saw: the run is not a success, whatever came home after.
    if (live_pull_)
        if (auto lied = live_pull_->tampered()) throw *lied;
    for (const auto& pull : retired_pulls_)
        if (auto lied = pull->tampered()) throw *lied;
}

}  // namespace mlt
