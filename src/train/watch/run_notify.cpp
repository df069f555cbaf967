// A run's notifications as its mlt takes part in them (docs/usage.md, "Notifications"): the
// targets handed to the host's guard with the lock, and the events this mlt sends itself.
#include <cmath>
#include <fstream>

#include "mlt/train/run/train_run.h"
#include "mlt/util/text.h"

namespace mlt {

namespace {

// The last `count` lines of the local copy of the console log (its last 64 KiB).
std::vector<std::string> last_lines(const std::string& path, size_t count) {
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (!in) return {};
    const std::streamoff size = in.tellg();
    const std::streamoff from = size > 65536 ? size - 65536 : 0;
    in.seekg(from);
    std::string text(static_cast<size_t>(size - from), '\0');
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    std::vector<std::string> lines = split(text, '\n');
    if (!lines.empty() && lines.back().empty()) lines.pop_back();
    if (lines.size() > count) lines.erase(lines.begin(), lines.end() - static_cast<long>(count));
    return lines;
}

// Whether `kind` happens on the host (its guard sends it when it notifies).
bool host_event(NotifyEventKind kind) {
    return kind != NotifyEventKind::host_lost && kind != NotifyEventKind::failover &&
           kind != NotifyEventKind::restarted;
}

}  // namespace

void TrainRun::hand_notifications() {
    const double now = wall_now();
    const auto cost = account_.ledger.cost(now);
    std::string info = "host=" + host() +
                       "\nelapsed=" + std::to_string(std::lround(account_.ledger.elapsed(now))) +
                       "\n";
    if (plan_.price_per_hour > 0)
        info += "cost=" + number_text(cost.value_or(0)) +
                "\nprice=" + number_text(plan_.price_per_hour) + "\n";
    const std::string client = job_->hand_notifications(run_id_, plan_.notify, info);
    watchers_.host_notifies = client.rfind("none", 0) != 0;
    if (!watchers_.host_notifies)
        reporter_.warning(
            "cannot send notifications from " + host() + ": " +
            printable(client.rfind("none: ", 0) == 0 ? client.substr(6) : client, 200) +
            "; mlt sends them while it is attached (notify_from: laptop keeps the "
            "URLs off the host)");
}

void TrainRun::notify(NotifyEventKind kind, const std::string& reason,
                      std::optional<int> exit_status) {
    if (gang_ && gang_.rank != 0) return;
    if (!watchers_.notices.armed())
        watchers_.notices.arm(plan_.notify, plan_.notify_cmd, plan_.local_logs);
    if (!watchers_.notices.armed()) return;
    const double now = wall_now();
    NotifyEvent e;
    e.event = kind;
    e.model = plan_.model;
    e.run_id = run_id_;
    e.attempt = attempt_;
    e.host = host();
    e.reason = reason;
    e.exit_status = exit_status;
    e.duration_s = std::llround(account_.ledger.elapsed(now));
    e.cost = account_.ledger.cost(now);
    e.last_lines = last_lines(plan_.local_console, 10);
    // The guard tells a job's end only when the job recorded a status (a lost one is ours).
    const bool by_host = host_event(kind) && watchers_.host_notifies &&
                         (kind != NotifyEventKind::failed || exit_status.has_value());
    watchers_.notices.post(std::move(e), by_host);
}

}  // namespace mlt
