#pragma once
// `mlt completion bash|zsh`: a shell completion script written from the command definitions.

#include <string>
#include <utility>
#include <vector>

namespace mlt {

// One command of mlt as the completion sees it (mlt itself, mlt ssh, mlt ssh train...).
struct CompletionCommand {
    std::string path;                   // "mlt ssh train"
    std::vector<std::string> commands;  // the names of its subcommands
    std::vector<std::string> options;   // every name of every visible option: -h, --host
    std::vector<std::string> valued;    // those of `options` that take a value
    // The words an option's value is one of (keygen's -t: ed25519, rsa), by option name.
    std::vector<std::pair<std::string, std::vector<std::string>>> option_values;
    bool models = false;                    // its first argument is MODEL
    std::vector<std::string> first_values;  // else the words its first argument is one of
};

// The shells a completion script is written for.
inline const std::vector<std::string> kCompletionShells = {"bash", "zsh"};

// The completion script for `shell` (one of kCompletionShells) over `commands`: it completes
// commands, options, the values of options and arguments that have a fixed set, and MODEL
// with the names `mlt completion --models` prints. Throws mlt::Error (usage) for another shell.
std::string completion_script(const std::string& shell,
                              const std::vector<CompletionCommand>& commands);

// `mlt completion --models`: prints the models MODEL finds here (model_names over the user
// settings' model_paths), one a line; prints nothing when the settings cannot be read (a
// completion must not spill errors into the user's terminal). Returns 0.
int print_model_names();

}  // namespace mlt
