#pragma once
// RunNotices: the notifications of one run as its mlt sends them (docs/usage.md,
// "Notifications"): the client's own events (host_lost, failover, restarted), and the host's
// (started, the job's end, the unattended shutdown) when the host's guard does not send them
// (notify_from: laptop, or a host without an HTTP client). Each is sent from this machine once
// per id (LocalNotifier, the log dir's sent file), in a thread of its own: a slow target never
// holds the run up; the threads are joined as the run's object goes.

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "mlt/job/notify.h"

namespace mlt {

class RunNotices {
  public:
    RunNotices() = default;
    RunNotices(const RunNotices&) = delete;
    RunNotices& operator=(const RunNotices&) = delete;
    ~RunNotices() { wait(); }

    // Arms the notifications: the targets and notify_cmd, where the sent ids and the tries are
    // kept (`log_dir`), and whether the host's guard sends the host's events. Nothing armed:
    // post() does nothing.
    void arm(const std::vector<NotifyTarget>& targets, const std::string& notify_cmd,
             const std::string& log_dir);
    bool armed() const { return notifier_ != nullptr; }
    // Sends `event` in a thread of its own (once per id; a failure is a warning in mlt's log):
    // to the targets and notify_cmd, or with `command_only` (an event the host's guard sends
    // to the targets) to notify_cmd alone.
    void post(NotifyEvent event, bool command_only = false);
    // Waits for every send under way.
    void wait();

  private:
    std::unique_ptr<LocalNotifier> notifier_;
    std::unique_ptr<LocalNotifier> command_;  // notify_cmd alone; none without one
    std::mutex mutex_;
    std::vector<std::thread> sends_;
};

}  // namespace mlt
