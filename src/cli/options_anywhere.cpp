// The options of `mlt ssh` that every COMMAND also takes after its name and after MODEL.
#include <string>

#include "mlt/cli/commands.h"

namespace mlt::cli {

void accept_options_after_command(CLI::App& ssh, SshCommandLine& cli, int& verbosity) {
    // Every command, not a list of them: a command added later gets them too.
    for (CLI::App* command : ssh.get_subcommands([](CLI::App*) { return true; })) {
        // train declares its own (it also picks them out of the words after MODEL).
        if (command->get_option_no_throw("-h") == nullptr)
            add_connection_options(*command, cli, "Connection options (as before COMMAND)");
        if (command->get_option_no_throw("-v") == nullptr)
            add_verbose_flag(*command, verbosity,
                             "More detail on stderr (-vv: libssh protocol trace)");
    }
}

void accept_verbose_after_command(CLI::App& app, int& verbosity) {
    for (CLI::App* command : app.get_subcommands([](CLI::App*) { return true; }))
        if (command->get_option_no_throw("-v") == nullptr)
            add_verbose_flag(*command, verbosity, "More detail on stderr");
}

}  // namespace mlt::cli
