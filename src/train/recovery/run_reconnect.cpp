// TrainRun::reconnect(): a lost link is opened again with capped exponential backoff, for
// the reconnect timeout, and the phase it was lost in is entered again.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>

#include "mlt/train/run/train_run.h"
#include "mlt/transfer/progress.h"
#include "mlt/util/interrupt.h"

namespace mlt {

namespace {

// Reconnect attempts come after 1, 2, 4, ... seconds, at most this far apart.
constexpr double kMaxBackoffSeconds = 30;
// How long a link lost while shutdown_cmds run is tried again.
constexpr double kShutdownReconnectS = 30;

}  // namespace

void TrainRun::reconnect(const Error& cause) {
    const std::string during = describe(phase_);
    spdlog::debug("link to {} lost while {}: {}", host(), during, cause.what());
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
            if (!shutting_down) {
                if (fail_over(" and not back after " + format_duration(elapsed))) return;
                give_up_reconnecting(elapsed, limit, last);
            }
            reporter_.alert("link to " + host() + " lost while " + during + " and not back after " +
                            format_duration(elapsed) +
                            " (a command that powers the host off ends it so); the results "
                            "were collected; the job lock stays on the remote: " +
                            plan_.resume_line + " releases it");
            phase_ = Phase::done;
            return;
        }
        const double next = std::min({backoff, kMaxBackoffSeconds, limit - elapsed});
        reporter_.alert("link to " + host() + " lost while " + during + "; reconnecting (attempt " +
                        std::to_string(attempt) + ", next in " +
                        std::to_string(static_cast<long>(std::ceil(next))) + "s)");
        try {
            connection_.reconnect();
            ++outcome_.reconnects;
            reporter_.alert("link to " + host() + " is back after " +
                            format_duration(clock_.now() - began) + "; continuing " + during);
            return;
        } catch (const Error& e) {
            if (is_signal(e.kind())) throw;
            if (!is_link_loss(e)) {
                // A changed host key, refused credentials: trying again will not help, and the
                // remote cannot be reached to clean anything up. The run stays as it is.
                record("link lost", outcome_.job.exit_status);
                throw Fatal{Error(e.kind(), e.what(),
                                  "the run is kept on the remote; once this is fixed, continue "
                                  "with: " +
                                      plan_.resume_line)};
            }
            last = e.what();
            spdlog::debug("reconnect attempt {} failed: {}", attempt, last);
        }
        // A rented machine its marketplace reports gone will not come back: no wait for it.
        if (const auto gone = relocation_.failover && !shutting_down
                                  ? relocation_.failover->ended(host())
                                  : std::nullopt) {
            reporter_.alert("the link to " + host() + " will not come back: " + *gone);
            if (fail_over(" and " + *gone)) return;
            record("link lost", outcome_.job.exit_status);
            notify(NotifyEventKind::host_lost, *gone);
            throw Fatal{Error(ErrorKind::disconnected,
                              "link to " + host() + " lost while " + during + ", and " + *gone,
                              "the job and its results there are gone; continue from the "
                              "checkpoints that came home in " +
                                  plan_.local_logs + " with: " + restore_line())};
        }
        throw_if_interrupted();
        // An attempt can outlast the period (a connect timeout): never a negative wait.
        const double left = limit - (clock_.now() - began);
        if (left > 0) clock_.sleep(std::min(next, left));
        throw_if_interrupted();
        backoff *= 2;
    }
}

void TrainRun::give_up_reconnecting(double elapsed, double limit, const std::string& last) {
    record("link lost", outcome_.job.exit_status);
    notify(NotifyEventKind::host_lost, "no link to it for " + format_duration(elapsed));
    // Which limit ended it: the last attempt may outlast it by a connect timeout.
    const std::string gave_up = limit > 0 ? "; gave up reconnecting after " +
                                                format_duration(elapsed) + " (reconnect timeout " +
                                                std::to_string(std::lround(limit)) + " s)"
                                          : "; not reconnecting (reconnect timeout 0)";
    throw Fatal{
        Error(ErrorKind::disconnected,
              "link to " + host() + " lost while " + describe(phase_) + gave_up + " (" + last + ")",
              std::string(watch_.may_still_run() ? "the remote job keeps running; " : "") +
                  "continue with: " + plan_.resume_line + " (--reconnect-timeout S waits longer)")};
}

}  // namespace mlt
