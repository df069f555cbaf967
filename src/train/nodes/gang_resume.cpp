// plan_gang_resume(): what a --resume of several nodes does, from what each node holds.
#include "mlt/train/nodes/gang_resume.h"

#include <algorithm>

#include "mlt/util/error.h"

namespace mlt {

namespace {

// The one run the nodes hold; throws when they hold different ones, or none. With `known`,
// that run, unless a node holds another run's lock.
std::string the_run(const std::vector<std::optional<JobStatus>>& jobs, const std::string& model,
                    const std::string& known) {
    for (size_t i = 0; i < jobs.size() && !known.empty(); ++i)
        if (jobs[i] && jobs[i]->locked && jobs[i]->run_id != known)
            throw Error(ErrorKind::conflict,
                        "rank " + std::to_string(i) + "'s host holds the lock of another run of " +
                            model + " (run " + jobs[i]->run_id + "); run " + known +
                            " cannot go on there",
                        "see 'mlt ssh ... status " + model + "' on that host");
    if (!known.empty()) return known;
    std::string run;
    size_t first = 0;
    for (size_t i = 0; i < jobs.size(); ++i) {
        if (!jobs[i] || jobs[i]->run_id.empty()) continue;
        if (run.empty()) {
            run = jobs[i]->run_id;
            first = i;
        } else if (jobs[i]->run_id != run) {
            throw Error(ErrorKind::conflict,
                        "the nodes hold different runs of " + model + ": rank " +
                            std::to_string(first) + " run " + run + ", rank " + std::to_string(i) +
                            " run " + jobs[i]->run_id + "; none is resumed",
                        "see 'mlt ssh ... status " + model + "' with the same hosts");
        }
    }
    if (run.empty())
        throw Error(ErrorKind::conflict, "no job of " + model + " to resume on any node",
                    "run without --resume");
    return run;
}

bool ended(JobState s) {
    return s == JobState::finished || s == JobState::collected || s == JobState::lost ||
           s == JobState::aborted;
}

}  // namespace

GangResume plan_gang_resume(const std::vector<std::optional<JobStatus>>& jobs,
                            const std::string& model, const std::string& run_id,
                            const std::string& restart_why) {
    GangResume plan;
    plan.run_id = the_run(jobs, model, run_id);
    bool all_locked = true, any_locked = false, any_running = false, any_ended = false,
         any_unstarted = false;
    int last_attempt = 1;
    for (size_t i = 0; i < jobs.size(); ++i) {
        const auto& job = jobs[i];
        const bool ours = job && job->run_id == plan.run_id;
        if ((!ours || job->state == JobState::lost || job->state == JobState::aborted) &&
            plan.lost_rank < 0) {
            plan.lost_rank = static_cast<int>(i);
            plan.why = "rank " + std::to_string(i) +
                       (ours ? "'s job was lost" : " holds no job of the run");
        }
        if (!ours) {
            all_locked = false;
            continue;
        }
        all_locked = all_locked && job->locked;
        any_locked = any_locked || job->locked;
        any_running = any_running || job->state == JobState::running;
        // An attempt cut before its start on this node (a client killed while it restarted).
        any_unstarted = any_unstarted || (job->locked && (job->state == JobState::uploading ||
                                                          job->state == JobState::starting));
        any_ended = any_ended || ended(job->state);
        last_attempt = std::max(last_attempt, job->attempt);
    }
    plan.adopt_all = all_locked && plan.lost_rank < 0 && restart_why.empty();
    plan.restart = !plan.adopt_all && (plan.lost_rank >= 0 || !restart_why.empty() ||
                                       (any_ended && (any_running || any_unstarted)));
    if (!restart_why.empty()) plan.why = restart_why;
    if (plan.restart && plan.why.empty())
        plan.why = any_running ? "some nodes ended while others ran on"
                               : "the last attempt did not start on every node";
    plan.attempt = last_attempt + 1;
    for (const auto& job : jobs) {
        const bool locked = job && job->run_id == plan.run_id && job->locked;
        // A lock of a run that never started its job there needs no settling: the restart
        // takes it again.
        plan.settle.push_back(locked && (plan.adopt_all || (job->state != JobState::uploading &&
                                                            job->state != JobState::starting)));
    }
    if (!plan.adopt_all && !plan.restart && !any_locked)
        throw Error(ErrorKind::conflict,
                    "run " + plan.run_id + " of " + model +
                        " has ended on every node, and its results were collected: nothing to "
                        "resume",
                    "run without --resume for a new run, or with --restore to start one from "
                    "the checkpoints that came home");
    return plan;
}

}  // namespace mlt
