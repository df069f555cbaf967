#pragma once
// `mlt ssh ... forward` and `tensorboard`: a remote loopback port reached from here.

#include <string>

#include "mlt/commands/targets.h"

namespace mlt {

// `mlt ssh -h H forward LOCAL:REMOTE`: 127.0.0.1:LOCAL here (0: a free port) reaches port
// REMOTE on the host's loopback over the SSH connection, until Ctrl+C (then exit 0).
int run_forward(const SshCommandLine& cli, const std::string& ports);

// `mlt ssh -h H tensorboard MODEL [--port P] [--local-port L]`: start_tensorboard on the
// host, its port forwarded to L here (-1: P) as run_forward does, and on Ctrl+C the remote
// TensorBoard stopped (exit 0).
int run_tensorboard(const SshCommandLine& cli, const std::string& model, bool test, int port,
                    int local_port);

}  // namespace mlt
