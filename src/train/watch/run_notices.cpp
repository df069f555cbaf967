// RunNotices: a run's notifications sent from this machine, each in a thread of its own.
#include "mlt/train/watch/run_notices.h"

#include <spdlog/spdlog.h>

#include "mlt/util/error.h"

namespace mlt {

// The files of the log dir that keep what was sent (mlt's own there, as mlt-metrics.jsonl).
constexpr char kNotifySentFile[] = "mlt-notify-sent";
constexpr char kNotifyLogFile[] = "mlt-notify.log";

void RunNotices::arm(const std::vector<NotifyTarget>& targets, const std::string& notify_cmd,
                     const std::string& log_dir) {
    if (targets.empty() && notify_cmd.empty()) return;
    LocalNotifier::Options o;
    o.targets = targets;
    o.notify_cmd = notify_cmd;
    o.sent_file = log_dir + "/" + kNotifySentFile;
    o.log_file = log_dir + "/" + kNotifyLogFile;
    if (!notify_cmd.empty()) {
        LocalNotifier::Options cmd = o;
        cmd.targets.clear();
        command_ = std::make_unique<LocalNotifier>(std::move(cmd));
    }
    notifier_ = std::make_unique<LocalNotifier>(std::move(o));
}

void RunNotices::post(NotifyEvent event, bool command_only) {
    LocalNotifier* notifier = command_only ? command_.get() : notifier_.get();
    if (!notifier) return;
    std::lock_guard<std::mutex> hold(mutex_);
    sends_.emplace_back([notifier, event = std::move(event)] {
        try {
            const NotifyOutcome out = notifier->send(event);
            for (const auto& problem : out.problems) spdlog::warn("{}", problem);
        } catch (const std::exception& e) {
            spdlog::warn("notification {} not sent: {}", notify_event_id(event), e.what());
        }
    });
}

void RunNotices::wait() {
    std::vector<std::thread> sends;
    {
        std::lock_guard<std::mutex> hold(mutex_);
        sends.swap(sends_);
    }
    for (auto& t : sends)
        if (t.joinable()) t.join();
}

}  // namespace mlt
