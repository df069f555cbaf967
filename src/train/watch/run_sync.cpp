// TrainRun and --sync-every: the pulls run beside the follow of a job that may still train,
// never beside the collection (same local dir, same staging dir) or after the run.
#include "mlt/train/run/train_run.h"

namespace mlt {

void TrainRun::start_sync() {
    // --no-wait (and MLTK's poll, --resume --no-wait) does not wait for the job: nothing to
    // pull beside.
    if (plan_.sync_every_s <= 0 || plan_.no_wait || !watch_.may_still_run()) return;
    sync_.start(plan_, run_id_, terminal_.status, reporter_, connection_);
}

void TrainRun::stop_sync() {
    sync_.stop(terminal_.status);
}

}  // namespace mlt
