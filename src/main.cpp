// mlt: train machine-learning models on remote machines over SSH.
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "mlt/cli/app.h"
#include "mlt/ssh/counts.h"
#include "mlt/util/error.h"
#include "mlt/util/log.h"
#include "mlt/util/paths.h"
#include "mlt/util/text.h"

namespace {

// Copies argv for the parser, then blanks the value of --password in the process's own
// argument memory so that `ps` and /proc/<pid>/cmdline no longer show it.
std::vector<std::string> take_arguments(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    for (int i = 1; i < argc; ++i) {
        char* value = nullptr;
        if (std::strcmp(argv[i], "--password") == 0 && i + 1 < argc)
            value = argv[i + 1];
        else if (std::strncmp(argv[i], "--password=", 11) == 0)
            value = argv[i] + 11;
        if (value) std::memset(value, 'x', std::strlen(value));
    }
    return args;
}

// The one error line: whatever it quotes (a host name, remote stderr, a file name) is
// escaped and bounded, so it stays one readable line.
void print_error(const std::string& what, const std::string& hint) {
    spdlog::default_logger()->flush();
    constexpr size_t kMax = 1000;
    if (hint.empty())
        std::fprintf(stderr, "mlt: error: %s\n", mlt::printable(what, kMax).c_str());
    else
        std::fprintf(stderr, "mlt: error: %s (%s)\n", mlt::printable(what, kMax).c_str(),
                     mlt::printable(hint, kMax).c_str());
}

// `log`: the verbose file log, named in the hint of a failure that is more than a bad input
// (as MLTK's hint names its cli_logs file).
int report(const mlt::Error& e, const std::string& log = {}) {
    const bool more = !log.empty() && e.code() != mlt::exit_code_of(mlt::ErrorKind::usage) &&
                      !mlt::is_signal(e.kind()) && e.kind() != mlt::ErrorKind::internal;
    print_error(e.what(),
                more ? e.hint() + (e.hint().empty() ? "" : "; ") + "details: " + log : e.hint());
    return e.code();
}

// Output that could not be written (stdout closed early, as by `| head`) is said once on
// stderr instead of passing unnoticed; the exit status stays the command's own.
int finish(int code) {
    if (std::fflush(stdout) != 0 || std::ferror(stdout))
        std::fprintf(stderr, "mlt: warning: not all output was shown: standard output %s\n",
                     errno == EPIPE ? "was closed (broken pipe)" : "could not be written");
    return code;
}

}  // namespace

int main(int argc, char** argv) {
    // A closed pipe (stdout into `| head`, a ProxyCommand that exited) is an error to
    // report, never a silent death by SIGPIPE.
    std::signal(SIGPIPE, SIG_IGN);
    CLI::App app("mlt: train machine-learning models on remote machines over SSH", "mlt");
    mlt::cli::Action action;
    int verbosity = 0;
    mlt::cli::add_commands(app, action, verbosity);

    const std::vector<std::string> typed = take_arguments(argc, argv);
    try {
        std::vector<std::string> args = typed;
        std::reverse(args.begin(), args.end());  // CLI11 takes the vector back to front
        app.parse(args);
    } catch (const CLI::CallForHelp& e) {
        // `mlt shh -h H status`: -h is mlt's help, but the typo is what to report.
        if (const auto unknown = mlt::cli::unknown_command(app, typed)) return report(*unknown);
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        if (const auto unknown = mlt::cli::unknown_command(app, typed)) return report(*unknown);
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        if (const auto unknown = mlt::cli::unknown_command(app, typed)) return report(*unknown);
        return report(mlt::cli::in_mlt_words(app, e, typed));
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
    spdlog::debug("mlt {}: {}", MLT_VERSION,
                  app.get_subcommands().empty() ? "" : app.get_subcommands().front()->get_name());
    // What the command asked of the hosts' sshd, however it ended (-v).
    struct Counted {
        ~Counted() { spdlog::debug("ssh use: {}", mlt::describe(mlt::ssh_counts())); }
    } counted;
    try {
        if (!action) return report(mlt::cli::missing_command(app));
        return finish(action());
    } catch (const mlt::Error& e) {
        return finish(report(e, file_log));
    } catch (const std::exception& e) {
        print_error(std::string("internal: ") + e.what(),
                    "please report this with the output of -v");
        return finish(mlt::exit_code_of(mlt::ErrorKind::internal));
    }
}
