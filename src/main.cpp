// mlt: train machine-learning models on remote machines over SSH.
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "mlt/cli/commands.h"
#include "mlt/util/error.h"
#include "mlt/util/log.h"
#include "mlt/util/paths.h"

namespace {

// Copies argv for the parser, then blanks the value of --password in the process's own
// argument memory so that `ps` and /proc/<pid>/cmdline no longer show it.
std::vector<std::string> take_arguments(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    for (int i = 1; i < argc; ++i) {
        char* value = nullptr;
        if (std::strcmp(argv[i], "--password") == 0 && i + 1 < argc) value = argv[i + 1];
        else if (std::strncmp(argv[i], "--password=", 11) == 0) value = argv[i] + 11;
        if (value) std::memset(value, 'x', std::strlen(value));
    }
    return args;
}

int report(const mlt::Error& e) {
    spdlog::default_logger()->flush();
    if (e.hint().empty())
        std::fprintf(stderr, "mlt: error: %s\n", e.what());
    else
        std::fprintf(stderr, "mlt: error: %s (%s)\n", e.what(), e.hint().c_str());
    return e.code();
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app("mlt: train machine-learning models on remote machines over SSH", "mlt");
    app.set_version_flag("--version", std::string("mlt ") + MLT_VERSION);
    // No minimum: CLI11 would then report a missing command instead of naming the unknown
    // option or command the user actually typed. At most one: a later word naming a command
    // (mlt ssh train jobs) is an argument.
    app.require_subcommand(0, 1);
    app.footer(
        "Examples:\n"
        "  mlt ssh -h root@ssh4.example.net -p 35023 -i ~/.ssh/id_vast status\n"
        "  mlt ssh-keygen vast\n"
        "  mlt jobs\n"
        "Run 'mlt COMMAND --help' for the options of a command. Docs: docs/usage.md");
    mlt::cli::Action action;
    int verbosity = 0;
    mlt::cli::add_ssh_command(app, action, verbosity);
    mlt::cli::add_ssh_keygen_command(app, action);
    mlt::cli::add_jobs_command(app, action);

    try {
        std::vector<std::string> args = take_arguments(argc, argv);
        std::reverse(args.begin(), args.end());  // CLI11 takes the vector back to front
        app.parse(args);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        std::fprintf(stderr, "mlt: error: %s (run 'mlt --help' for usage)\n", e.what());
        return mlt::exit_code::kUsage;
    } catch (const mlt::Error& e) {
        return report(e);  // a command's own check of its arguments (train MODEL ARGS...)
    }

    std::string file_log;
    try {
        file_log = mlt::mltk_dir() + "/cli_logs/mlt.log";
    } catch (const mlt::Error&) {
        // no home directory: no file log; the command itself reports what it needs
    }
    mlt::setup_logging(verbosity, file_log);
    spdlog::debug("mlt {}: {}", MLT_VERSION, app.get_subcommands().empty() ? "" : app.get_subcommands().front()->get_name());
    try {
        if (!action) {
            const bool ssh = app.got_subcommand("ssh");
            std::fprintf(stderr, "mlt: error: %s (run '%s --help' for usage)\n",
                         ssh ? "mlt ssh needs a COMMAND: train, status, logs, stop or download" : "missing command: ssh, ssh-keygen or jobs",
                         ssh ? "mlt ssh" : "mlt");
            return mlt::exit_code::kUsage;
        }
        return action();
    } catch (const mlt::Error& e) {
        return report(e);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "mlt: error: internal: %s (please report this with the output of -v)\n",
                     e.what());
        return 1;
    }
}
