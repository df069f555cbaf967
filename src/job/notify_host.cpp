// A run's notifications handed to the host's guard (notify_put.sh): the targets (secrets: on
// the command's stdin, never in its text), what the events need to know, and which HTTP client
// the host has.
#include "job_shell.h"
#include "mlt/job/job.h"
#include "mlt/job/notify.h"

namespace mlt {

using namespace job_detail;

std::string JobDir::hand_notifications(const std::string& run_id,
                                       const std::vector<NotifyTarget>& targets,
                                       const std::string& info) {
    ShellCommand c = run_command(remote_dir_, model_, run_id);
    c.set("mlt_notify_info", info)
        .set("mlt_notify_send", notify_send_script())
        .add(scripts::job_notify_put);
    const RemoteOutput out = run_checked(remote(), c, "handing the run's notifications to the host",
                                         model_, run_id, notify_targets_text(targets));
    const size_t at = out.out.find("client=");
    if (at == std::string::npos) return "none: the host did not say";
    const size_t end = out.out.find('\n', at);
    return out.out.substr(at + 7, end == std::string::npos ? std::string::npos : end - at - 7);
}

}  // namespace mlt
