#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "mlt/cli/commands.h"
#include "mlt/commands/completion.h"
#include "mlt/util/error.h"

namespace mlt::cli {

// Declares all of mlt on `app` (named "mlt"): --version, the commands ssh, ssh-keygen, jobs and
// completion with their options (-v on each), and the help's footer ending with the exit-code
// table. As the add_* functions: parsing stores the work to do in `action`.
void add_commands(CLI::App& app, Action& action, int& verbosity);

// The commands declared on `level` (mlt, or mlt ssh), in their order.
std::vector<std::string> command_names(const CLI::App& level);
// The same as prose: "train, logs, ... or forward".
std::string command_list(const CLI::App& level);
// Every command of `root` (mlt) and below it, as the completion script sees it: its path,
// subcommands, visible options, the values of options with a fixed set ("ed25519|rsa"), and
// whether its first argument is MODEL. Walked from the definitions, so nothing is listed twice.
std::vector<CompletionCommand> completion_commands(const CLI::App& root);
// The exit-code table (kExitCodeTable) as the end of a --help: a title, then one line per code.
std::string exit_code_help();

// When the user typed a word that is no command where a command belongs (`mlt shh ...`,
// `mlt ssh -h H trian m`), the usage error naming it, with "did you mean" when a command is
// close and every command of that level; else nothing. Looks at what `app` parsed so far,
// so that a --help after the word does not hide it.
std::optional<Error> unknown_command(const CLI::App& app, const std::vector<std::string>& typed);
// A CLI11 parse error in mlt's words (what, where, what to do): a usage error, exit 2.
Error in_mlt_words(const CLI::App& app, const CLI::ParseError& e,
                   const std::vector<std::string>& typed);
// `mlt` or `mlt ssh` without a command: the usage error naming every command of that level.
Error missing_command(const CLI::App& app);

}  // namespace mlt::cli
