// What a run's job left (its result), and the run's shutdown_cmds: started once, detached,
// and their recorded status.
#include "job_shell.h"
#include "mlt/job/job.h"
#include "mlt/job/status.h"
#include "mlt/util/text.h"

namespace mlt {

using namespace job_detail;

JobResult read_job_result(Remote& remote, const std::string& remote_dir, const std::string& model) {
    ShellCommand c = job_dir_command(remote_dir, model);
    c.add(scripts::job_result);
    return parse_job_result(run_or_fail(remote, c, "reading the job result").out);
}

bool start_shutdown(Remote& remote, const std::string& remote_dir, const std::string& model,
                    const std::string& run_id, const std::string& script, bool record_collected) {
    ShellCommand c = run_command(remote_dir, model, run_id);
    c.flag("mlt_collected", record_collected)
        .add(scripts::job_launch)
        .add(scripts::job_shutdown_start);
    const RemoteOutput out =
        run_checked(remote, c, "starting shutdown_cmds", model, run_id, script);
    return out.out.find("again") == std::string::npos;
}

std::optional<int> read_shutdown_status(Remote& remote, const std::string& remote_dir,
                                        const std::string& model) {
    ShellCommand c = job_dir_command(remote_dir, model);
    c.add(scripts::job_shutdown_status);
    const RemoteOutput out = run_or_fail(remote, c, "reading the shutdown status");
    return recorded_status(trim(out.out));  // half-written: not there yet
}

}  // namespace mlt
