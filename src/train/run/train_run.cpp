// TrainRun: the phase loop of one run on one node and its error dispatch (docs/architecture.md,
// "Phases of a run"). The lock phase is in run_lock.cpp, the phases that act on the job in
// run_job.cpp; what happens when the link drops is in recovery/run_reconnect.cpp, when a
// signal arrives in run_signals.cpp, when a phase fails for good in run_cleanup.cpp, when the
// job was lost in recovery/run_restart.cpp; what a job left comes home in collect.cpp.
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
      job_(&job),
      plan_(std::move(plan)),
      reporter_(reporter),
      clock_(clock),
      observer_(observer),
      terminal_(plan_.local_console, plan_.local_state_dir, plan_.raw_console, reporter_),
      relocation_{failover, Relocation::Where::first_host, {}},
      watchers_() {
    const auto epoch = std::chrono::system_clock::now().time_since_epoch();
    account_.wall_offset = std::chrono::duration<double>(epoch).count() - clock_.now();
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
                outcome_.exit_code = refused.code();
                throw;
            }
            if (resume_unreachable(e, runs)) return;
        }
        outcome_.exit_code = e.code();  // over, either way
        if (!is_signal(e.kind())) throw;
        return;
    }
    phase_ = Phase::lock;
}

bool TrainRun::resume_unreachable(const Error& error, const std::vector<nlohmann::json>& runs) {
    if (!plan_.resume || !plan_.failover || !relocation_.failover || !plan_.spec_here ||
        !is_link_loss(error))
        return false;
    const auto here = unfinished_run_on(runs, plan_.model, host());
    if (!here) return false;
    run_id_ = here->run_id;
    attempt_ = std::max(1, here->attempt);
    account_.ledger.restore(earlier_attempts(runs, run_id_, here->attempt, here->start));
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
        if (error) outcome_.exit_code = handle(*error);
        if (!over() && phase_ == Phase::done) outcome_.exit_code = finish();
        if (over()) stop_sync();
    } catch (const Fatal& fatal) {
        stop_sync();
        outcome_.exit_code = fatal.error.code();
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
    if (outcome_.ending == Ending::detached) {
        record("detached", std::nullopt);
        outcome_.end_note = "its job runs on " + host() + " (not waited for)";
        return exit_code::kOk;
    }
    if (outcome_.ending == Ending::limited && !watch_.started()) {
        account_.ledger.end_attempt("limit", wall_now());
        record("limit", std::nullopt);
        outcome_.end_note =
            "stopped by " + outcome_.stop_note + " before its job started on " + host();
        if (relocation_.moved())
            outcome_.end_note += "; continue from the checkpoints that came home in " +
                                 plan_.local_logs + " with: " + restore_line();
        return exit_code::kLimit;
    }
    const auto& status = outcome_.job.exit_status;
    // A limit's stop that came after the job had ended by itself stopped nothing.
    const bool limited =
        outcome_.ending == Ending::limited && (outcome_.job.stopped_by_mlt || !status);
    const bool ruled = outcome_.ending == Ending::ruled && (outcome_.job.stopped_by_mlt || !status);
    const bool interrupted = outcome_.ending == Ending::interrupted;
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
    account_.ledger.end_attempt(how, wall_now());
    record(how, status);
    if (how == "success")
        notify(NotifyEventKind::finished, "", status);
    else if (how == "failed" || how == "lost")
        notify(NotifyEventKind::failed,
               status ? "exit status " + std::to_string(*status) : "no exit status (lost)", status);
    else
        notify(NotifyEventKind::stopped, interrupted ? "Ctrl+C" : outcome_.stop_note, status);
    outcome_.end_note =
        plan_.model +
        (outcome_.job.setup_failed
             ? " did not start training: its setup (environment, venv or startup_cmds) ended with "
             : " finished with ") +
        (status ? describe_exit_status(*status, outcome_.job.stopped_by_mlt)
                : std::string("no exit status"));
    if (status && !interrupted && !limited && !ruled && code != *status)
        outcome_.end_note += "; the training exited " + std::to_string(*status) + ", mlt exits " +
                             std::to_string(code) + " (" + std::to_string(*status) +
                             " is one of mlt's own exit codes)";
    if (interrupted) outcome_.end_note = "stopped by Ctrl+C: " + outcome_.end_note;
    if (limited || ruled)
        outcome_.end_note = "stopped by " + outcome_.stop_note + ": " + outcome_.end_note;
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

}  // namespace mlt
