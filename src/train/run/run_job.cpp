// TrainRun's phases that act on the job once the lock is held: clean, upload, start, follow
// (its console to the terminal and the local copy, watched), collect, shutdown, release.
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

Phase TrainRun::clean() {
    std::error_code ec;
    fs::remove_all(plan_.local_logs, ec);
    fs::remove(plan_.local_archive, ec);
    // A log dir the settings name goes now (prepare() checked it is the model's own); the
    // one the remote MLTK names is cleaned by the job once it knows it.
    job_->clean(plan_.archive, plan_.remote_log_dir);
    reporter_.notice("--clean: removed the local logs and archive of " + plan_.model +
                     (plan_.remote_log_dir.empty()
                          ? "; the remote log dir is cleaned when the job starts"
                          : ", and the remote ones"));
    return Phase::upload;
}

Phase TrainRun::upload() {
    if (limit_blocks_start()) return Phase::release;
    const SyncResult sent = job_->upload(uploads());
    outcome_.up.files += sent.moved.files;
    outcome_.up.bytes += sent.moved.bytes;
    reporter_.notice("uploaded " + describe(sent));
    return Phase::start;
}

Phase TrainRun::start() {
    if (limit_blocks_start()) return Phase::release;
    if (gang_) gang_.wait_for_all();  // every node set up before any job starts
    release_.retake_if_unread(*job_, run_id_);
    watch_.life = JobWatch::Life::may_run;
    // The first follow segment travels with the start's command (follow() asks for exactly
    // it: offset 0, as the local copy starts empty below).
    arm_watch();
    release_.arm(*job_, plan_, static_cast<bool>(gang_));
    if (JobPipelining* const ahead = job_->pipelining(); ahead && !plan_.no_wait) {
        ahead->follow_ahead(Task::job, &run_id_, 0, segment_seconds());
        // A short job ends within it: the collection's listing then comes, on a guess (a job
        // that runs on, or records an archive, skips its reply once).
        ahead->collect_ahead_on_guess(plan_, run_id_);
    }
    // Until the start's answer is read, a follow that carries the release is out: after a
    // lost link it may still release at the job's end.
    const long pgid = release_.carry(!plan_.no_wait, [&] {
        // One bounded round trip that must not be cut by a Ctrl+C: the job may be launched
        // before the reply is read. The Ctrl+C is handled right after, with the job known.
        InterruptDeferral hold;
        return job_->start(run_id_);
    });
    // follow() reads the follow sent ahead, unless another command goes first.
    release_.follow_sent_ahead(!plan_.no_wait);
    return launched(pgid);
}

Phase TrainRun::launched(long pgid) {
    reporter_.notice("started " + plan_.model + " on " + host() + " (run " + run_id_ +
                     (attempt_ > 1 ? ", attempt " + std::to_string(attempt_) : "") +
                     ", process group " + std::to_string(pgid) + ")");
    terminal_.local.open(run_id_);  // a new run: the local copy starts empty
    terminal_.shown = ConsoleFilter(plan_.raw_console);
    notify(NotifyEventKind::started);
    if (!plan_.no_wait) return Phase::follow;
    reporter_.notice("not waiting; reattach with: " + plan_.resume_line);
    if (plan_.unattended_shutdown_minutes > 0 && !plan_.shutdown_cmds.empty() && !gang_)
        reporter_.notice("if no mlt collects the run within " +
                         number_text(plan_.unattended_shutdown_minutes) +
                         " min of the job's end, the guard on " + host() +
                         " runs shutdown_cmds (unattended_shutdown_minutes)");
    else
        reporter_.notice("nothing stops " + host() + " or runs shutdown_cmds when the job ends, " +
                         "until an mlt collects the run (unattended_shutdown_minutes lets the "
                         "guard on the host run shutdown_cmds)");
    outcome_.ending = Ending::detached;
    return Phase::done;
}

Phase TrainRun::follow() {
    if (gang_) check_gang();
    check_budget();
    if (watch_.stop_pending()) {
        // The stop goes first: a follow sent ahead is dropped unread, and may still release.
        release_.drop_ahead();
        watch_.stop = JobWatch::Stop::sent;
        job_->stop(kStopGraceSeconds, &run_id_);
        watch_.stop = JobWatch::Stop::done;
    }
    start_sync();
    const uint64_t offset = terminal_.local.open(run_id_);
    arm_watch();
    release_.arm(*job_, plan_, static_cast<bool>(gang_));
    const auto show = [&](std::string_view d) {
        terminal_.local.append(d);  // the record first, every byte
        reporter_.console(terminal_.shown.feed(d));
    };
    // --resume --no-wait is MLTK's poll: what is new in the console log now, and back at once
    // while the job runs; a job that has ended is collected as usual.
    const bool poll = plan_.resume && plan_.no_wait;
    show_cost();
    // Its answer lost (a lost link), a follow that carries the release may still release at
    // the job's end: the lock is taken back before the collection (retake_if_unread).
    const FollowStep seen = release_.carry(true, [&] {
        return job_->follow(Task::job, &run_id_, offset, poll ? 0 : segment_seconds(), show);
    });
    // It released the lock, or another follow of the run did (a lost one): then the lock is
    // back before the collection.
    release_.seen(seen);
    if (seen.ended) {
        terminal_.status.clear();
        return after_the_job(seen.result);
    }
    if (!poll) return Phase::follow;  // the next segment
    reporter_.notice("the job of " + which() + " is still running; look again with: " +
                     plan_.resume_line + " --no-wait; or wait for it with: " + plan_.resume_line);
    outcome_.ending = Ending::detached;
    return Phase::done;
}

Phase TrainRun::collect() {
    stop_sync();  // the collection pulls into the same local dir
    release_.retake_if_unread(*job_, run_id_);
    // The follow's last segment read the result and recorded phase finished; a retry (after
    // a lost link) asks again.
    const std::optional<JobResult> followed = std::exchange(outcome_.followed, std::nullopt);
    const JobResult result = followed ? *followed : job_->result();
    if (result.run_id != run_id_)
        throw foreign_run(host(), plan_.model, run_id_,
                          "the job files belong to run '" + result.run_id + "'");
    const auto& status = result.exit_status;
    outcome_.job.exit_status = status;
    outcome_.job.setup_failed = status && *status != 0 && !result.training_started;
    outcome_.job.stopped_by_mlt = result.stopped_with.has_value() && result.stopped_with == status;
    if (!result.guard_stop.empty()) note_guard_stop(result.guard_stop);
    watchers_.host_notifies = result.host_notifies;
    if (result.shutdown_unattended) {
        outcome_.shutdown_by = RunOutcome::ShutdownBy::host_guard;
        notify(NotifyEventKind::unattended_shutdown,
               "no mlt collected the run in time (unattended_shutdown_minutes)", status);
    }
    // A node whose job failed stops the others (as soon as they look, every few seconds).
    if (gang_ && (!status || *status != 0) && !outcome_.job.stopped_by_mlt)
        gang_.gang->fail(gang_.rank, host(), status.value_or(1), gang_cause(result));
    if (result.disk_full)
        reporter_.warning("no space left on the remote: the disk of " + plan_.remote_dir + " on " +
                          host() + " is full; what the job of " + which() +
                          " wrote last may be missing (free space there)");
    else if (!status)
        reporter_.warning("the job of " + which() +
                          " ended without recording an exit status (killed by SIGKILL, or the host "
                          "restarted)" +
                          ((outcome_.restarts == RunOutcome::Restarts::used_up)
                               ? "; not restarted: the " + std::to_string(plan_.max_restarts) +
                                     " restart(s) of max_restarts are used up"
                               : std::string()));
    if (release_.released() && collected_with_release(result)) {
        // The follow released the lock with the logs home: nothing more to ask the remote.
        outcome_.collected = Collected::results;
        sync_.throw_if_tampered();
        return Phase::shutdown;
    }
    if (!followed) job_->set_phase(run_id_, RunPhase::finished);
    const TransferStats got = job_->collect(plan_, result, reporter_);
    outcome_.down.files += got.files;
    outcome_.down.bytes += got.bytes;
    outcome_.collected = result.sha256.empty() ? Collected::results : Collected::with_archive;
    shutdown_.record = ShutdownProgress::Record::collected;
    sync_.throw_if_tampered();
    return Phase::shutdown;
}

Phase TrainRun::shutdown() {
    if (plan_.shutdown_cmds.empty()) return Phase::release;
    // A gang that restarts after a lost node needs this host on: its shutdown_cmds wait for
    // the run's real end.
    if (gang_ && gang_.holds_shutdown()) {
        reporter_.notice("shutdown_cmds not run: the gang restarts after a lost node");
        return Phase::release;
    }
    if (shutdown_.start != ShutdownProgress::Start::following) {
        const bool sent_before = shutdown_.start == ShutdownProgress::Start::sent;
        shutdown_.start = ShutdownProgress::Start::sent;
        const bool fresh = job_->start_shutdown(
            run_id_, shutdown_script(), shutdown_.record == ShutdownProgress::Record::collected);
        // Recorded (a cut before this records it again).
        shutdown_.record = ShutdownProgress::Record::nothing;
        if (!fresh && !sent_before) {
            // Started by an earlier mlt of this run (a failure, or a cut before --resume):
            // never twice. If it ended, its output was shown then.
            if (auto status = job_->shutdown_status()) {
                const bool by_guard = outcome_.shutdown_by == RunOutcome::ShutdownBy::host_guard;
                reporter_.notice("shutdown_cmds of run " + run_id_ + " already ran" +
                                 (by_guard ? " unattended, by the guard on " + host() +
                                                 " (unattended_shutdown_minutes)"
                                           : std::string()) +
                                 " (exit status " + std::to_string(*status) + ")");
                return Phase::release;
            }
        }
        shutdown_.start = ShutdownProgress::Start::following;
    }
    // Counted as shown, so that a segment cut halfway goes on after what was shown.
    const FollowStep seen = job_->follow(Task::shutdown, &run_id_, shutdown_.offset,
                                         kFollowSegmentSeconds, [&](std::string_view d) {
                                             shutdown_.offset += d.size();
                                             reporter_.console(terminal_.shutdown_shown.feed(d));
                                         });
    if (!seen.ended) return Phase::shutdown;
    const auto status = seen.result ? seen.result->exit_status : job_->shutdown_status();
    if (!status || *status != 0)
        reporter_.warning("shutdown_cmds of " + plan_.model + " failed (exit status " +
                          (status ? std::to_string(*status) : std::string("none")) +
                          "); the run's own status stands");
    return Phase::release;
}

std::string TrainRun::shutdown_script(bool unattended) const {
    return make_shutdown_script(
        {plan_.model, run_id_, plan_.environment, plan_.create_venv, plan_.shutdown_cmds,
         unattended ? plan_.unattended_release : std::string(), plan_.rented_id});
}

Phase TrainRun::release() {
    if (!release_.released()) job_->release(run_id_);
    lock_ = LockHold::released;
    return Phase::done;
}

}  // namespace mlt
