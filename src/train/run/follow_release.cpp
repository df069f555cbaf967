// FollowRelease: when the follows of a run carry the release (ReleaseAtEnd), and what a lost
// follow that carried it leaves to do.
#include "mlt/train/run/follow_release.h"

#include <algorithm>

#include "mlt/train/run/remote_job.h"

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

void FollowRelease::arm(RemoteJob& job, const TrainPlan& plan, bool in_gang) {
    if (decision_ == Decision::open) {
        // An empty local dir (a first run, --clean) is seldom what the job leaves.
        // A watch.on_failure `restart` may start a failed job again: its lock must stay.
        const bool restarts =
            std::any_of(plan.on_failure.begin(), plan.on_failure.end(),
                        [](const FailureRule& r) { return r.then == FailureAction::restart; });
        const bool may = !in_gang && !plan.no_wait && plan.shutdown_cmds.empty() &&
                         plan.sync_every_s <= 0 && !restarts && logs_only_collection(plan);
        if (may) digest_ = local_logs_digest(plan);
        if (digest_ && digest_->files == 0) digest_.reset();
        decision_ = digest_ ? Decision::on : Decision::off;
    }
    // Only a host that sends commands ahead carries it.
    JobPipelining* const ahead = job.pipelining();
    if (decision_ == Decision::on && ahead) {
        ahead->release_with_follow({remote_log_dir_of(plan, ""), digest_->sha256});
        armed_ = Armed::yes;
    }
}

void FollowRelease::seen(const FollowStep& step) {
    if (!step.ended || !step.result) return;
    if (step.result->released) released_ = Released::by_follow;
    if (step.result->lock_gone) unread_ = Unread::out;
}

void FollowRelease::retake_if_unread(RemoteJob& job, const std::string& run_id) {
    // Only an armed release leaves a follow unread (arm: the job has pipelining).
    if (unread_ == Unread::none || !job.pipelining()) return;
    // The lost follow may still run on the remote (a silent link) and release at the job's
    // end: the marked lock is one it leaves alone.
    job.pipelining()->retake(run_id);
    unread_ = Unread::none;
    released_ = Released::no;
}

std::optional<size_t> FollowRelease::home_as_released(const TrainPlan& plan) const {
    const auto now = local_logs_digest(plan);
    if (now && digest_ && now->sha256 == digest_->sha256) return now->files;
    return std::nullopt;
}

}  // namespace mlt
