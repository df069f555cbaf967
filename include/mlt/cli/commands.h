#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <string>

#include "mlt/commands/forward.h"
#include "mlt/commands/job_commands.h"
#include "mlt/commands/status.h"
#include "mlt/commands/targets.h"
#include "mlt/commands/train.h"

namespace mlt::cli {

// What a subcommand leaves for main to run after parsing: returns the exit code.
using Action = std::function<int()>;
// What `mlt ssh ... train` runs once parsed: run_train, or a test's stand-in.
using TrainRunner = std::function<int(const SshCommandLine&, const TrainOptions&)>;

// Each adds one subcommand with its options to `app`; when that subcommand is chosen, parsing
// stores the work to do in `action`. Declared options only: the logic lives in the core.
// add_ssh_command returns the connection options that parsing fills (for a test to read).
std::shared_ptr<const SshCommandLine> add_ssh_command(CLI::App& app, Action& action, int& verbosity,
                                                      TrainRunner train = run_train);
// The job subcommands of `mlt ssh` (train, logs, stop, download), sharing its options, and
// the options of train that `mlt ssh` also takes before COMMAND (as MLTK's `ssh` does).
void add_ssh_job_commands(CLI::App& ssh, Action& action, const std::shared_ptr<SshCommandLine>& cli,
                          int& verbosity, TrainRunner train);
void add_ssh_keygen_command(CLI::App& app, Action& action);
void add_jobs_command(CLI::App& app, Action& action);
// `mlt completion SHELL`: prints the completion script of every command `app` declares when
// it runs (so declare it anywhere); its hidden --models lists the models MODEL finds here.
void add_completion_command(CLI::App& app, Action& action);

// -h, -p, -i/--identity_file, --password, -o, -F: declared on `mlt ssh` and again on each of
// its commands (MLTK's train takes them after MODEL too); each writes `cli` (-h adds a host,
// -o adds an option, the others: the last one wins). A name `app` declares already is left out.
void add_connection_options(CLI::App& app, SshCommandLine& cli, const std::string& group);
// -v/--verbose: each one raises `verbosity`, wherever it stands.
void add_verbose_flag(CLI::App& app, int& verbosity, const std::string& help);
// Declares the connection options and -v on every command of `ssh` that lacks them (train has
// its own), writing the same `cli` and `verbosity` as before COMMAND: they may then stand
// before COMMAND, after it and after MODEL alike. Call it once every command is declared.
// A command that declares one of those names itself keeps it (tensorboard's --port: -p only
// is the SSH port there); one that declares all the names of an option makes CLI11 throw.
void accept_options_after_command(CLI::App& ssh, SshCommandLine& cli, int& verbosity);
// Declares -v on every command of `app` (mlt's top level) that lacks it.
void accept_verbose_after_command(CLI::App& app, int& verbosity);
// For the callback of an `mlt ssh` COMMAND other than train: throws CLI::ValidationError
// when a train-only option (--clean, --force, --resume, --wait...) was given before it.
void reject_train_flags(const CLI::App& ssh, const std::string& command);
// A transform for a numeric option: plain decimal within [lo, hi], handed on as plain
// digits. CLI11 alone would take `0x8fb` and `010` (octal) as numbers.
CLI::Validator decimal_in(long long lo, long long hi);
// A check for a real-number option: a plain finite decimal (parse_real) within [lo, hi], and
// above `lo` when `above_lo`; else "'TEXT' is not <expected>".
CLI::Validator real_in(double lo, double hi, bool above_lo, const std::string& expected);

// A check for a path or name that may not be empty: `-i "$KEY"` with KEY unset would
// otherwise mean "no key given", and `stop ''` would reach the remote.
CLI::Validator non_empty(const std::string& what, const std::string& hint);

// The help layout of `mlt ssh` and its commands: flag pairs shown as `--clean, --no-clean`;
// a non-empty `usage_tail` (" MODEL [ARGS...]") is added to the usage line.
std::shared_ptr<CLI::Formatter> help_formatter(const std::string& usage_tail = {});

}  // namespace mlt::cli
