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
    if (m.targets.size() == 1) {
        const Target& target = m.targets.front();
        Session session = Session::open(target.connect);
        SessionRemote remote(session);
        auto jobs = query_jobs(remote, target.remote_dir, name);
        std::fputs(format_jobs(jobs, target.remote_dir, remote.name()).c_str(), stdout);
        std::fflush(stdout);
        return exit_code::kOk;
    }
    // Several nodes: one table, a row per node; a node that cannot be asked has a row that
    // says why, the others are still shown, and the exit status is that node's error's.
    std::vector<NodeJobs> nodes;
    int code = exit_code::kOk;
    for (const Target& target : m.targets) {
        NodeJobs node;
        node.host = target.connect.host +
                    (target.connect.port ? ":" + std::to_string(target.connect.port) : "");
        try {
            Session session = Session::open(target.connect);
            SessionRemote remote(session);
            node.host = remote.name();
            node.jobs = query_jobs(remote, target.remote_dir, name);
        } catch (const Error& e) {
            if (is_signal(e.kind())) throw;
            node.problem = e.what();
            if (code == exit_code::kOk) code = e.code();
        }
        nodes.push_back(std::move(node));
    }
    std::fputs(format_node_jobs(nodes).c_str(), stdout);
    std::fflush(stdout);
    return code;
}

}  // namespace mlt
