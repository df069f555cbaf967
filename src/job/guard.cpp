// The host's guard of a run's job (guard.sh): its text, and its start again when it is gone.
#include "job_shell.h"
#include "mlt/job/job.h"
#include "mlt/job/notify.h"
#include "mlt/util/shell.h"

namespace mlt {

namespace job_detail {

std::string guard_script() {
    // The sender of its notifications first, as a variable (notify_send.sh runs as `sh -c`).
    return "mlt_notify_send=" + shell_quote(notify_send_script()) + "\n" +
           std::string(scripts::job_alive) + std::string(scripts::job_stop_functions) +
           std::string(scripts::job_launch) + std::string(scripts::job_sampler) +
           std::string(scripts::job_guard_rules) + std::string(scripts::job_checkpoints) +
           std::string(scripts::job_guard);
}

}  // namespace job_detail

using namespace job_detail;

bool JobDir::start_guard(const std::string& run_id, const GuardDeadline* deadline) {
    ShellCommand c = run_command(remote_dir_, model_, run_id);
    const bool set = deadline != nullptr;
    c.flag("mlt_set_deadline", set)
        .set("mlt_budget_s", set && deadline->budget_seconds
                                 ? std::to_string(*deadline->budget_seconds)
                                 : std::string())
        .set("mlt_limit", set ? deadline->limit : std::string())
        .set("mlt_guard", guard_script())
        .add(scripts::job_alive)
        .add(scripts::job_guard_functions)
        .add(scripts::job_guard_start);
    return run_checked(remote(), c, "starting the job's guard again", model_, run_id)
               .out.find("started") != std::string::npos;
}

}  // namespace mlt
