#pragma once
// `mlt ssh ... status`: the job table of every node.

#include <string>

#include "mlt/commands/targets.h"

namespace mlt {

// `mlt ssh ... status [MODEL]`: prints the job table of every node; returns the exit code.
int run_status(const SshCommandLine& cli, const std::string& model);

}  // namespace mlt
