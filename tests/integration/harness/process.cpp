#include "harness/process.h"

#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "harness/time_factor.h"

extern char** environ;

namespace mlt_test {
namespace {

using Clock = std::chrono::steady_clock;

// Once the main child has exited, keep reading for at most this long: a grandchild that
// inherited the pipes must not hold the test hostage.
const std::chrono::milliseconds kDrainGrace = scaled(std::chrono::milliseconds{2000});
constexpr std::chrono::milliseconds kPollSlice{50};
const std::chrono::milliseconds kEchoOffWait = scaled(std::chrono::milliseconds{2000});

// argv/envp as the NULL-terminated arrays exec wants; built before fork (no allocation after).
class CArgs {
  public:
    explicit CArgs(const std::vector<std::string>& items) {
        for (const auto& item : items) ptrs_.push_back(const_cast<char*>(item.c_str()));
        ptrs_.push_back(nullptr);
    }
    char** data() { return ptrs_.data(); }

  private:
    std::vector<char*> ptrs_;
};

void ignore_sigpipe() {
    // Writing the stdin of a child that already exited must give EPIPE, not kill the tests.
    static const bool done = [] {
        signal(SIGPIPE, SIG_IGN);
        return true;
    }();
    (void)done;
}

[[noreturn]] void exec_child(char** argv, char** envp) {
    // Restore what a shell would give the program.
    signal(SIGPIPE, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    execvpe(argv[0], argv, envp);
    const char* what = strerror(errno);
    (void)!write(STDERR_FILENO, "exec failed: ", 13);
    (void)!write(STDERR_FILENO, argv[0], strlen(argv[0]));
    (void)!write(STDERR_FILENO, ": ", 2);
    (void)!write(STDERR_FILENO, what, strlen(what));
    (void)!write(STDERR_FILENO, "\n", 1);
    _exit(127);
}

int decode_status(int status) {
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return -1;
}

int ms_until(Clock::time_point deadline, std::chrono::milliseconds cap) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() < 0) return 0;
    return static_cast<int>(std::min(left, cap).count());
}

// Kills the group and reaps the child; used when the deadline passed.
int kill_and_reap(pid_t pid) {
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return -1;
}

// waitpid(WNOHANG) that keeps the child's peak RSS (KiB) in `*peak_kib` once it is reaped.
pid_t reap(pid_t pid, int* status, long* peak_kib) {
    rusage usage{};
    const pid_t got = wait4(pid, status, WNOHANG, &usage);
    if (got == pid && peak_kib) *peak_kib = usage.ru_maxrss;
    return got;
}

// Waits (until `deadline`) for a child whose output is done, unless it already `exited`
// with `status`; fills the exit code, or kills it and marks the result timed out. The peak
// RSS goes to `*peak_kib` (when given) once reaped.
template <typename Result>  // ProcessResult or PtyResult
void finish_child(pid_t pid, bool exited, int status, Clock::time_point deadline, Result& result,
                  long* peak_kib = nullptr) {
    while (!exited) {
        if (reap(pid, &status, peak_kib) == pid) {
            exited = true;
            break;
        }
        if (Clock::now() >= deadline) break;
        poll(nullptr, 0, ms_until(deadline, std::chrono::milliseconds(10)));
    }
    if (!exited) {
        result.exit_code = kill_and_reap(pid);
        result.timed_out = true;
        return;
    }
    result.exit_code = decode_status(status);
}

// Appends what is readable on fd; returns false at EOF or error.
bool read_some(int fd, std::string* sink) {
    char buf[8192];
    ssize_t n = read(fd, buf, sizeof buf);
    if (n > 0) {
        sink->append(buf, static_cast<std::size_t>(n));
        return true;
    }
    return n < 0 && (errno == EINTR || errno == EAGAIN);
}

}  // namespace

std::vector<std::string> current_environment() {
    std::vector<std::string> env;
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) env.emplace_back(*e);
    return env;
}

ProcessResult run_process(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                          std::chrono::milliseconds timeout, const std::string& stdin_text) {
    if (argv.empty()) throw std::invalid_argument("run_process: empty argv");
    ignore_sigpipe();
    CArgs c_argv(argv);
    CArgs c_env(env);
    int in_pipe[2], out_pipe[2], err_pipe[2];
    if (pipe2(in_pipe, O_CLOEXEC) != 0 || pipe2(out_pipe, O_CLOEXEC) != 0 ||
        pipe2(err_pipe, O_CLOEXEC) != 0) {
        throw std::runtime_error(std::string("pipe2: ") + strerror(errno));
    }
    const auto deadline = Clock::now() + timeout;
    pid_t pid = fork();
    if (pid < 0) throw std::runtime_error(std::string("fork: ") + strerror(errno));
    if (pid == 0) {
        setsid();
        dup2(in_pipe[0], STDIN_FILENO);
        dup2(out_pipe[1], STDOUT_FILENO);
        dup2(err_pipe[1], STDERR_FILENO);
        exec_child(c_argv.data(), c_env.data());
    }
    close(in_pipe[0]);
    close(out_pipe[1]);
    close(err_pipe[1]);
    int in_fd = in_pipe[1];
    fcntl(in_fd, F_SETFL, O_NONBLOCK);
    std::size_t written = 0;
    if (stdin_text.empty()) {
        close(in_fd);
        in_fd = -1;
    }
    ProcessResult result;
    int fds[2] = {out_pipe[0], err_pipe[0]};
    std::string* sinks[2] = {&result.out, &result.err};
    bool exited = false;
    int status = 0;
    auto read_deadline = deadline;
    while (fds[0] >= 0 || fds[1] >= 0) {
        if (Clock::now() >= read_deadline) break;
        pollfd pfds[3];
        nfds_t n = 0;
        for (int fd : fds) {
            if (fd >= 0) pfds[n++] = {fd, POLLIN, 0};
        }
        if (in_fd >= 0) pfds[n++] = {in_fd, POLLOUT, 0};
        int rc = poll(pfds, n, ms_until(read_deadline, kPollSlice));
        if (rc < 0 && errno != EINTR) break;
        for (nfds_t i = 0; rc > 0 && i < n; ++i) {
            if (pfds[i].revents == 0) continue;
            if (pfds[i].fd == in_fd) {
                ssize_t w = write(in_fd, stdin_text.data() + written, stdin_text.size() - written);
                if (w > 0) written += static_cast<std::size_t>(w);
                if (w < 0 && errno != EAGAIN && errno != EINTR) written = stdin_text.size();
                if (written >= stdin_text.size()) {
                    close(in_fd);
                    in_fd = -1;
                }
                continue;
            }
            for (int k = 0; k < 2; ++k) {
                if (pfds[i].fd == fds[k] && !read_some(fds[k], sinks[k])) {
                    close(fds[k]);
                    fds[k] = -1;
                }
            }
        }
        if (!exited && reap(pid, &status, &result.max_rss_kib) == pid) {
            exited = true;
            read_deadline = std::min(deadline, Clock::now() + kDrainGrace);
        }
    }
    for (int fd : fds) {
        if (fd >= 0) close(fd);
    }
    if (in_fd >= 0) close(in_fd);
    finish_child(pid, exited, status, deadline, result, &result.max_rss_kib);
    return result;
}

PtyResult run_in_pty(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                     std::chrono::milliseconds timeout, const std::vector<ScriptStep>& script) {
    if (argv.empty()) throw std::invalid_argument("run_in_pty: empty argv");
    CArgs c_argv(argv);
    CArgs c_env(env);
    winsize size{};
    size.ws_row = 24;
    size.ws_col = 80;
    const auto deadline = Clock::now() + timeout;
    int master = -1;
    pid_t pid = forkpty(&master, nullptr, nullptr, &size);
    if (pid < 0) throw std::runtime_error(std::string("forkpty: ") + strerror(errno));
    if (pid == 0) exec_child(c_argv.data(), c_env.data());
    fcntl(master, F_SETFD, FD_CLOEXEC);
    PtyResult result;
    std::size_t search_from = 0;
    bool open = true;
    bool exited = false;
    int status = 0;
    Clock::time_point echo_wait_until{};
    bool waiting_echo = false;
    auto read_deadline = deadline;
    while (open && Clock::now() < read_deadline) {
        pollfd pfd{master, POLLIN, 0};
        int rc = poll(&pfd, 1, ms_until(read_deadline, std::chrono::milliseconds(10)));
        if (rc > 0 && !read_some(master, &result.output)) open = false;  // EIO: slave closed
        if (result.steps_done < script.size()) {
            const ScriptStep& step = script[result.steps_done];
            std::size_t at = result.output.find(step.expect, search_from);
            if (at != std::string::npos) {
                bool ready = true;
                if (step.secret) {
                    if (!waiting_echo) {
                        waiting_echo = true;
                        echo_wait_until = Clock::now() + kEchoOffWait;
                    }
                    termios attrs{};
                    bool echo_on = tcgetattr(master, &attrs) == 0 && (attrs.c_lflag & ECHO) != 0;
                    ready = !echo_on || Clock::now() >= echo_wait_until;
                }
                if (ready) {
                    (void)!write(master, step.reply.data(), step.reply.size());
                    search_from = at + step.expect.size();
                    ++result.steps_done;
                    waiting_echo = false;
                }
            }
        }
        if (!exited && waitpid(pid, &status, WNOHANG) == pid) {
            exited = true;
            read_deadline = std::min(deadline, Clock::now() + kDrainGrace);
        }
    }
    if (!exited && Clock::now() >= deadline) {
        // Decide before closing the master: the hangup of the close would end the child and
        // make a timeout look like an exit on SIGHUP.
        result.exit_code = kill_and_reap(pid);
        result.timed_out = true;
        close(master);
        return result;
    }
    close(master);
    finish_child(pid, exited, status, deadline, result);
    return result;
}

}  // namespace mlt_test
