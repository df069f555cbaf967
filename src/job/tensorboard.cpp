// TensorBoard on the remote for a model's log dir: started detached on a port, and stopped.
#include "job_shell.h"
#include "mlt/job/job.h"

namespace mlt {

using namespace job_detail;

void start_tensorboard(Remote& remote, const std::string& remote_dir, const std::string& model,
                       int port) {
    ShellCommand c = job_dir_command(remote_dir, model);
    c.number("mlt_port", port).add(scripts::job_tensorboard_start);
    run_or_fail(remote, c, "starting tensorboard for " + model,
                "see docs/usage.md, \"Watching a run\"");
}

void stop_tensorboard(Remote& remote, const std::string& remote_dir, const std::string& model) {
    ShellCommand c = job_dir_command(remote_dir, model);
    c.add(scripts::job_tensorboard_stop);
    remote.run(c.text());
}

}  // namespace mlt
