// The whole command line of mlt (its commands, the help's footer) and its lists of commands.
#include "mlt/cli/app.h"

#include <iterator>

#include "mlt/util/error.h"

namespace mlt::cli {

std::vector<std::string> command_names(const CLI::App& level) {
    std::vector<std::string> names;
    // get_subcommands() without a filter gives the parsed ones only; this gives all.
    for (const CLI::App* sub :
         const_cast<CLI::App&>(level).get_subcommands([](CLI::App*) { return true; }))
        names.push_back(sub->get_name());
    return names;
}

std::string command_list(const CLI::App& level) {
    const std::vector<std::string> names = command_names(level);
    std::string list;
    for (size_t i = 0; i < names.size(); ++i) {
        if (i > 0) list += i + 1 == names.size() ? " or " : ", ";
        list += names[i];
    }
    return list;
}

std::string exit_code_help() {
    std::string text = "Exit status:\n";
    for (const ExitCodeRow& row : kExitCodeTable) {
        std::string code = row.codes;
        code.resize(std::max<size_t>(code.size(), 4), ' ');
        text += "  " + code + " " + row.meaning + "\n";
    }
    text.pop_back();  // CLI11 ends the footer's line itself
    return text;
}

void add_commands(CLI::App& app, Action& action, int& verbosity) {
    app.set_version_flag("--version", std::string("mlt ") + MLT_VERSION);
    // No minimum: CLI11 would then report a missing command instead of naming the unknown
    // option or command the user actually typed. At most one: a later word naming a command
    // (mlt ssh train jobs) is an argument.
    app.require_subcommand(0, 1);
    add_ssh_command(app, action, verbosity);
    add_ssh_keygen_command(app, action);
    add_jobs_command(app, action);
    add_completion_command(app, action);
    accept_verbose_after_command(app, verbosity);
    app.footer(
        "Examples:\n"
        "  mlt ssh -h root@ssh4.example.net -p 35023 -i ~/.ssh/id_vast status\n"
        "  mlt ssh-keygen vast\n"
        "  mlt jobs\n"
        "Run 'mlt COMMAND --help' for the options of a command. Docs: docs/usage.md\n" +
        exit_code_help());
}

}  // namespace mlt::cli
