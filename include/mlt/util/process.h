#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace mlt {

// How a local child process ended.
struct ChildResult {
    bool started = false;  // false: argv[0] could not be executed (start_errno says why)
    int start_errno = 0;
    bool timed_out = false;  // killed (with its process group) when the time was up
    int exit_code = -1;      // its exit status; 128+N when signal N ended it
};

// Runs argv[0] (looked up in PATH, no shell) with `argv` in a process group of its own, stdin
// from /dev/null, and hands each line it writes to stdout or stderr (without the newline) to
// `on_line`. Returns once the child has exited, or when it has not exited after `timeout`
// or a signal for mlt is pending, whatever it does with its output; either way its whole
// group is then killed (SIGKILL), so nothing it started is left running or holding the
// output. A pending signal then throws mlt::Error (interrupted). Throws mlt::Error (io) when
// no pipe or process can be created. `stop`, when given and set (by another thread), ends it
// as the timeout does, within 0.1 s, with timed_out false.
ChildResult run_child(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                      const std::function<void(const std::string&)>& on_line,
                      const std::atomic<bool>* stop = nullptr);

// As run_child, with the child's stdin read from the file `stdin_path` instead of /dev/null
// (a notify_cmd's event JSON). A file that cannot be opened throws mlt::Error (io).
ChildResult run_child_with_input(const std::string& stdin_path,
                                 const std::vector<std::string>& argv,
                                 std::chrono::milliseconds timeout,
                                 const std::function<void(const std::string&)>& on_line,
                                 const std::atomic<bool>* stop = nullptr);

// As run_child_with_input, with the child's stderr apart: its lines go to `on_err` once the
// child has ended (at most 1 MiB of them), those of stdout to `on_line` as they come (a CLI's
// JSON on stdout, its warnings on stderr).
ChildResult run_child_split(const std::string& stdin_path, const std::vector<std::string>& argv,
                            std::chrono::milliseconds timeout,
                            const std::function<void(const std::string&)>& on_line,
                            const std::function<void(const std::string&)>& on_err,
                            const std::atomic<bool>* stop = nullptr);

}  // namespace mlt
