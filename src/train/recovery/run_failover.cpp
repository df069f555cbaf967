// TrainRun::fail_over(): a host lost for good is replaced by the next standby host, and the
// run continues there as the next attempt, from the checkpoints that came home (--restore's
// push). The lost host is left as it is: its lock untouched, for when it comes back.
#include <spdlog/spdlog.h>

#include <filesystem>

#include "mlt/config/settings.h"
#include "mlt/train/local/history.h"
#include "mlt/train/local/log_dir_start.h"
#include "mlt/train/run/checkpoints.h"
#include "mlt/train/run/train_run.h"
#include "mlt/train/watch/gpu_watch.h"
#include "mlt/transfer/progress.h"
#include "mlt/transfer/sync.h"
#include "mlt/util/paths.h"

namespace fs = std::filesystem;

namespace mlt {

namespace {

// The plan's remote bases under the old remote dir move under the new one.
std::map<std::string, std::vector<UploadItem>> rebased(
    std::map<std::string, std::vector<UploadItem>> uploads, const std::string& from,
    const std::string& to) {
    if (from == to) return uploads;
    std::map<std::string, std::vector<UploadItem>> moved;
    for (auto& [base, items] : uploads) {
        std::string b = base;
        if (b == from)
            b = to;
        else if (b.rfind(from + "/", 0) == 0)
            b = to + b.substr(from.size());
        auto& target = moved[b];
        target.insert(target.end(), items.begin(), items.end());
    }
    return moved;
}

// Phases in which the job has not ended yet (or has not started): the run can go on
// elsewhere. Once it ended, its results are on the lost host.
bool before_the_end(Phase phase) {
    switch (phase) {
        case Phase::lock:
        case Phase::clean:
        case Phase::upload:
        case Phase::start:
        case Phase::restart:
        case Phase::follow:
            return true;
        default:
            return false;
    }
}

}  // namespace

bool TrainRun::fail_over(const std::string& why) {
    if (!relocation_.failover || !plan_.failover || !before_the_end(phase_) || watch_.over() ||
        watch_.stop_pending() || outcome_.ending != Ending::completed)
        return false;
    const std::string lost = host();
    const std::string during = describe(phase_);
    // Left by a watch.on_failure rule (leave_host said so), or lost (and judged by the rules).
    const bool left = left_by_rule();
    if (!left && !judge_lost_host(during + why)) return false;
    account_.ledger.end_attempt("host lost", wall_now());
    // No job started there: the next host's start is still the first attempt.
    if (!watch_.started()) account_.ledger.renumber_last(0);
    if (!run_id_.empty()) record("host lost", std::nullopt);
    if (!left) {
        reporter_.alert("host " + lost + " lost while " + during + why +
                        "; looking for a standby host");
        notify(NotifyEventKind::host_lost, "lost while " + during + why);
    }
    // The pulls of --sync-every are the lost host's: what they brought stays, and they end
    // here without a wait for a connect to the lost host that may be under way (joined when
    // the run ends); the follow on the new host starts its own.
    sync_.retire();
    // The budget first: no standby host is taken (or rented) once a limit is reached.
    const std::string limit = limit_reached(wall_now());
    if (!limit.empty()) {
        reporter_.alert("no standby host is taken: " + limit + " is reached");
        return false;
    }
    const std::optional<NextHost> next = relocation_.failover->next(reporter_);
    if (!next) {
        reporter_.alert("no standby host left (fallback_hosts, provision_cmd)");
        return false;
    }
    // A job that may have run on the lost host counts as an attempt; before its start the
    // run just begins elsewhere.
    if (watch_.started()) ++attempt_;
    point_plan_at(*next);
    begin_attempt(wall_now());
    // Recorded before anything is done there: a --resume after a crash from here on knows
    // which host the run went to, as which attempt (cut_failover), and that it left `lost`.
    record("failing over", std::nullopt);
    notify(NotifyEventKind::failover, "from " + lost + " to " + host());
    plan_.resume = false;  // a new lock, on the new host
    plan_.clean = false;   // what came home is what the run continues from
    relocation_.where = Relocation::Where::moved;
    relocation_.came_from = lost;
    lock_ = LockHold::none;
    watch_ = JobWatch{};
    outcome_.job = JobOutcome{};
    outcome_.followed.reset();
    shutdown_ = ShutdownProgress{};
    terminal_.status.clear();
    reporter_.alert("continuing " + which() + " on " + host() + " as attempt " +
                    std::to_string(attempt_) + ": pushing the local log dir " + plan_.local_logs +
                    " (the checkpoints that came home), then starting; " + lost +
                    " is left as it is (its lock too)");
    phase_ = Phase::lock;
    return true;
}

bool TrainRun::judge_lost_host(const std::string& how) {
    if (!watch_.started()) return true;  // no job there: nothing to judge
    const auto verdict =
        judge_failure(plan_.on_failure, attempt_last_lines(plan_.local_console), true);
    if (!verdict || verdict->then == FailureAction::restart) return true;
    outcome_.failure_rule = verdict->describe();
    if (verdict->then == FailureAction::no_restart) {
        reporter_.alert("host " + host() + " lost while " + how +
                        "; no standby host is taken: " + outcome_.failure_rule);
        return false;
    }
    mark_host_bad(false);
    reporter_.alert("host " + host() + " is marked bad for 24 h: " + outcome_.failure_rule);
    return true;
}

void point_plan_at(TrainPlan& plan, const NextHost& next) {
    plan.uploads = rebased(std::move(plan.uploads), plan.remote_dir, next.remote_dir);
    plan.remote_dir = next.remote_dir;
    plan.resume_line = next.resume_line;
    plan.stop_line = next.stop_line;
    // A standby host may name its own price; else the run's goes on.
    if (next.price_per_hour) plan.price_per_hour = *next.price_per_hour;
    // A host that was not rented is the user's: its billing is theirs to mind, and its guard
    // never stops it.
    plan.rented_id = next.rented_id;
    plan.rented = !next.rented_id.empty();
}

void TrainRun::point_plan_at(const NextHost& next) {
    if (next.job) job_ = next.job;
    mlt::point_plan_at(plan_, next);
}

bool TrainRun::resume_where_it_went(const Error& error, const std::vector<nlohmann::json>& runs) {
    if (!plan_.resume || !relocation_.failover || !plan_.spec_here || !is_link_loss(error))
        return false;
    const auto went = run_went_on(runs, plan_.model, host());
    if (!went) return false;
    StandbyHost there;
    try {
        there = parse_standby_host(went->host + "/" + went->remote_dir, "the local history");
    } catch (const Error& e) {
        spdlog::debug("{}", e.what());
        return false;
    }
    there.price_per_hour = went->price_per_hour;
    const std::string lost = host();
    reporter_.alert("cannot reach " + lost + " to resume " + plan_.model + " (" + error.what() +
                    "); its run " + went->run_id + " went on on " + went->host + " after " + lost +
                    " was lost: resuming it there");
    const std::optional<NextHost> next = relocation_.failover->at(there, reporter_);
    if (!next) return false;
    point_plan_at(*next);
    phase_ = Phase::lock;
    return true;
}

void TrainRun::lost_with_dir(const Error& error) {
    spdlog::debug("{}", error.what());
    if (fail_over(": its remote dir is gone (the host was re-imaged or wiped)")) return;
    if (!run_id_.empty()) record("host lost", outcome_.job.exit_status);
    notify(NotifyEventKind::host_lost, "its remote dir is gone (the host was re-imaged or wiped)");
    std::string what = error.what();
    // A job whose end the follow saw: said as it is, its results are what went.
    if (outcome_.followed && outcome_.followed->exit_status)
        what += "; its job had finished with exit status " +
                std::to_string(*outcome_.followed->exit_status) + " before";
    throw Fatal{Error(ErrorKind::gone, what,
                      "continue from the checkpoints that came home in " + plan_.local_logs +
                          " with: " + restore_line())};
}

Phase TrainRun::continue_cut_failover(const std::vector<nlohmann::json>& runs,
                                      const CutFailover& cut) {
    run_id_ = cut.run_id;
    attempt_ = cut.attempt;
    const double now = wall_now();
    account_.ledger.restore(earlier_attempts(runs, run_id_, attempt_, now));
    begin_attempt(now);
    relocation_.where = Relocation::Where::moved;
    relocation_.came_from = cut.from;
    plan_.resume = false;  // a new lock, on this host, for the same run
    plan_.clean = false;   // what came home is what the run continues from
    reporter_.alert("continuing " + which() + " on " + host() + " as attempt " +
                    std::to_string(attempt_) + ": its failover from " + cut.from +
                    " was cut off before it got here; pushing the local log dir " +
                    plan_.local_logs + " (the checkpoints that came home), then starting");
    return take_lock();
}

void TrainRun::refuse_moved_away(const std::vector<nlohmann::json>& runs, const std::string& run_id,
                                 const std::string& marked, bool may_mark) {
    std::string where = marked;
    if (where.empty()) {
        const auto elsewhere = moved_away_from(runs, run_id, host());
        if (!elsewhere) return;
        where = *elsewhere;
        // Said on the host too: a --resume from a machine that never saw the failover is
        // refused there as well.
        if (may_mark) try {
                job_->mark_moved(run_id, where);
            } catch (const Error& e) {
                reporter_.warning("could not mark the lock of run " + run_id + " on " + host() +
                                  " as moved: " + e.what());
            }
    }
    throw Error(
        ErrorKind::conflict,
        "run " + run_id + " of " + plan_.model + " continued on " + where + " after " + host() +
            " was lost; resuming it here would run it twice",
        "continue it on " + where +
            (may_mark ? "; 'download " + plan_.model + "' pulls what this host kept, and 'stop " +
                            plan_.model + "' here (or train --force) discards it"
                      : std::string()));
}

void TrainRun::warn_if_silent(const std::vector<nlohmann::json>& runs, const JobStatus& job) {
    // This machine knows the runs it failed over; another machine's failover it cannot see.
    // Only a job that would train here (a finished one is just collected).
    const bool trains = job.state == JobState::running || job.state == JobState::lost ||
                        job.state == JobState::uploading || job.state == JobState::starting;
    if (!trains || knows_run(runs, job.run_id) || job.logged <= 0 || job.remote_now <= 0) return;
    const long silent = job.remote_now - job.logged;
    if (silent <= plan_.reconnect_timeout_s) return;
    reporter_.alert("run " + job.run_id + " of " + plan_.model + " on " + host() +
                    " has written nothing for " + format_duration(static_cast<double>(silent)) +
                    ", longer than reconnect_timeout, and this machine has no record of it: if "
                    "the mlt that started it failed it over to another host, it continues "
                    "there, and resuming it here would train it twice (Ctrl+C now to leave it)");
}

std::string TrainRun::restore_line() const {
    std::string restore = plan_.resume_line;
    const std::string resume = " --resume";
    if (restore.size() > resume.size() &&
        restore.compare(restore.size() - resume.size(), resume.size(), resume) == 0)
        restore.replace(restore.size() - resume.size(), resume.size(), " --restore");
    return restore;
}

void TrainRun::open_run() {
    // A retry after a lost link keeps it.
    if (run_id_.empty()) run_id_ = plan_.run_id.empty() ? new_run_id() : plan_.run_id;
    // Before anything of this run comes home: a move or a gang's restart pushes only this run's.
    if (attempt_ == 1 && !relocation_.moved() && gang_.role == GangSeat::Role::first_attempt)
        record_log_dir_at_start(plan_.local_state_dir, run_id_, plan_.local_logs, plan_.restore);
}

std::optional<std::set<std::string>> TrainRun::not_this_runs() const {
    // The --restore a new run began with pushes what the user gave it: all of it.
    if (plan_.restore && !relocation_.moved() && gang_.role == GangSeat::Role::first_attempt)
        return std::set<std::string>{};
    auto earlier = earlier_log_files(plan_.local_state_dir, run_id_, plan_.local_logs);
    if (!earlier && !relocation_.unknown_logs_said) {
        relocation_.unknown_logs_said = true;
        reporter_.warning("what came home in " + plan_.local_logs + " cannot be told apart from " +
                          "earlier runs' files there (no record of what it held when run " +
                          run_id_ + " began): none of it is pushed, and the training starts " +
                          "over; to push it, stop and start a new run with --restore");
    }
    return earlier;
}

std::map<std::string, std::vector<UploadItem>> TrainRun::uploads() const {
    auto all = plan_.uploads;
    if (!plan_.restore && !relocation_.moved()) return all;
    const auto earlier = not_this_runs();
    const JobPaths paths(plan_.model);
    // The local log dir, less what is mlt's own there: the console copy (pushed as the job's
    // console log after a failover), MLTK's CLI log, the staging dir of pulls, the local copy
    // of the checkpoints' ledger (it goes as the seed).
    const fs::path console(plan_.local_console);
    std::error_code ec;
    if (fs::is_directory(plan_.local_logs, ec)) {
        auto& restore = all[remote_path_in(plan_.remote_dir, paths.restore)];
        for (auto& item : expand_local_glob(plan_.local_logs, "**")) {
            const std::string& r = item.remote_path;
            if (r.rfind(std::string(kPullStaging) + "/", 0) == 0) continue;
            if (console.parent_path() == fs::path(plan_.local_logs) &&
                r == console.filename().string())
                continue;
            if (plan_.mltk_train && r == "train.log") continue;
            if (r == kMetricsFile) continue;  // this machine's record of the run
            if (plan_.checkpoints.on() && r == kLocalLedger) continue;
            if (!earlier || earlier->count(r)) continue;  // an earlier run's, or not known
            restore.push_back(std::move(item));
        }
        // What the earlier host's ledger knew of the checkpoints pushed: which are whole, and
        // their metrics, for the new host's guard and the attempt's MLT_CHECKPOINT.
        const std::string seed = checkpoint_seed(plan_.local_logs, plan_.checkpoints, restore);
        if (!seed.empty()) {
            const std::string local =
                plan_.local_state_dir + "/ckpt.seed." + std::to_string(gang_.rank);
            write_file_atomic(local, seed, 0600);
            all[remote_path_in(plan_.remote_dir, paths.dir)].push_back({local, "ckpt.seed"});
        }
    }
    if (relocation_.moved() && fs::is_regular_file(plan_.local_console, ec))
        all[remote_path_in(plan_.remote_dir, paths.dir)].push_back(
            {plan_.local_console, fs::path(paths.console_log).filename().string()});
    return all;
}

}  // namespace mlt
