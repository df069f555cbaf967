// TrainRun and the release that goes with the job's follows (ReleaseAtEnd): a run whose log
// dir is home already when its job ends (a warm run) gives its lock back in the follow's own
// round trip, and its collection pulls nothing. docs/remote-protocol.md describes it.
#include <spdlog/spdlog.h>

#include "mlt/train/run/train_run.h"

namespace mlt {

namespace {

// More files than this in the local log dir are not written down for the release: the
// remote lists and hashes them all at the job's end, where the run waits for it.
constexpr size_t kMaxReleaseFiles = 20000;

// The local log dir as the remote lists its copy, mlt's own files left out.
std::optional<TreeDigest> local_logs_digest(const TrainPlan& plan) {
    return local_tree_digest(plan.local_logs, local_own_names(plan, false), kMaxReleaseFiles);
}

}  // namespace

void TrainRun::arm_release() {
    if (!release_considered_) {
        release_considered_ = true;
        // Only a collection of nothing but the log dir, with no shutdown_cmds after it and no
        // live pull writing into the local dir meanwhile; and only when the local dir holds
        // something: an empty one (a first run, --clean) is seldom what the job leaves.
        const bool may = !gang_ && !plan_.no_wait && plan_.shutdown_cmds.empty() &&
                         plan_.sync_every_s <= 0 && logs_only_collection(plan_);
        if (may) logs_digest_ = local_logs_digest(plan_);
        if (logs_digest_ && logs_digest_->files == 0) logs_digest_.reset();
    }
    // Each time: after a failover, the follows are another host's.
    if (logs_digest_)
        release_armed_ =
            job_.release_with_follow({remote_log_dir_of(plan_, ""), logs_digest_->sha256}) ||
            release_armed_;
}

void TrainRun::retake_if_unread() {
    if (!release_unread_) return;
    // The lost follow may still run on the remote (a silent link) and release at the job's
    // end: the marked lock is one it leaves alone.
    job_.retake(run_id_);
    release_unread_ = false;
    released_ahead_ = false;
}

bool TrainRun::resume_released(const std::string& run_id) {
    if (run_id.empty()) return false;
    try {
        job_.retake(run_id);
    } catch (const Error& e) {
        if (e.kind() != ErrorKind::conflict) throw;
        return false;  // not released by a follow: nothing to resume
    }
    spdlog::debug("run {}: its follow had released the lock; taken back to resume it", run_id);
    return true;
}

bool TrainRun::collected_with_release(const JobResult& result) {
    const auto now = local_logs_digest(plan_);
    if (now && logs_digest_ && now->sha256 == logs_digest_->sha256) {
        lock_ = LockHold::released;
        collected_in_place(plan_, result, now->files, reporter_);
        return true;
    }
    // The local dir changed since (by hand): the pull needs the lock again, as any pull does.
    spdlog::debug("the local log dir changed while the job ran; taking the lock of run {} back",
                  run_id_);
    job_.retake(run_id_);
    released_ahead_ = false;
    return false;
}

}  // namespace mlt
