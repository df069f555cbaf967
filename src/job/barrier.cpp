// The barrier of a multi-node run, as the client keeps it: is a node's job at it, let it through.
#include "job_shell.h"
#include "mlt/job/job.h"

namespace mlt {

using namespace job_detail;

bool JobDir::barrier_ready() {
    ShellCommand c = job_dir_command(remote_dir_, model_);
    c.add(scripts::job_barrier_ready);
    return remote().run(c.text()).exit_status == 0;
}

bool JobDir::open_barrier() {
    ShellCommand c = job_dir_command(remote_dir_, model_);
    c.add(scripts::job_barrier_open);
    return remote().run(c.text()).exit_status == 0;
}

}  // namespace mlt
