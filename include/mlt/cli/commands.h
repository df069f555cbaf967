#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>

#include "mlt/train/ssh_command.h"

namespace mlt::cli {

// What a subcommand leaves for main to run after parsing: returns the exit code.
using Action = std::function<int()>;

// Each adds one subcommand with its options to `app`; when that subcommand is chosen, parsing
// stores the work to do in `action`. Declared options only: the logic lives in the core.
void add_ssh_command(CLI::App& app, Action& action, int& verbosity);
// The job subcommands of `mlt ssh` (train, logs, stop, download), sharing its options.
void add_ssh_job_commands(CLI::App& ssh, Action& action,
                          const std::shared_ptr<SshCommandLine>& cli, int& verbosity);
void add_ssh_keygen_command(CLI::App& app, Action& action);
void add_jobs_command(CLI::App& app, Action& action);

}  // namespace mlt::cli
