#include "mlt/util/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "mlt/util/error.h"
#include "mlt/util/interrupt.h"

namespace mlt {

namespace {

using Clock = std::chrono::steady_clock;

// The child's side after fork: only async-signal-safe calls until exec.
[[noreturn]] void exec_child(char* const* argv, int out, int in, int err_pipe) {
    ::setpgid(0, 0);
    ::dup2(in, STDIN_FILENO);
    ::dup2(out, STDOUT_FILENO);
    ::dup2(out, STDERR_FILENO);
    ::execvp(argv[0], argv);
    int e = errno;
    // The parent reads errno from this close-on-exec pipe: a failed exec, not an exit 127.
    [[maybe_unused]] ssize_t n = ::write(err_pipe, &e, sizeof e);
    ::_exit(127);
}

// Splits what arrives into lines for `on_line`.
class LineSplitter {
  public:
    explicit LineSplitter(const std::function<void(const std::string&)>& on_line)
        : on_line_(on_line) {}
    void add(const char* data, size_t size) {
        pending_.append(data, size);
        size_t nl;
        while ((nl = pending_.find('\n')) != std::string::npos) {
            on_line_(pending_.substr(0, nl));
            pending_.erase(0, nl + 1);
        }
    }
    void finish() {
        if (!pending_.empty()) on_line_(pending_);
        pending_.clear();
    }

  private:
    const std::function<void(const std::string&)>& on_line_;
    std::string pending_;
};

struct Fd {
    int fd = -1;
    ~Fd() {
        if (fd >= 0) ::close(fd);
    }
    void reset() {
        if (fd >= 0) ::close(fd);
        fd = -1;
    }
};

// Reads the child's output until it closes it, the time is up or a signal is pending;
// true when the output ended.
bool read_output(int fd, Clock::time_point deadline, LineSplitter& lines) {
    char buf[4096];
    for (;;) {
        if (interrupt_pending() || leave_signal() != 0) return false;
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
        if (left.count() <= 0) return false;
        pollfd p{fd, POLLIN, 0};
        // Short slices so that a pending signal is seen soon.
        int r = ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 200)));
        if (r < 0 && errno != EINTR) return false;
        if (r <= 0) continue;
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (n <= 0) return true;
        lines.add(buf, static_cast<size_t>(n));
    }
}

int wait_status(pid_t pid) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

}  // namespace

ChildResult run_child(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                      const std::function<void(const std::string&)>& on_line) {
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    int out[2], err[2];
    if (::pipe2(out, O_CLOEXEC) != 0)
        throw io_error("cannot create a pipe: " + std::string(std::strerror(errno)));
    Fd out_read{out[0]}, out_write{out[1]};
    if (::pipe2(err, O_CLOEXEC) != 0)
        throw io_error("cannot create a pipe: " + std::string(std::strerror(errno)));
    Fd err_read{err[0]}, err_write{err[1]};
    Fd null_in{::open("/dev/null", O_RDONLY | O_CLOEXEC)};
    const auto deadline = Clock::now() + timeout;
    pid_t pid = ::fork();
    if (pid < 0) throw io_error("cannot start " + argv.at(0) + ": " + std::strerror(errno));
    if (pid == 0) exec_child(args.data(), out[1], null_in.fd, err[1]);
    ::setpgid(pid, pid);  // also here: no race with the kill below
    out_write.reset();
    err_write.reset();
    ChildResult result;
    int e = 0;
    if (::read(err_read.fd, &e, sizeof e) == static_cast<ssize_t>(sizeof e)) {
        wait_status(pid);
        result.start_errno = e;
        return result;
    }
    result.started = true;
    LineSplitter lines(on_line);
    if (!read_output(out_read.fd, deadline, lines)) {
        ::kill(-pid, SIGKILL);
        result.timed_out = !interrupt_pending() && leave_signal() == 0;
    }
    lines.finish();
    result.exit_code = wait_status(pid);
    throw_if_interrupted();
    return result;
}

}  // namespace mlt
