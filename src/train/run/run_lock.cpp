// TrainRun's lock phase: a new run takes the job lock (or, with --force, takes it over), and
// --resume adopts the run the remote holds, or says why it cannot.
#include <poll.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <random>
#include <utility>

#include "mlt/train/local/history.h"
#include "mlt/train/run/train_run.h"
#include "mlt/transfer/transfer.h"
#include "mlt/util/interrupt.h"
#include "mlt/util/text.h"

namespace fs = std::filesystem;

namespace mlt {

namespace {

Error conflict(std::string what, std::string hint) {
    return Error(ErrorKind::conflict, std::move(what), std::move(hint));
}

// Why a new run cannot take the lock that `job` holds.
Error lock_conflict(const JobStatus& job, const std::string& model, const std::string& host) {
    const std::string other = job.run_id.empty() ? "" : " (run " + job.run_id + ")";
    const std::string run = "model " + model + " has a run" + other + " on " + host;
    switch (job.state) {
        case JobState::running:
            return conflict("model " + model + " already has a running job on " + host + other,
                            "--resume to reattach, or --force to stop it and start over");
        case JobState::uploading:
        case JobState::starting:
            return conflict(run + " whose upload or start did not finish",
                            "--resume to continue it, or --force to discard it");
        case JobState::collected:
            return conflict(run +
                                " whose results were collected but whose shutdown_cmds "
                                "and lock release did not finish",
                            "--resume to finish it, or --force to discard it");
        default:
            return conflict("model " + model + " has a finished job on " + host + other +
                                " whose results were not collected",
                            "--resume to collect them, or --force to discard them");
    }
}

}  // namespace

Phase TrainRun::resume_lock() {
    auto jobs = job_->status();
    if (!jobs.empty() && !jobs.front().locked && resume_released(jobs.front().run_id))
        jobs = job_->status();
    if (jobs.empty() || !jobs.front().locked) {
        int skipped = 0;
        const std::vector<nlohmann::json> runs = read_history(history_path(), &skipped);
        if (const auto cut = cut_failover(runs, plan_.model, host())) {
            if (!cut->to.empty() && cut->to != host())
                throw conflict("run " + cut->run_id + " of " + plan_.model +
                                   " was failing over from " + cut->from + " to " + cut->to +
                                   " when its mlt stopped; it continues there, not on " + host(),
                               "resume it on " + cut->to + " (-h with that host)");
            if (plan_.spec_here && (plan_.failover || !cut->to.empty()))
                return continue_cut_failover(runs, *cut);
        }
        // A host the run left (it went on elsewhere) is refused as such, even without its
        // job dir: --restore beside the run that trains there would train it twice.
        if (const auto id = newest_run_id(runs, plan_.model))
            refuse_moved_away(runs, *id, "", false);
        // What came home is the way on when the host that ran the job is gone with its disk.
        std::error_code ec;
        const bool home = !std::filesystem::is_empty(plan_.local_logs, ec) && !ec;
        throw conflict("no job of " + plan_.model + " to resume on " + host(),
                       home ? "run without --resume for a new run; or, if the host that ran it "
                              "is gone, start a new run from what came home in " +
                                  plan_.local_logs + " with: " + restore_line()
                            : std::string("run without --resume"));
    }
    return adopt(jobs.front());
}

Phase TrainRun::take_lock() {
    JobPipelining* const ahead = job_->pipelining();
    if (ahead) ahead->prepare();  // the control shell's channel opens while the run is planned
    if (plan_.resume) return resume_lock();
    open_run();
    WrapperSpec wrapper = plan_.wrapper;
    wrapper.run_id = run_id_;
    NewRun run{run_id_,
               plan_.owner,
               make_wrapper_script(wrapper),
               wrapper.train_cmd,
               plan_.archive,
               plan_.clean,
               attempt_,
               {},
               relocation_.came_from};
    hand_to_guard(run);
    // The upload's listings travel with the lock's command (--clean removes files between),
    // and so does the start, on the condition that the listings will find nothing to send:
    // a run whose files are all there starts in the lock's round trip. (Not for a gang,
    // whose nodes all upload before any starts; not on a host that sends nothing ahead.)
    const auto planned = uploads();
    std::optional<std::string> current;
    if (!plan_.clean && !gang_ && ahead) current = uploads_current_test(planned);
    if (current) {
        run.start_ticket = random_token();
        ahead->start_ahead_if_current(run_id_, run.start_ticket, *current);
        // From the write on, the job may run: a Ctrl+C, a failure or a failover that comes
        // before the answer treats it so.
        watch_.life = JobWatch::Life::may_run;
    }
    if (!plan_.clean && ahead) ahead->upload_ahead(planned);
    const auto hold_lock = [&] {
        lock_ = LockHold::held;
        account_.started_iso = iso_time(std::time(nullptr));
        if (account_.ledger.empty()) begin_attempt(wall_now());
        record("running", std::nullopt);
    };
    bool acquired = false;
    std::optional<long> pgid;
    {
        // One round trip that a Ctrl+C must not cut: the lock may be taken remotely before
        // the reply is read, and then only a lock known to be ours can be released; the job
        // may be started too, and then only a job known to be started is stopped.
        InterruptDeferral hold;
        acquired = job_->lock(run);
        if (acquired) {
            hold_lock();  // before the start's answer: a failure there keeps it (may run)
            if (current) pgid = ahead->start_sent_ahead();
        }
    }
    if (!acquired) {
        // Its start, sent ahead, found the lock another's and did nothing.
        watch_.life = JobWatch::Life::none;
        run.start_ticket.clear();
        if (!take_over(run)) return Phase::lock;  // released in between: again
        hold_lock();
    }
    if (run.notify) hand_notifications();
    if (!pgid && ahead && ahead->start_claimed()) {
        // A start sent with an earlier lock of this run (its answer lost) claimed it: the job
        // runs, or is about to, with the files it checked; start() reports it (at most once).
        watch_.life = JobWatch::Life::may_run;
        return Phase::start;
    }
    // Not started, and no start sent ahead can start it any more (this lock removed the
    // tickets): on to the upload; a gang's new attempt with its own wrapper (a new rendezvous).
    if (!pgid && gang_.role == GangSeat::Role::new_attempt)
        job_->begin_gang_attempt(run_id_, attempt_, make_wrapper_script(wrapper));
    if (!pgid) watch_.life = JobWatch::Life::none;
    if (!pgid) return plan_.clean ? Phase::clean : Phase::upload;
    SyncResult nothing;
    for (const auto& [base, items] : planned) nothing.unchanged += items.size();
    reporter_.notice("uploaded " + describe(nothing));
    watch_.life = JobWatch::Life::may_run;
    arm_watch();
    // The collection's listing goes with the first follow segment, as after start().
    if (!plan_.no_wait) ahead->collect_ahead_on_guess(plan_, run_id_);
    return launched(*pgid);
}

// The lock is another run's: refused without --force; with it, that run's job is stopped and
// its files discarded. Returns true once the lock is this run's, false to try again.
bool TrainRun::take_over(const NewRun& run) {
    auto jobs = job_->status();
    // Released in between (the holder just finished): try again. A job that lives on without
    // its lock still keeps the model.
    if (jobs.empty() || (!jobs.front().locked && jobs.front().state != JobState::running))
        return false;
    const JobStatus& job = jobs.front();
    if (!plan_.force) throw lock_conflict(job, plan_.model, host());
    const std::string other = job.run_id.empty() ? "" : " (run " + job.run_id + ")";
    reporter_.notice(job.state == JobState::running
                         ? "--force: stopping the running job of " + plan_.model + other
                         : "--force: discarding the " + std::string(to_string(job.state)) +
                               " job of " + plan_.model + other);
    job_->stop(kStopGraceSeconds, nullptr);
    job_->discard();
    InterruptDeferral hold;
    if (!job_->lock(run))
        throw conflict("another mlt took the lock of " + plan_.model + " meanwhile",
                       "see 'mlt ssh ... status " + plan_.model + "'");
    return true;
}

Phase TrainRun::adopt(const JobStatus& job) {
    // A run that failed over from this host goes on elsewhere: taking it up here would give
    // it a second attempt beside that one, and its results would be taken for the run's.
    int skipped = 0;
    const std::vector<nlohmann::json> runs = read_history(history_path(), &skipped);
    refuse_moved_away(runs, job.run_id, job.moved_to, true);
    warn_if_silent(runs, job);
    if (job.state == JobState::uploading && !plan_.spec_here)
        // Refused before the run is adopted: the lock stays as it is, for a machine that has
        // the spec.
        throw usage_error("the run of " + plan_.model + " on " + host() +
                              (job.run_id.empty() ? "" : " (run " + job.run_id + ")") +
                              " was cut while uploading, and uploading again needs the model "
                              "spec, which is not here",
                          "run the same command where the spec is, or give the spec path");
    run_id_ = job.run_id;
    attempt_ = job.attempt;
    lock_ = LockHold::held;
    outcome_.job.exit_status = job.exit_status;
    account_.started_iso = iso_time(job.started > 0 ? job.started : std::time(nullptr));
    // The run's time counts from its start, also what passed before this mlt adopted it,
    // and its earlier attempts (other hosts) stay in its history.
    const double began = job.started > 0 ? static_cast<double>(job.started) : wall_now();
    account_.ledger = RunLedger{};  // what a wait for this host counted is this attempt's own
    account_.ledger.restore(earlier_attempts(runs, run_id_, attempt_, began));
    // A run that came here from another host (a failover) pushes what came home, when its
    // upload is still to come.
    for (const auto& a : account_.ledger.attempts())
        if (a.host != host()) relocation_.where = Relocation::Where::moved;
    begin_attempt(began);
    switch (job.state) {
        case JobState::uploading:
            // The mlt that was cut may have sent a start ahead with its lock: none may start
            // the job once the upload goes on, and one that did leaves nothing to upload.
            if (job_->pipelining() && job_->pipelining()->void_start_tickets(run_id_)) {
                reporter_.notice("continuing " + which() + ": starting its job");
                return Phase::start;
            }
            reporter_.notice("continuing " + which() + ": its upload did not finish");
            return job.clean ? Phase::clean : Phase::upload;
        case JobState::starting:
            reporter_.notice("continuing " + which() + ": starting its job");
            return Phase::start;
        case JobState::running:
            reporter_.notice("reattaching to the running job of " + which());
            watch_.life = JobWatch::Life::may_run;
            reguard(job);
            return Phase::follow;
        case JobState::lost:
            // Collected as lost: finish it. A gang's node is not restarted alone (the others
            // could not meet it): collected, it stops the others; --resume restarts them all.
            if (job.phase == "collected" || gang_) break;
            account_.ledger.end_attempt("lost", wall_now());
            ++attempt_;
            begin_attempt(wall_now());
            reporter_.notice("restarting the lost job of " + which() + " as attempt " +
                             std::to_string(attempt_) +
                             " (its processes are gone and it recorded no exit status)");
            watch_.life = JobWatch::Life::may_run;
            return Phase::restart;
        case JobState::collected:
            reporter_.notice("finishing " + which() + ": its results were collected");
            watch_.life = JobWatch::Life::ended;
            return Phase::shutdown;
        default:
            break;
    }
    reporter_.notice("collecting the finished job of " + which());
    watch_.life = JobWatch::Life::ended;
    return Phase::follow;
}

}  // namespace mlt
