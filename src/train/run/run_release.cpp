// TrainRun and the release that goes with the job's follows (FollowRelease): the --resume of
// a run that a follow released, and the collection of a run whose lock went with the follow.
#include <spdlog/spdlog.h>

#include "mlt/train/run/train_run.h"

namespace mlt {

bool TrainRun::resume_released(const std::string& run_id) {
    // Only a follow that carried a release released it, and only a host with pipelining
    // sends one.
    JobPipelining* const ahead = job_->pipelining();
    if (run_id.empty() || !ahead) return false;
    try {
        ahead->retake(run_id);
    } catch (const Error& e) {
        if (e.kind() != ErrorKind::conflict) throw;
        return false;  // not released by a follow: nothing to resume
    }
    spdlog::debug("run {}: its follow had released the lock; taken back to resume it", run_id);
    return true;
}

bool TrainRun::collected_with_release(const JobResult& result) {
    if (const auto files = release_.home_as_released(plan_)) {
        lock_ = LockHold::released;
        collected_in_place(plan_, result, *files, reporter_);
        return true;
    }
    // The local dir changed since (by hand): the pull needs the lock again, as any pull does.
    spdlog::debug("the local log dir changed while the job ran; taking the lock of run {} back",
                  run_id_);
    job_->pipelining()->retake(run_id_);  // released(): a follow carried the release
    release_.taken_back();
    return false;
}

}  // namespace mlt
