#pragma once

#include <atomic>
#include <functional>
#include <thread>

namespace mlt {

// Installs the signal handlers of a flow that reacts to signals instead of dying: SIGINT
// (Ctrl+C) is counted, so a flow can react to the first (stop the remote job, still collect)
// and the second (leave now); SIGTERM and SIGHUP (a closed terminal, `timeout`, a CI cancel)
// ask to leave at once. SIGPIPE is ignored.
void install_interrupt_handler();

// Marks one Ctrl+C as handled (the flow reacted to it). Those beyond the handled ones are
// pending, also those that arrived before the flow could react.
void acknowledge_interrupt();

// True while a Ctrl+C is pending (not acknowledged).
bool interrupt_pending();

// SIGTERM or SIGHUP when one arrived, else 0.
int leave_signal();

// Throws mlt::Error (interrupted) while a signal is pending: exit 128+N for SIGTERM/SIGHUP,
// 130 for a Ctrl+C. Every remote wait calls it, so a pending signal ends whatever runs,
// except inside an InterruptDeferral.
void throw_if_interrupted();

// While one lives, throw_if_interrupted() in its thread also throws (interrupted) once
// `stop` is set, also inside an InterruptDeferral: the remote waits of a thread of its own
// (the pulls of --sync-every) end soon after its owner asks it to stop, even on a silent
// link. `stop` must outlive it.
class StopScope {
  public:
    explicit StopScope(const std::atomic<bool>& stop);
    ~StopScope();
    StopScope(const StopScope&) = delete;
    StopScope& operator=(const StopScope&) = delete;

  private:
    const std::atomic<bool>* outer_;
};

// The stop flag of the innermost StopScope of this thread, or nullptr: for a helper thread
// that works for this one and must stop with it.
const std::atomic<bool>* current_stop();

// Whether an InterruptDeferral lives in this thread (a child it runs is not cut either).
bool interrupts_deferred();

// While one lives, throw_if_interrupted() does nothing in its thread: for a short, bounded
// remote step that must not be cut in the middle (starting the job). Signals stay pending
// for afterwards.
class InterruptDeferral {
  public:
    InterruptDeferral();
    ~InterruptDeferral();
    InterruptDeferral(const InterruptDeferral&) = delete;
    InterruptDeferral& operator=(const InterruptDeferral&) = delete;
};

// Starts `body` in a thread that blocks SIGINT, SIGTERM and SIGHUP: a helper thread of a
// run (pulls, a barrier) leaves them to the run's own threads, whose waits they cut short.
std::thread thread_without_signals(std::function<void()> body);

}  // namespace mlt
