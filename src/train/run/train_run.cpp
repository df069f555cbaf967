// TrainRun: the phases of one run on one node (docs/architecture.md, "Phases of a run").
// What happens when the link drops is in run_reconnect.cpp, when a signal arrives in
// run_signals.cpp, when a phase fails for good in run_cleanup.cpp, when the job was lost in
// run_restart.cpp; what a job left comes home in collect.cpp.
#include "mlt/train/run/train_run.h"

#include <poll.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <random>
#include <utility>

#include "mlt/train/local/history.h"
#include "mlt/transfer/transfer.h"
#include "mlt/util/interrupt.h"
#include "mlt/util/text.h"

namespace fs = std::filesystem;

namespace mlt {

namespace {

class SteadyClock : public RunClock {
  public:
    double now() override {
        return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
            .count();
    }
    void sleep(double seconds) override {
        // poll() without descriptors: returns early with EINTR when a signal arrives.
        ::poll(nullptr, 0, static_cast<int>(std::lround(seconds * 1000)));
    }
};

RunObserver* g_observer = nullptr;

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

const char* describe(Phase phase) {
    switch (phase) {
        case Phase::connect:
            return "connecting";
        case Phase::lock:
            return "taking the job lock";
        case Phase::clean:
            return "cleaning";
        case Phase::upload:
            return "uploading";
        case Phase::start:
            return "starting the job";
        case Phase::restart:
            return "restarting the job";
        case Phase::follow:
            return "following the log";
        case Phase::collect:
            return "collecting the results";
        case Phase::shutdown:
            return "running shutdown_cmds";
        case Phase::release:
            return "releasing the job lock";
        case Phase::done:
            return "done";
    }
    return "?";
}

RunClock& real_clock() {
    static SteadyClock clock;
    return clock;
}

RunObserver* installed_run_observer() {
    return g_observer;
}

void install_run_observer(RunObserver* observer) {
    g_observer = observer;
}

std::string new_run_id() {
    std::random_device rd;
    char buf[32];
    std::snprintf(buf, sizeof buf, "%lx-%06x", static_cast<long>(std::time(nullptr)),
                  static_cast<unsigned>(rd()) & 0xffffffu);
    return buf;
}

TrainRun::TrainRun(Connection& connection, RemoteJob& job, TrainPlan plan, Reporter& reporter,
                   RunClock& clock, RunObserver* observer, Failover* failover)
    : connection_(connection),
      job_(job),
      plan_(std::move(plan)),
      reporter_(reporter),
      clock_(clock),
      observer_(observer),
      console_(plan_.local_console, plan_.local_state_dir),
      shown_(plan_.raw_console),
      shutdown_shown_(plan_.raw_console),
      status_(reporter_),
      failover_(failover),
      rules_(plan_.stop_when) {
    const auto epoch = std::chrono::system_clock::now().time_since_epoch();
    wall_offset_ = std::chrono::duration<double>(epoch).count() - clock_.now();
}

TrainRun::~TrainRun() {
    stop_sync();
}

int TrainRun::run() {
    begin();
    while (advance()) {
    }
    return exit_code();
}

void TrainRun::begin() {
    phase_ = Phase::connect;
    try {
        connection_.remote();  // the first connection: a refused one is the user's to fix
    } catch (const Error& e) {
        // A --resume, by what the local history (read once) says of the model's newest run:
        // one that went on elsewhere is resumed there, or refused as it would be if this
        // host answered; one on this host takes the host as lost, as if the link had gone.
        if (plan_.resume && !is_signal(e.kind())) {
            int skipped = 0;
            const auto runs = read_history(history_path(), &skipped);
            if (resume_where_it_went(e, runs)) return;
            try {
                if (const auto id = newest_run_id(runs, plan_.model))
                    refuse_moved_away(runs, *id, "", false);
            } catch (const Error& refused) {
                exit_code_ = refused.code();
                throw;
            }
            if (resume_unreachable(e, runs)) return;
        }
        exit_code_ = e.code();  // over, either way
        if (!is_signal(e.kind())) throw;
        return;
    }
    phase_ = Phase::lock;
}

bool TrainRun::resume_unreachable(const Error& error, const std::vector<nlohmann::json>& runs) {
    if (!plan_.resume || !plan_.failover || !failover_ || !plan_.spec_here || !is_link_loss(error))
        return false;
    const auto here = unfinished_run_on(runs, plan_.model, host());
    if (!here) return false;
    run_id_ = here->run_id;
    attempt_ = std::max(1, here->attempt);
    ledger_.restore(earlier_attempts(runs, run_id_, here->attempt, here->start));
    begin_attempt(here->start);
    if (here->attempt > 0 && !here->failing_over) watch_.life = JobWatch::Life::may_run;
    reporter_.alert("cannot reach " + host() + " to resume " + which() + " (" + error.what() +
                    "); waiting for it as for a lost link, then failing over");
    phase_ = Phase::lock;
    return true;
}

bool TrainRun::advance() {
    if (over()) return false;
    try {
        std::optional<Error> error;
        try {
            phase_ = step();
        } catch (const Error& e) {
            error = e;
        }
        if (error) exit_code_ = handle(*error);
        if (!over() && phase_ == Phase::done) exit_code_ = finish();
        if (over()) stop_sync();
    } catch (const Fatal& fatal) {
        stop_sync();
        exit_code_ = fatal.error.code();
        summarize(&fatal.error);
        throw fatal.error;
    }
    if (over()) summarize(nullptr);
    return !over();
}

std::optional<int> TrainRun::handle(Error error) {
    // Handling an error may raise the next one (a signal while reconnecting, a host key that
    // changed): each goes through the same decisions.
    for (;;) {
        try {
            if (is_signal(error.kind())) return on_signal(error);
            if (error.kind() == ErrorKind::gone) {
                lost_with_dir(error);
                return std::nullopt;
            }
            if (!is_link_loss(error)) throw Fatal{fail_cleanup(error)};
            reconnect(error);
            return std::nullopt;
        } catch (const Error& next) {
            error = next;
        }
    }
}

int TrainRun::finish() {
    if (ending_ == Ending::detached) {
        record("detached", std::nullopt);
        end_note_ = "its job runs on " + host() + " (not waited for)";
        return exit_code::kOk;
    }
    if (ending_ == Ending::limited && !watch_.started()) {
        ledger_.end_attempt("limit", wall_now());
        record("limit", std::nullopt);
        end_note_ = "stopped by " + stop_note_ + " before its job started on " + host();
        if (moved_)
            end_note_ += "; continue from the checkpoints that came home in " + plan_.local_logs +
                         " with: " + restore_line();
        return exit_code::kLimit;
    }
    const auto& status = outcome_.exit_status;
    // A limit's stop that came after the job had ended by itself stopped nothing.
    const bool limited = ending_ == Ending::limited && (outcome_.stopped_by_mlt || !status);
    const bool ruled = ending_ == Ending::ruled && (outcome_.stopped_by_mlt || !status);
    const bool interrupted = ending_ == Ending::interrupted;
    const int code =
        interrupted
            ? exit_code::kInterrupted
            : (limited ? exit_code::kLimit
                       : (ruled ? exit_code::kRuled : training_exit_code(status.value_or(1))));
    // A job that ended without a status of its own (and was not stopped) was lost.
    const std::string how =
        interrupted
            ? "stopped"
            : (limited ? "limit"
                       : (ruled ? "rule" : (code == 0 ? "success" : (status ? "failed" : "lost"))));
    ledger_.end_attempt(how, wall_now());
    record(how, status);
    end_note_ =
        plan_.model +
        (outcome_.setup_failed
             ? " did not start training: its setup (environment, venv or startup_cmds) ended with "
             : " finished with ") +
        (status ? describe_exit_status(*status, outcome_.stopped_by_mlt)
                : std::string("no exit status"));
    if (status && !interrupted && !limited && !ruled && code != *status)
        end_note_ += "; the training exited " + std::to_string(*status) + ", mlt exits " +
                     std::to_string(code) + " (" + std::to_string(*status) +
                     " is one of mlt's own exit codes)";
    if (interrupted) end_note_ = "stopped by Ctrl+C: " + end_note_;
    if (limited || ruled) end_note_ = "stopped by " + stop_note_ + ": " + end_note_;
    return code;
}

Phase TrainRun::step() {
    if (observer_) observer_->entering(phase_);
    switch (phase_) {
        case Phase::lock:
            return take_lock();
        case Phase::clean:
            return clean();
        case Phase::upload:
            return upload();
        case Phase::start:
            return start();
        case Phase::restart:
            return restart();
        case Phase::follow:
            return follow();
        case Phase::collect:
            return collect();
        case Phase::shutdown:
            return shutdown();
        case Phase::release:
            return release();
        case Phase::connect:
        case Phase::done:
            break;
    }
    return phase_;
}

std::string TrainRun::which() const {
    return plan_.model + " (run " + (run_id_.empty() ? "-" : run_id_) + ")";
}

Phase TrainRun::resume_lock() {
    auto jobs = job_.status();
    if (!jobs.empty() && !jobs.front().locked && resume_released(jobs.front().run_id))
        jobs = job_.status();
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
    job_.prepare();  // the control shell's channel opens while the run is planned
    if (plan_.resume) return resume_lock();
    if (run_id_.empty()) run_id_ = new_run_id();  // a retry after a lost link keeps it
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
               came_from_};
    // The upload's listings travel with the lock's command (--clean removes files between),
    // and so does the start, on the condition that the listings will find nothing to send:
    // a run whose files are all there starts in the lock's round trip. (Not for a gang,
    // whose nodes all upload before any starts.)
    const auto planned = uploads();
    std::optional<std::string> current;
    if (!plan_.clean && !gang_) current = uploads_current_test(planned);
    if (current) {
        run.start_ticket = random_token();
        job_.start_ahead_if_current(run_id_, run.start_ticket, *current);
        // From the write on, the job may run: a Ctrl+C, a failure or a failover that comes
        // before the answer treats it so.
        watch_.life = JobWatch::Life::may_run;
    }
    if (!plan_.clean) job_.upload_ahead(planned);
    const auto hold_lock = [&] {
        lock_ = LockHold::held;
        started_iso_ = iso_time(std::time(nullptr));
        if (ledger_.empty()) begin_attempt(wall_now());
        record("running", std::nullopt);
    };
    bool acquired = false;
    std::optional<long> pgid;
    {
        // One round trip that a Ctrl+C must not cut: the lock may be taken remotely before
        // the reply is read, and then only a lock known to be ours can be released; the job
        // may be started too, and then only a job known to be started is stopped.
        InterruptDeferral hold;
        acquired = job_.lock(run);
        if (acquired) {
            hold_lock();  // before the start's answer: a failure there keeps it (may run)
            pgid = job_.start_sent_ahead();
        }
    }
    if (!acquired) {
        // Its start, sent ahead, found the lock another's and did nothing.
        watch_.life = JobWatch::Life::none;
        run.start_ticket.clear();
        if (!take_over(run)) return Phase::lock;  // released in between: again
        hold_lock();
    }
    if (!pgid && job_.start_claimed()) {
        // A start sent with an earlier lock of this run (its answer lost) claimed it: the job
        // runs, or is about to, with the files it checked; start() reports it (at most once).
        watch_.life = JobWatch::Life::may_run;
        return Phase::start;
    }
    // Not started, and no start sent ahead can start it any more (this lock removed the
    // tickets): on to the upload.
    if (!pgid && gang_attempt_) job_.begin_gang_attempt(run_id_, attempt_);
    if (!pgid) watch_.life = JobWatch::Life::none;
    if (!pgid) return plan_.clean ? Phase::clean : Phase::upload;
    SyncResult nothing;
    for (const auto& [base, items] : planned) nothing.unchanged += items.size();
    reporter_.notice("uploaded " + describe(nothing));
    watch_.life = JobWatch::Life::may_run;
    arm_watch();
    // The collection's listing goes with the first follow segment, as after start().
    if (!plan_.no_wait) job_.collect_ahead_on_guess(plan_, run_id_);
    return launched(*pgid);
}

// The lock is another run's: refused without --force; with it, that run's job is stopped and
// its files discarded. Returns true once the lock is this run's, false to try again.
bool TrainRun::take_over(const NewRun& run) {
    auto jobs = job_.status();
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
    job_.stop(kStopGraceSeconds, nullptr);
    job_.discard();
    InterruptDeferral hold;
    if (!job_.lock(run))
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
    outcome_.exit_status = job.exit_status;
    started_iso_ = iso_time(job.started > 0 ? job.started : std::time(nullptr));
    // The run's time counts from its start, also what passed before this mlt adopted it,
    // and its earlier attempts (other hosts) stay in its history.
    const double began = job.started > 0 ? static_cast<double>(job.started) : wall_now();
    ledger_ = RunLedger{};  // what a wait for this host counted is this attempt's own
    ledger_.restore(earlier_attempts(runs, run_id_, attempt_, began));
    // A run that came here from another host (a failover) pushes what came home, when its
    // upload is still to come.
    for (const auto& a : ledger_.attempts()) moved_ = moved_ || a.host != host();
    begin_attempt(began);
    switch (job.state) {
        case JobState::uploading:
            // The mlt that was cut may have sent a start ahead with its lock: none may start
            // the job once the upload goes on, and one that did leaves nothing to upload.
            if (job_.void_start_tickets(run_id_)) {
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
            return Phase::follow;
        case JobState::lost:
            // Collected as lost: finish it. A gang's node is not restarted alone (the others
            // could not meet it): collected, it stops the others; --resume restarts them all.
            if (job.phase == "collected" || gang_) break;
            ledger_.end_attempt("lost", wall_now());
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

Phase TrainRun::clean() {
    std::error_code ec;
    fs::remove_all(plan_.local_logs, ec);
    fs::remove(plan_.local_archive, ec);
    // A log dir the settings name goes now (prepare() checked it is the model's own); the
    // one the remote MLTK names is cleaned by the job once it knows it.
    job_.clean(plan_.archive, plan_.remote_log_dir);
    reporter_.notice("--clean: removed the local logs and archive of " + plan_.model +
                     (plan_.remote_log_dir.empty()
                          ? "; the remote log dir is cleaned when the job starts"
                          : ", and the remote ones"));
    return Phase::upload;
}

Phase TrainRun::upload() {
    if (limit_blocks_start()) return Phase::release;
    const SyncResult sent = job_.upload(uploads());
    up_.files += sent.moved.files;
    up_.bytes += sent.moved.bytes;
    reporter_.notice("uploaded " + describe(sent));
    return Phase::start;
}

Phase TrainRun::start() {
    if (limit_blocks_start()) return Phase::release;
    if (gang_) wait_for_gang();  // every node set up before any job starts
    retake_if_unread();
    watch_.life = JobWatch::Life::may_run;
    // The first follow segment travels with the start's command (follow() asks for exactly
    // it: offset 0, as the local copy starts empty below).
    arm_watch();
    arm_release();
    const bool lost_before = release_unread_;
    if (!plan_.no_wait) {
        // Until the start's answer is read, a follow that carries the release is out: after
        // a lost link it may still release at the job's end.
        release_unread_ = release_unread_ || release_armed_;
        job_.follow_ahead(Task::job, &run_id_, 0, segment_seconds());
        // A short job ends within it: the collection's listing then comes, on a guess (a job
        // that runs on, or records an archive, skips its reply once).
        job_.collect_ahead_on_guess(plan_, run_id_);
    }
    long pgid = 0;
    {
        // One bounded round trip that must not be cut by a Ctrl+C: the job may be launched
        // before the reply is read. The Ctrl+C is handled right after, with the job known.
        InterruptDeferral hold;
        pgid = job_.start(run_id_);
    }
    // follow() reads the follow sent ahead, unless another command goes first.
    release_unread_ = lost_before;
    follow_ahead_unread_ = release_armed_ && !plan_.no_wait;
    return launched(pgid);
}

Phase TrainRun::launched(long pgid) {
    reporter_.notice("started " + plan_.model + " on " + host() + " (run " + run_id_ +
                     (attempt_ > 1 ? ", attempt " + std::to_string(attempt_) : "") +
                     ", process group " + std::to_string(pgid) + ")");
    console_.open(run_id_);  // a new run: the local copy starts empty
    shown_ = ConsoleFilter(plan_.raw_console);
    if (!plan_.no_wait) return Phase::follow;
    reporter_.notice("not waiting; reattach with: " + plan_.resume_line);
    ending_ = Ending::detached;
    return Phase::done;
}

Phase TrainRun::follow() {
    if (gang_) check_gang();
    check_budget();
    if (watch_.stop_pending()) {
        // The stop goes first: a follow sent ahead is dropped unread, and may still release.
        release_unread_ = release_unread_ || std::exchange(follow_ahead_unread_, false);
        watch_.stop = JobWatch::Stop::sent;
        job_.stop(kStopGraceSeconds, &run_id_);
        watch_.stop = JobWatch::Stop::done;
    }
    start_sync();
    const uint64_t offset = console_.open(run_id_);
    if (!rules_primed_) prime_rules(offset);
    arm_watch();
    arm_release();
    const auto show = [&](std::string_view d) {
        console_.append(d);  // the record first, every byte
        reporter_.console(shown_.feed(d));
        // A rule that stops the job cuts the segment short: the stop goes out at once.
        if (auto hit = rules_.feed(d); hit && stop_by_rule(*hit)) throw RuleFired{};
    };
    // --resume --no-wait is MLTK's poll: what is new in the console log now, and back at once
    // while the job runs; a job that has ended is collected as usual.
    const bool poll = plan_.resume && plan_.no_wait;
    show_cost();
    FollowStep seen;
    try {
        // Its answer lost (a lost link, a rule that cut it short), a follow that carries the
        // release may still release at the job's end: the lock is taken back before the
        // collection (retake_if_unread).
        const bool lost_before = release_unread_;
        release_unread_ = lost_before || release_armed_;
        follow_ahead_unread_ = false;
        seen = job_.follow(Task::job, &run_id_, offset, poll ? 0 : segment_seconds(), show);
        release_unread_ = lost_before;
    } catch (const RuleFired&) {
        status_.clear();
        return Phase::follow;  // the stop first, then the follow on from the local copy
    }
    if (seen.ended && seen.result && seen.result->released) released_ahead_ = true;
    // Another follow of the run released the lock (a lost one): back before the collection.
    if (seen.ended && seen.result && seen.result->lock_gone) release_unread_ = true;
    if (seen.ended) {
        status_.clear();
        if (restart_lost(seen.result)) return Phase::restart;
        watch_.life = JobWatch::Life::ended;
        followed_ = seen.result;
        return Phase::collect;
    }
    if (!poll) return Phase::follow;  // the next segment
    reporter_.notice("the job of " + which() + " is still running; look again with: " +
                     plan_.resume_line + " --no-wait; or wait for it with: " + plan_.resume_line);
    ending_ = Ending::detached;
    return Phase::done;
}

Phase TrainRun::collect() {
    stop_sync();  // the collection pulls into the same local dir
    retake_if_unread();
    // The follow's last segment read the result and recorded phase finished; a retry (after
    // a lost link) asks again.
    const std::optional<JobResult> followed = std::exchange(followed_, std::nullopt);
    const JobResult result = followed ? *followed : job_.result();
    if (result.run_id != run_id_)
        throw foreign_run(host(), plan_.model, run_id_,
                          "the job files belong to run '" + result.run_id + "'");
    const auto& status = result.exit_status;
    outcome_.exit_status = status;
    outcome_.setup_failed = status && *status != 0 && !result.training_started;
    outcome_.stopped_by_mlt = result.stopped_with.has_value() && result.stopped_with == status;
    // A node whose job failed stops the others (as soon as they look, every few seconds).
    if (gang_ && (!status || *status != 0) && !outcome_.stopped_by_mlt)
        gang_->fail(rank_, host(), status.value_or(1), status.has_value());
    if (result.disk_full)
        reporter_.warning("no space left on the remote: the disk of " + plan_.remote_dir + " on " +
                          host() + " is full; what the job of " + which() +
                          " wrote last may be missing (free space there)");
    else if (!status)
        reporter_.warning("the job of " + which() +
                          " ended without recording an exit status (killed by SIGKILL, or the host "
                          "restarted)" +
                          (restarts_used_up_
                               ? "; not restarted: the " + std::to_string(plan_.max_restarts) +
                                     " restart(s) of max_restarts are used up"
                               : std::string()));
    if (released_ahead_ && collected_with_release(result)) {
        // The follow released the lock with the logs home: nothing more to ask the remote.
        collected_ = true;
        throw_if_sync_tampered();
        return Phase::shutdown;
    }
    if (!followed) job_.set_phase(run_id_, RunPhase::finished);
    const TransferStats got = job_.collect(plan_, result, reporter_);
    down_.files += got.files;
    down_.bytes += got.bytes;
    collected_ = true;
    archive_collected_ = !result.sha256.empty();
    shutdown_.record_collected = true;
    throw_if_sync_tampered();
    return Phase::shutdown;
}

Phase TrainRun::shutdown() {
    if (plan_.shutdown_cmds.empty()) return Phase::release;
    if (!shutdown_.following) {
        const bool sent_before = shutdown_.sent;
        shutdown_.sent = true;
        const bool fresh =
            job_.start_shutdown(run_id_,
                                make_shutdown_script({plan_.model, run_id_, plan_.environment,
                                                      plan_.create_venv, plan_.shutdown_cmds}),
                                shutdown_.record_collected);
        shutdown_.record_collected = false;  // recorded (a cut before this records it again)
        if (!fresh && !sent_before) {
            // Started by an earlier mlt of this run (a failure, or a cut before --resume):
            // never twice. If it ended, its output was shown then.
            if (auto status = job_.shutdown_status()) {
                reporter_.notice("shutdown_cmds of run " + run_id_ + " already ran (exit status " +
                                 std::to_string(*status) + ")");
                return Phase::release;
            }
        }
        shutdown_.following = true;
    }
    // Counted as shown, so that a segment cut halfway goes on after what was shown.
    const FollowStep seen = job_.follow(Task::shutdown, &run_id_, shutdown_.offset,
                                        kFollowSegmentSeconds, [&](std::string_view d) {
                                            shutdown_.offset += d.size();
                                            reporter_.console(shutdown_shown_.feed(d));
                                        });
    if (!seen.ended) return Phase::shutdown;
    const auto status = seen.result ? seen.result->exit_status : job_.shutdown_status();
    if (!status || *status != 0)
        reporter_.warning("shutdown_cmds of " + plan_.model + " failed (exit status " +
                          (status ? std::to_string(*status) : std::string("none")) +
                          "); the run's own status stands");
    return Phase::release;
}

Phase TrainRun::release() {
    if (!released_ahead_) job_.release(run_id_);
    lock_ = LockHold::released;
    return Phase::done;
}

}  // namespace mlt
