#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace mlt_test {

// The outcome of run_process.
struct ProcessResult {
    int exit_code = -1;  // exit status, 128+signal if signalled, -1 on timeout
    std::string out;     // everything written to stdout
    std::string err;     // everything written to stderr
    bool timed_out = false;
    // The process's peak resident set size in KiB (wait4's ru_maxrss: the process itself,
    // or a child of its that it waited for when that one was bigger); -1 when not known.
    long max_rss_kib = -1;
};

// Runs argv (argv[0] searched in PATH) with exactly the environment `env` ("NAME=value"),
// stdin fed with stdin_text then closed, in a new session (own process group, no
// controlling terminal). On timeout the whole process group is killed and exit_code is -1.
// A program that cannot be started exits 127 with the reason on stderr.
ProcessResult run_process(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                          std::chrono::milliseconds timeout, const std::string& stdin_text = {});

// One exchange of a pty script: wait until the output contains `expect`, then write `reply`.
// With `secret`, the reply is written only once the terminal's echo is off (bounded wait),
// as a password prompt must do; a prompt that keeps echoing then shows the reply.
struct ScriptStep {
    ScriptStep(std::string expect_text, std::string reply_text, bool is_secret = false)
        : expect(std::move(expect_text)), reply(std::move(reply_text)), secret(is_secret) {}
    std::string expect;
    std::string reply;
    bool secret;
};

// The outcome of run_in_pty.
struct PtyResult {
    int exit_code = -1;          // as in ProcessResult
    std::string output;          // everything the program wrote to the terminal (and its echo)
    bool timed_out = false;      // the deadline passed and the process group was killed
    std::size_t steps_done = 0;  // script steps whose reply was written
};

// Runs argv on a new pseudo-terminal (controlling terminal of its own session) and plays
// `script` in order; each expected text is searched after the previous match. The whole
// run, script included, is bounded by `timeout`; then the process group is killed.
PtyResult run_in_pty(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                     std::chrono::milliseconds timeout, const std::vector<ScriptStep>& script);

// The environment of this process as "NAME=value" strings.
std::vector<std::string> current_environment();

}  // namespace mlt_test
