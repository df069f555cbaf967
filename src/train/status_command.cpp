#include <spdlog/spdlog.h>

#include <cstdio>

#include "mlt/job/status.h"
#include "mlt/ssh/remote.h"
#include "mlt/train/model.h"
#include "mlt/train/ssh_command.h"
#include "mlt/util/error.h"
#include "mlt/util/terminal.h"

namespace mlt {

int run_status(const SshCommandLine& cli, const std::string& model) {
    // The model's own settings (its sidecar, say a remote_dir of its own) as train reads them.
    const ModelSettings m = resolve_model_settings(cli, model, false, true);
    const std::string& name = m.model.name;
    for (const Target& target : m.targets) {
        Session session = Session::open(target.connect);
        SessionRemote remote(session);
        auto jobs = query_jobs(remote, target.remote_dir, name);
        if (m.targets.size() > 1) std::printf("== %s\n", remote.name().c_str());
        std::fputs(format_jobs(jobs, target.remote_dir, remote.name()).c_str(), stdout);
    }
    std::fflush(stdout);
    return exit_code::kOk;
}

}  // namespace mlt
