// What a run's job left (its result), and the run's shutdown_cmds: started once, detached,
// and their recorded status.
#include "job_shell.h"
#include "mlt/job/job.h"
#include "mlt/job/status.h"
#include "mlt/util/text.h"

namespace mlt {

using namespace job_detail;

JobResult JobDir::read_job_result() {
    ShellCommand c = job_dir_command(remote_dir_, model_);
    c.add(scripts::job_result);
    return parse_job_result(run_or_fail(remote(), c, "reading the job result").out);
}

bool JobDir::start_shutdown(const std::string& run_id, const std::string& script,
                            bool record_collected) {
    ShellCommand c = run_command(remote_dir_, model_, run_id);
    c.flag("mlt_collected", record_collected)
        .add(scripts::job_launch)
        .add(scripts::job_shutdown_start);
    const RemoteOutput out =
        run_checked(remote(), c, "starting shutdown_cmds", model_, run_id, script);
    return out.out.find("again") == std::string::npos;
}

std::optional<int> JobDir::read_shutdown_status() {
    ShellCommand c = job_dir_command(remote_dir_, model_);
    c.add(scripts::job_shutdown_status);
    const RemoteOutput out = run_or_fail(remote(), c, "reading the shutdown status");
    return recorded_status(trim(out.out));  // half-written: not there yet
}

}  // namespace mlt
