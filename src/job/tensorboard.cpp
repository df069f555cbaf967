// TensorBoard on the remote for a model's log dir: started detached on a port, and stopped.
#include "job_shell.h"
#include "mlt/job/job.h"

namespace mlt {

using namespace job_detail;

void JobDir::start_tensorboard(int port) {
    ShellCommand c = job_dir_command(remote_dir_, model_);
    c.number("mlt_port", port).add(scripts::job_tensorboard_start);
    run_or_fail(remote(), c, "starting tensorboard for " + model_,
                "see docs/usage.md, \"Watching a run\"");
}

void JobDir::stop_tensorboard() {
    ShellCommand c = job_dir_command(remote_dir_, model_);
    c.add(scripts::job_tensorboard_stop);
    remote().run(c.text());
}

}  // namespace mlt
