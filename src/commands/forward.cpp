// `forward` and `tensorboard`: a port of the remote's loopback reached here over the SSH
// connection (Session::forward), and TensorBoard started there for it.
#include "mlt/commands/forward.h"

#include <cstdio>
#include <optional>

#include "mlt/commands/model_settings.h"
#include "mlt/job/job.h"
#include "mlt/ssh/remote.h"
#include "mlt/util/error.h"
#include "mlt/util/interrupt.h"
#include "mlt/util/reporter.h"
#include "mlt/util/text.h"

namespace mlt {

namespace {

// The one target of a command that works on one host.
Target one_target(const ModelSettings& m, const std::string& command) {
    if (m.targets.size() != 1)
        throw usage_error(
            command + " works on one host; " + std::to_string(m.targets.size()) + " were given",
            "give one -h");
    return m.targets.front();
}

// Forwards 127.0.0.1:`local` to the remote's `remote_port` over `session` until a Ctrl+C
// (taken here: the caller goes on); a lost link or SIGTERM/SIGHUP goes up.
void forward_until_ctrl_c(Session& session, int local, int remote_port) {
    try {
        session.forward(local, "127.0.0.1", remote_port, [&](int port) {
            std::printf("forwarding http://127.0.0.1:%d to port %d on %s; Ctrl+C to stop\n", port,
                        remote_port, session.display_name().c_str());
            std::fflush(stdout);
        });
    } catch (const Error& e) {
        if (e.kind() != ErrorKind::interrupted || leave_signal() != 0) throw;
        acknowledge_interrupt();
    }
}

}  // namespace

int run_forward(const SshCommandLine& cli, const std::string& ports) {
    const auto colon = ports.find(':');
    const auto local =
        colon == std::string::npos ? std::nullopt : parse_decimal(ports.substr(0, colon), 0, 65535);
    const auto remote_port = colon == std::string::npos
                                 ? std::nullopt
                                 : parse_decimal(ports.substr(colon + 1), 1, 65535);
    if (!local || !remote_port)
        throw usage_error("forward " + printable(ports) + ": not LOCAL:REMOTE ports",
                          "e.g. 'forward 8888:8888' (LOCAL 0: a free port)");
    install_interrupt_handler();
    const Target target = one_target(resolve_model_settings(cli, "", false, true), "forward");
    Session session = Session::open(target.connect);
    forward_until_ctrl_c(session, static_cast<int>(*local), static_cast<int>(*remote_port));
    return exit_code::kOk;
}

int run_tensorboard(const SshCommandLine& cli, const std::string& model, bool test, int port,
                    int local_port) {
    install_interrupt_handler();
    const ModelSettings m = resolve_model_settings(cli, model, test, true);
    const Target target = one_target(m, "tensorboard");
    Session session = Session::open(target.connect);
    SessionRemote remote(session);
    JobDir(remote, target.remote_dir, m.model.name).start_tensorboard(port);
    try {
        forward_until_ctrl_c(session, local_port < 0 ? port : local_port, port);
    } catch (...) {
        try {
            JobDir(remote, target.remote_dir, m.model.name).stop_tensorboard();
        } catch (const Error& e) {
            reporter().warning("tensorboard on " + remote.name() + " may still run: " + e.what());
        }
        throw;
    }
    JobDir(remote, target.remote_dir, m.model.name).stop_tensorboard();
    std::printf("stopped tensorboard on %s\n", remote.name().c_str());
    return exit_code::kOk;
}

}  // namespace mlt
