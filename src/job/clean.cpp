// --clean on the remote: the model archive and the log dir the settings name, checked there.
#include "job_shell.h"
#include "mlt/job/job.h"

namespace mlt {

using namespace job_detail;

void JobDir::clean_outputs(const std::string& archive, const std::string& log_dir) {
    ShellCommand c = remote_dir_command(remote_dir_);
    c.set("mlt_archive", archive);
    // A path of the settings: `~` and `$NAME` expand on the remote.
    if (log_dir.empty())
        c.set("mlt_logd", "");
    else
        c.path("mlt_logd", log_dir);
    c.add(scripts::job_clean_outputs);
    run_or_fail(remote(), c, "removing the remote logs (--clean)");
}

}  // namespace mlt
