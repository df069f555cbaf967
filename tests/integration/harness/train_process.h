#pragma once

#include <sys/types.h>

#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "harness/process.h"

namespace mlt_test {

// A program running in the background while a test looks at it, e.g. `mlt ssh ... train`
// that gets a SIGINT mid-run. It starts in `cwd`, in a new session (own process group, no
// controlling terminal), with exactly `env`, stdin from /dev/null, started through the
// spawner (spawner.h); a thread collects stdout and stderr. The destructor kills the group
// (SIGKILL) if it still runs and reaps it.
class BackgroundProcess {
  public:
    // Throws std::runtime_error when it cannot fork; an exec failure exits 127.
    BackgroundProcess(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                      const std::string& cwd);
    ~BackgroundProcess();
    BackgroundProcess(const BackgroundProcess&) = delete;
    BackgroundProcess& operator=(const BackgroundProcess&) = delete;

    // The process id (also its process group id).
    pid_t pid() const { return pid_; }
    // Snapshots of what it has written so far.
    std::string out() const;
    std::string err() const;
    // Polls (bounded) until stdout (or stderr, with `in_stderr`) contains `needle`; false on
    // timeout or when the process ended without writing it.
    bool wait_for_output(const std::string& needle, std::chrono::milliseconds timeout,
                         bool in_stderr = false);
    // Sends `sig` to the process only (as a terminal's Ctrl+C reaches a program that has
    // no children of its own).
    void signal(int sig) const;
    // Waits (bounded) until a signal sent with signal() is no longer pending, i.e. the
    // process has taken it (so that a second one of the same kind is not merged with it);
    // false on timeout.
    bool wait_signal_taken(int sig, std::chrono::milliseconds timeout) const;
    // Waits (bounded) for the exit and the end of its output. On timeout the group is
    // killed and the result says timed_out; the output so far is kept. The result's
    // peak_rss_kib is the process's own (wait4), as run_process gives it.
    ProcessResult wait(std::chrono::milliseconds timeout);
    // The peak RSS in KiB (wait4) once reaped; -1 before.
    long peak_rss_kib() const { return peak_rss_kib_; }

  private:
    void read_loop(int out_fd, int err_fd);
    bool try_reap();

    pid_t pid_ = -1;
    bool reaped_ = false;
    int status_ = 0;
    long peak_rss_kib_ = -1;
    mutable std::mutex mutex_;
    std::string out_;
    std::string err_;
    bool output_closed_ = false;
    int stop_pipe_[2] = {-1, -1};  // wakes the reader when the destructor gives up on it
    std::thread reader_;
};

}  // namespace mlt_test
