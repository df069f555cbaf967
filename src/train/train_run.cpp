// TrainRun: the phases of one run on one node, and what happens when the link drops, a
// signal arrives, or a phase fails (docs/architecture.md, "Phases of a run").
#include "mlt/train/train_run.h"

#include <poll.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <random>
#include <utility>

#include "mlt/job/status.h"
#include "mlt/train/history.h"
#include "mlt/train/local_state.h"
#include "mlt/transfer/progress.h"
#include "mlt/util/interrupt.h"
#include "mlt/util/shell.h"

namespace fs = std::filesystem;

namespace mlt {

namespace {

constexpr int kStopGraceSeconds = 10;
// Reconnect attempts come after 1, 2, 4, ... seconds, at most this far apart.
constexpr double kMaxBackoffSeconds = 30;
// How long a link lost while shutdown_cmds run is tried again (see reconnect()).
constexpr double kShutdownReconnectS = 30;

std::string iso_time(std::time_t t) {
    char buf[32];
    std::tm tm{};
    gmtime_r(&t, &tm);
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

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

Error conflict(std::string what, std::string hint) {
    return Error(ErrorKind::conflict, std::move(what), std::move(hint));
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

std::string new_run_id() {
    std::random_device rd;
    char buf[32];
    std::snprintf(buf, sizeof buf, "%lx-%06x", static_cast<long>(std::time(nullptr)),
                  static_cast<unsigned>(rd()) & 0xffffffu);
    return buf;
}

TrainRun::TrainRun(Connection& connection, TrainPlan plan, Reporter& reporter, RunClock& clock)
    : connection_(connection),
      plan_(std::move(plan)),
      reporter_(reporter),
      clock_(clock),
      console_(plan_.local_console, plan_.local_state_dir),
      compression_(
          checked_compression([this]() -> Remote& { return remote(); }, plan_.compression)) {}

int TrainRun::run() {
    try {
        return drive();
    } catch (const Fatal& fatal) {
        throw fatal.error;
    }
}

int TrainRun::drive() {
    phase_ = Phase::connect;
    try {
        remote();  // the first connection: a refused one is the user's to fix, not retried
    } catch (const Error& e) {
        if (is_signal(e.kind())) return e.code();
        throw;
    }
    phase_ = Phase::lock;
    while (phase_ != Phase::done) {
        std::optional<Error> error;
        try {
            step();
        } catch (const Error& e) {
            error = e;
        }
        // Handling an error may raise the next one (a signal while reconnecting, a host key
        // that changed): each goes through the same decisions.
        while (error) {
            const Error e = *error;
            error.reset();
            try {
                if (is_signal(e.kind())) {
                    const int code = on_signal(e);
                    if (code >= 0) return code;
                } else if (is_link_loss(e)) {
                    reconnect(e);
                } else {
                    throw Fatal{fail_cleanup(e)};
                }
            } catch (const Error& next) {
                error = next;
            }
        }
    }
    if (detached_) {
        record("detached", std::nullopt);
        return exit_code::kOk;
    }
    const int code = interrupted_ ? exit_code::kInterrupted : exit_status_.value_or(1);
    record(interrupted_ ? "stopped" : (code == 0 ? "success" : "failed"), exit_status_);
    reporter_.notice(
        plan_.model +
        (setup_failed_
             ? " did not start training: its setup (environment, venv or startup_cmds) ended with "
             : " finished with ") +
        (exit_status_ ? describe_exit_status(*exit_status_, stopped_by_mlt_)
                      : std::string("no exit status")) +
        "; console log: " + plan_.local_console);
    return code;
}

namespace {

// MLT_TEST_HOLD=<phase>:<file>, for the integration tests only: at the entry of that phase
// mlt creates <file> and waits (at most 120 s) until it is gone, so that a test can cut the
// link or kill mlt exactly there (the start phase is one round trip: nothing else shows
// when it is under way). The faults themselves stay real.
void hold_for_tests(Phase phase) {
    static bool held = false;
    const char* spec = std::getenv("MLT_TEST_HOLD");
    if (held || !spec) return;
    const std::string text = spec;
    const size_t colon = text.find(':');
    if (colon == std::string::npos || text.substr(0, colon) != describe(phase)) return;
    held = true;
    const std::string file = text.substr(colon + 1);
    std::ofstream(file) << ::getpid() << "\n";
    for (int i = 0; i < 12000 && fs::exists(file); ++i) ::poll(nullptr, 0, 10);
}

}  // namespace

void TrainRun::step() {
    hold_for_tests(phase_);
    switch (phase_) {
        case Phase::lock:
            return take_lock();
        case Phase::clean:
            return clean();
        case Phase::upload:
            return upload();
        case Phase::start:
            return start();
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
            return;
    }
}

void TrainRun::take_lock() {
    const std::string& name = plan_.model;
    if (plan_.resume) {
        auto jobs = query_jobs(remote(), plan_.remote_dir, name);
        if (jobs.empty() || !jobs.front().locked)
            throw conflict("no job of " + name + " to resume on " + connection_.name(),
                           "run without --resume");
        return adopt(jobs.front());
    }
    if (run_id_.empty()) run_id_ = new_run_id();  // a retry after a lost link keeps it
    WrapperSpec wrapper = plan_.wrapper;
    wrapper.run_id = run_id_;
    NewRun run{run_id_,           plan_.owner,   make_wrapper_script(wrapper),
               wrapper.train_cmd, plan_.archive, plan_.clean};
    bool acquired = false;
    {
        // One round trip that a Ctrl+C must not cut: the lock may be taken remotely before
        // the reply is read, and then only a lock known to be ours can be released.
        InterruptDeferral hold;
        acquired = acquire_run(remote(), plan_.remote_dir, name, run);
    }
    if (!acquired) {
        auto jobs = query_jobs(remote(), plan_.remote_dir, name);
        // Released in between (the holder just finished): try again. A job that lives on
        // without its lock still keeps the model.
        if (jobs.empty() || (!jobs.front().locked && jobs.front().state != JobState::running))
            return;
        const JobStatus& job = jobs.front();
        const std::string other = job.run_id.empty() ? "" : " (run " + job.run_id + ")";
        if (!plan_.force) {
            switch (job.state) {
                case JobState::running:
                    throw conflict("model " + name + " already has a running job on " +
                                       connection_.name() + other,
                                   "--resume to reattach, or --force to stop it and start over");
                case JobState::uploading:
                case JobState::starting:
                    throw conflict("model " + name + " has a run" + other + " on " +
                                       connection_.name() + " whose upload or start did not finish",
                                   "--resume to continue it, or --force to discard it");
                case JobState::collected:
                    throw conflict("model " + name + " has a run" + other + " on " +
                                       connection_.name() +
                                       " whose results were collected but whose shutdown_cmds "
                                       "and lock release did not finish",
                                   "--resume to finish it, or --force to discard it");
                default:
                    throw conflict("model " + name + " has a finished job on " +
                                       connection_.name() + other +
                                       " whose results were not collected",
                                   "--resume to collect them, or --force to discard them");
            }
        }
        reporter_.notice(job.state == JobState::running
                             ? "--force: stopping the running job of " + name + other
                             : "--force: discarding the " + std::string(to_string(job.state)) +
                                   " job of " + name + other);
        stop_job(remote(), plan_.remote_dir, name, kStopGraceSeconds);
        discard_job(remote(), plan_.remote_dir, name);
        InterruptDeferral hold;
        if (!acquire_run(remote(), plan_.remote_dir, name, run))
            throw conflict("another mlt took the lock of " + name + " meanwhile",
                           "see 'mlt ssh ... status " + name + "'");
    }
    lock_held_ = true;
    started_iso_ = iso_time(std::time(nullptr));
    record("running", std::nullopt);
    phase_ = plan_.clean ? Phase::clean : Phase::upload;
}

void TrainRun::adopt(const JobStatus& job) {
    if (job.state == JobState::uploading && !plan_.spec_here)
        // Refused before the run is adopted: the lock stays as it is, for a machine that has
        // the spec.
        throw usage_error("the run of " + plan_.model + " on " + connection_.name() +
                              (job.run_id.empty() ? "" : " (run " + job.run_id + ")") +
                              " was cut while uploading, and uploading again needs the model "
                              "spec, which is not here",
                          "run the same command where the spec is, or give the spec path");
    run_id_ = job.run_id;
    lock_held_ = true;
    exit_status_ = job.exit_status;
    started_iso_ = iso_time(job.started > 0 ? job.started : std::time(nullptr));
    const std::string which = plan_.model + " (run " + (run_id_.empty() ? "-" : run_id_) + ")";
    switch (job.state) {
        case JobState::uploading:
            reporter_.notice("continuing " + which + ": its upload did not finish");
            phase_ = job.clean ? Phase::clean : Phase::upload;
            return;
        case JobState::starting:
            reporter_.notice("continuing " + which + ": starting its job");
            phase_ = Phase::start;
            return;
        case JobState::running:
            reporter_.notice("reattaching to the running job of " + which);
            break;
        case JobState::collected:
            job_may_run_ = true;
            reporter_.notice("finishing " + which + ": its results were collected");
            phase_ = Phase::shutdown;
            return;
        default:
            reporter_.notice("collecting the finished job of " + which);
            break;
    }
    job_may_run_ = true;
    phase_ = Phase::follow;
}

void TrainRun::clean() {
    std::error_code ec;
    fs::remove_all(plan_.local_logs, ec);
    fs::remove(plan_.local_archive, ec);
    // A log dir the settings name goes now (prepare() checked it is the model's own); the
    // one the remote MLTK names is cleaned by the job once it knows it.
    std::string command =
        "cd " + shell_quote_path(plan_.remote_dir) + " && rm -f " + shell_quote(plan_.archive);
    if (!plan_.remote_log_dir.empty()) {
        // Checked again where the truth is: never the remote dir or one above it, the home
        // directory, or a dir that holds job state.
        command += " && d=" + shell_quote_path(plan_.remote_log_dir) +
                   " && if [ -d \"$d\" ]; then a=$(cd -- \"$d\" && pwd -P) && w=$(pwd -P) && "
                   "h=$(cd && pwd -P) && [ \"$a\" != / ] && [ \"$a\" != \"$h\" ] && "
                   "[ ! -e \"$d/.mlt\" ] && case \"$w/\" in \"$a\"/*) false ;; esac || "
                   "{ echo \"refusing to remove $d: it holds more than this model's logs\" >&2; "
                   "exit 1; }; rm -rf -- \"$d\"; fi";
    }
    RemoteOutput out = remote().run(command);
    if (out.exit_status != 0)
        throw remote_failure(remote(), "removing the remote logs (--clean)", out.exit_status,
                             out.err);
    reporter_.notice("--clean: removed the local logs and archive of " + plan_.model +
                     (plan_.remote_log_dir.empty()
                          ? "; the remote log dir is cleaned when the job starts"
                          : ", and the remote ones"));
    phase_ = Phase::upload;
}

void TrainRun::upload() {
    const SyncResult sent = sync_up(remote(), plan_.uploads, compression_);
    up_.files += sent.moved.files;
    up_.bytes += sent.moved.bytes;
    reporter_.notice("uploaded " + describe(sent));
    phase_ = Phase::start;
}

void TrainRun::start() {
    job_may_run_ = true;
    long pgid = 0;
    {
        // One bounded round trip that must not be cut by a Ctrl+C: the job may be launched
        // before the reply is read. The Ctrl+C is handled right after, with the job known.
        InterruptDeferral hold;
        pgid = start_job(remote(), plan_.remote_dir, plan_.model, run_id_);
    }
    reporter_.notice("started " + plan_.model + " on " + connection_.name() + " (run " + run_id_ +
                     ", process group " + std::to_string(pgid) + ")");
    console_.open(run_id_);  // a new run: the local copy starts empty
    if (plan_.no_wait) {
        reporter_.notice("not waiting; reattach with: " + plan_.resume_line);
        detached_ = true;
        phase_ = Phase::done;
        return;
    }
    phase_ = Phase::follow;
}

void TrainRun::follow() {
    if (stop_requested_ && !stop_done_) {
        stop_sent_ = true;
        stop_job(remote(), plan_.remote_dir, plan_.model, kStopGraceSeconds, &run_id_);
        stop_done_ = true;
    }
    uint64_t offset = console_.open(run_id_);
    const auto show = [&](std::string_view d) {
        console_.append(d);  // the record first
        reporter_.console(d);
    };
    if (plan_.resume && plan_.no_wait) {
        // MLTK's poll: what is new in the console log now, and back at once while the job
        // runs; a job that has ended is collected as usual.
        const FollowStep step = follow_log(remote(), plan_.remote_dir, plan_.model, Task::job,
                                           &run_id_, offset, 0, show);
        if (!step.ended) {
            reporter_.notice("the job of " + plan_.model + " (run " + run_id_ +
                             ") is still running; look again with: " + plan_.resume_line +
                             " --no-wait; or wait for it with: " + plan_.resume_line);
            detached_ = true;
            phase_ = Phase::done;
            return;
        }
        followed_ = step.result;
    } else {
        followed_ = follow_to_end(remote(), plan_.remote_dir, plan_.model, Task::job, &run_id_,
                                  offset, kFollowSegmentSeconds, show)
                        .result;
    }
    phase_ = Phase::collect;
}

void TrainRun::collect() {
    // The follow's last segment read the result and recorded phase finished; a retry (after
    // a lost link) asks again.
    const std::optional<JobResult> followed = std::exchange(followed_, std::nullopt);
    const JobResult result =
        followed ? *followed : read_job_result(remote(), plan_.remote_dir, plan_.model);
    if (result.run_id != run_id_)
        throw foreign_run(remote(), plan_.model, run_id_,
                          "the job files belong to run '" + result.run_id + "'");
    exit_status_ = result.exit_status;
    if (exit_status_ && *exit_status_ != 0 && !result.training_started) setup_failed_ = true;
    stopped_by_mlt_ = result.stopped_with.has_value() && result.stopped_with == exit_status_;
    if (result.disk_full)
        spdlog::warn(
            "no space left on the remote: the disk of {} on {} is full; what the job of {} "
            "(run {}) wrote last may be missing (free space there)",
            plan_.remote_dir, connection_.name(), plan_.model, run_id_);
    else if (!exit_status_)
        spdlog::warn(
            "the job of {} (run {}) ended without recording an exit status (killed by "
            "SIGKILL, or the host restarted)",
            plan_.model, run_id_);
    if (!followed)
        set_run_phase(remote(), plan_.remote_dir, plan_.model, run_id_, RunPhase::finished);
    const TransferStats got = collect_results(remote(), plan_, result, compression_, reporter_);
    down_.files += got.files;
    down_.bytes += got.bytes;
    // Phase collected goes with the start of shutdown_cmds; without them, the release that
    // follows removes the lock, and a cut before it leaves phase finished: --resume collects
    // again (nothing moves) and releases.
    record_collected_ = true;
    phase_ = Phase::shutdown;
}

void TrainRun::shutdown() {
    if (plan_.shutdown_cmds.empty()) {
        phase_ = Phase::release;
        return;
    }
    const bool sent_before = shutdown_sent_;
    shutdown_sent_ = true;
    const bool fresh =
        start_shutdown(remote(), plan_.remote_dir, plan_.model, run_id_,
                       make_shutdown_script({plan_.model, run_id_, plan_.environment,
                                             plan_.create_venv, plan_.shutdown_cmds}),
                       record_collected_);
    record_collected_ = false;
    if (!fresh && !sent_before) {
        // Started by an earlier mlt of this run (a failure, or a cut before --resume): never
        // twice. If it ended, its output was shown then.
        if (auto status = read_shutdown_status(remote(), plan_.remote_dir, plan_.model)) {
            reporter_.notice("shutdown_cmds of run " + run_id_ + " already ran (exit status " +
                             std::to_string(*status) + ")");
            phase_ = Phase::release;
            return;
        }
    }
    const FollowStep end = follow_to_end(remote(), plan_.remote_dir, plan_.model, Task::shutdown,
                                         &run_id_, shutdown_offset_, kFollowSegmentSeconds,
                                         [&](std::string_view d) { reporter_.console(d); });
    const auto status = end.result ? end.result->exit_status
                                   : read_shutdown_status(remote(), plan_.remote_dir, plan_.model);
    if (!status || *status != 0)
        spdlog::warn("shutdown_cmds of {} failed (exit status {}); the run's own status stands",
                     plan_.model, status ? std::to_string(*status) : "none");
    phase_ = Phase::release;
}

void TrainRun::release() {
    release_run(remote(), plan_.remote_dir, plan_.model, run_id_);
    lock_held_ = false;
    phase_ = Phase::done;
}

void TrainRun::reconnect(const Error& cause) {
    const std::string host = connection_.name();
    const std::string during = describe(phase_);
    spdlog::debug("link to {} lost while {}: {}", host, during, cause.what());
    // shutdown_cmds that power the host off (to stop a cloud bill) end the link for good:
    // the results are home by then, so a short try is enough.
    const bool shutting_down = phase_ == Phase::shutdown;
    const double configured = plan_.reconnect_timeout_s;
    const double limit = shutting_down ? std::min(configured, kShutdownReconnectS) : configured;
    const double began = clock_.now();
    std::string last = cause.what();
    double backoff = 1;
    for (int attempt = 1;; ++attempt) {
        const double elapsed = clock_.now() - began;
        if (limit <= 0 || elapsed >= limit) {
            if (shutting_down) {
                reporter_.alert("link to " + host + " lost while " + during +
                                " and not back after " + format_duration(elapsed) +
                                " (a command that powers the host off ends it so); the results "
                                "were collected; the job lock stays on the remote: " +
                                plan_.resume_line + " releases it");
                phase_ = Phase::done;
                return;
            }
            const bool job_runs = job_may_run_ && phase_ <= Phase::follow && !stop_done_;
            record("link lost", exit_status_);
            // Which limit ended it: the last attempt may outlast it by a connect timeout.
            const std::string gave_up =
                limit > 0 ? "; gave up reconnecting after " + format_duration(elapsed) +
                                " (reconnect timeout " + std::to_string(std::lround(limit)) + " s)"
                          : "; not reconnecting (reconnect timeout 0)";
            throw Fatal{Error(
                ErrorKind::disconnected,
                "link to " + host + " lost while " + during + gave_up + " (" + last + ")",
                std::string(job_runs ? "the remote job keeps running; " : "") + "continue with: " +
                    plan_.resume_line + " (--reconnect-timeout S waits longer)")};
        }
        const double next = std::min({backoff, kMaxBackoffSeconds, limit - elapsed});
        reporter_.alert("link to " + host + " lost while " + during + "; reconnecting (attempt " +
                        std::to_string(attempt) + ", next in " +
                        std::to_string(static_cast<long>(std::ceil(next))) + "s)");
        try {
            connection_.reconnect();
            ++reconnects_;
            reporter_.alert("link to " + host + " is back after " +
                            format_duration(clock_.now() - began) + "; continuing " + during);
            return;
        } catch (const Error& e) {
            if (is_signal(e.kind())) throw;
            if (!is_link_loss(e)) {
                // A changed host key, refused credentials: trying again will not help, and the
                // remote cannot be reached to clean anything up. The run stays as it is.
                record("link lost", exit_status_);
                throw Fatal{Error(e.kind(), e.what(),
                                  "the run is kept on the remote; once this is fixed, continue "
                                  "with: " +
                                      plan_.resume_line)};
            }
            last = e.what();
            spdlog::debug("reconnect attempt {} failed: {}", attempt, last);
        }
        throw_if_interrupted();
        // An attempt can outlast the period (a connect timeout): never a negative wait.
        const double left = limit - (clock_.now() - began);
        if (left > 0) clock_.sleep(std::min(next, left));
        throw_if_interrupted();
        backoff *= 2;
    }
}

int TrainRun::on_signal(const Error& signal) {
    if (signal.kind() != ErrorKind::interrupted) return leave(signal);  // SIGTERM, SIGHUP
    acknowledge_interrupt();
    if (interrupted_ || interrupt_pending()) return leave(signal);  // Ctrl+C twice
    interrupted_ = true;
    if (!job_may_run_) {
        if (lock_held_) {
            reporter_.alert("Ctrl+C: nothing was started; releasing the job lock");
            try {
                release_run(remote(), plan_.remote_dir, plan_.model, run_id_);
                lock_held_ = false;
            } catch (const Error& e) {
                reporter_.alert(std::string("could not release the job lock (") + e.what() +
                                "); continue the run with: " + plan_.resume_line +
                                " or discard it with --force");
            }
        }
        record("stopped", std::nullopt);
        return exit_code::kInterrupted;
    }
    if (phase_ > Phase::follow) return leave(signal);  // the job has ended already
    reporter_.alert(
        "Ctrl+C: stopping the remote job, then collecting its results (Ctrl+C again "
        "to leave now, without collecting)");
    stop_requested_ = true;
    phase_ = Phase::follow;
    return -1;
}

std::string TrainRun::still_running() const {
    return "the remote job of " + plan_.model + " is STILL RUNNING on " + connection_.name() +
           "; stop it with: " + plan_.stop_line + "; reattach with: " + plan_.resume_line;
}

int TrainRun::leave(const Error& signal) {
    const int code = signal.code();
    const std::string why = signal.kind() == ErrorKind::interrupted
                                ? (interrupted_ ? "Ctrl+C again" : "Ctrl+C")
                                : std::string(signal.what());
    std::string state;
    if (!lock_held_) {
        state = "nothing remote was changed";
    } else if (!job_may_run_) {
        state = "the run of " + plan_.model + " is kept; continue it with: " + plan_.resume_line +
                " (or discard it with --force)";
    } else if (phase_ <= Phase::follow && !stop_done_ && stop_sent_) {
        // The stop runs on the remote by itself once sent: the job is not "still running"
        // for long, whatever mlt does now.
        state = "the stop of the remote job of " + plan_.model +
                " was sent (TERM, then KILL after " + std::to_string(kStopGraceSeconds) +
                " s) and goes on without mlt; if the job still " +
                "runs, stop it with: " + plan_.stop_line +
                "; collect its results with: " + plan_.resume_line;
    } else if (phase_ <= Phase::follow && !stop_done_) {
        state = still_running();
    } else {
        state = std::string(stop_done_ ? "the remote job was stopped; " : "the job has ended; ") +
                "collect its results with: " + plan_.resume_line;
    }
    reporter_.alert(why + ": leaving now; " + state);
    record("left", exit_status_);
    return code;
}

Error TrainRun::fail_cleanup(const Error& error) {
    if (!lock_held_) {
        // The lock round trip itself failed after its O_EXCL step: a lock of this run may be
        // there. Releasing it is scoped to this run id, so it is safe to try.
        if (phase_ == Phase::lock && !plan_.resume && !run_id_.empty()) {
            try {
                release_run(remote(), plan_.remote_dir, plan_.model, run_id_);
            } catch (const Error& e) {
                spdlog::debug("releasing a lock this run may hold: {}", e.what());
            }
        }
        return error;
    }
    if (error.kind() == ErrorKind::conflict) {
        // Another mlt took the run over (or stopped it): nothing remote is ours to touch.
        record("taken over", exit_status_);
        return error;
    }
    const bool job_ended = exit_status_.has_value() || stop_done_ || phase_ >= Phase::collect;
    try {
        if (!job_may_run_) {
            // Failed before the job was started (an upload): nothing to collect, so the next
            // run must not find a lock (exit 3).
            release_run(remote(), plan_.remote_dir, plan_.model, run_id_);
            lock_held_ = false;
            record("failed", std::nullopt);
            return error;
        }
        if (!job_ended) {
            // The job may still be training: shutdown_cmds (which may power the host off)
            // must wait for its end, and the user must know it runs on.
            record("failed", std::nullopt);
            return Error(error.kind(), error.what(), still_running());
        }
        // shutdown_cmds run after failures too; the lock stays so that --resume can collect
        // again (and then does not run them a second time).
        if (phase_ < Phase::shutdown) {
            phase_ = Phase::shutdown;
            shutdown();
        }
    } catch (const Error& e) {
        spdlog::warn("after the error below, {} failed too: {}", describe(phase_), e.what());
    }
    record("failed", exit_status_);
    if (error.kind() == ErrorKind::io) {
        // A local write failed after the training ran (a full disk): not a usage error (2),
        // and nothing on the remote is lost.
        return Error(ErrorKind::io_after_run, error.what(),
                     "the job's results stay on the remote; once fixed, collect them with: " +
                         plan_.resume_line);
    }
    return error;
}

void TrainRun::record(const std::string& status, std::optional<int> exit_status) {
    if (run_id_.empty()) return;
    nlohmann::json r = {{"id", run_id_},
                        {"model", plan_.model},
                        {"hosts", {connection_.name()}},
                        {"remote_dir", plan_.remote_dir},
                        {"start", started_iso_},
                        {"status", status},
                        {"bytes_up", up_.bytes},
                        {"bytes_down", down_.bytes},
                        {"reconnects", reconnects_},
                        {"cost", nullptr}};
    if (status != "running") r["end"] = iso_time(std::time(nullptr));
    if (exit_status) r["exit_status"] = *exit_status;
    append_history(r);
}

}  // namespace mlt
