// run_child: a local child process without a shell, its lines, a time bound on its group.
#include "mlt/util/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "mlt/util/error.h"
#include "mlt/util/interrupt.h"

namespace mlt {

namespace {

using Clock = std::chrono::steady_clock;

// The child's side after fork: only async-signal-safe calls until exec.
[[noreturn]] void exec_child(char* const* argv, int out, int err, int in, int err_pipe) {
    ::setpgid(0, 0);
    ::dup2(in, STDIN_FILENO);
    ::dup2(out, STDOUT_FILENO);
    ::dup2(err >= 0 ? err : out, STDERR_FILENO);
    ::execvp(argv[0], argv);
    int e = errno;
    // The parent reads errno from this close-on-exec pipe: a failed exec, not an
    // exit 127.
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

// Reads what the (non-blocking) output holds now, at most 256 KiB (so that a
// chatty child cannot keep the caller from its deadline); false once it has
// ended.
bool drain(int fd, LineSplitter& lines) {
    char buf[4096];
    for (int reads = 0; reads < 64;) {
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n > 0) {
            lines.add(buf, static_cast<size_t>(n));
            ++reads;
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else {
            return n < 0 && errno == EAGAIN;
        }
    }
    return true;
}

// Whether the child has exited; it stays a zombie (WNOWAIT), so its pid, which
// names its process group, cannot be reused before that group is killed.
bool child_exited(pid_t pid) {
    siginfo_t info{};
    while (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0)
        if (errno != EINTR) return true;  // not ours to wait for: nothing left to watch
    return info.si_pid == pid;
}

// A descriptor that becomes readable when the child `pid` exits (pidfd, Linux 5.3), or -1.
int exit_fd(pid_t pid) {
#ifdef SYS_pidfd_open
    return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
    (void)pid;
    return -1;
#endif
}

// Hands the child's output to `lines` until the child has exited (true), or the
// time is up, a signal for mlt is pending or `stop` is set (false). A process the child left
// behind holding the output open does not keep this waiting. `output_open`
// becomes false when the output has ended. `exited` (-1: none) wakes the wait at
// the child's exit: its output ends a moment before it exits, and without it the
// next look came a whole slice later (up to 0.1 s of every spec load).
bool watch(pid_t pid, int fd, int exited, Clock::time_point deadline, LineSplitter& lines,
           bool& output_open, const std::atomic<bool>* stop) {
    for (;;) {
        // A deferred step's child (a marketplace's create) runs to its end or its timeout.
        if (!interrupts_deferred() && (interrupt_pending() || leave_signal() != 0)) return false;
        if (stop && *stop) return false;
        if (child_exited(pid)) return true;
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
        if (left.count() <= 0) return false;
        // Short slices so that a pending signal and the child's exit are seen soon.
        pollfd p[2];
        nfds_t n = 0;
        if (output_open) p[n++] = {fd, POLLIN, 0};
        if (exited >= 0) p[n++] = {exited, POLLIN, 0};
        // Without `exited`, an ended output leaves only short slices to see the exit.
        const long long most = exited >= 0 || output_open ? 100 : 5;
        int slice = static_cast<int>(std::min<long long>(left.count(), most));
        int r = ::poll(p, n, slice);
        if (r < 0 && errno != EINTR) return false;
        if (r > 0 && output_open && p[0].revents != 0) output_open = drain(fd, lines);
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
                      const std::function<void(const std::string&)>& on_line,
                      const std::atomic<bool>* stop) {
    return run_child_with_input("/dev/null", argv, timeout, on_line, stop);
}

ChildResult run_child_with_input(const std::string& stdin_path,
                                 const std::vector<std::string>& argv,
                                 std::chrono::milliseconds timeout,
                                 const std::function<void(const std::string&)>& on_line,
                                 const std::atomic<bool>* stop) {
    return run_child_split(stdin_path, argv, timeout, on_line, nullptr, stop);
}

ChildResult run_child_split(const std::string& stdin_path, const std::vector<std::string>& argv,
                            std::chrono::milliseconds timeout,
                            const std::function<void(const std::string&)>& on_line,
                            const std::function<void(const std::string&)>& on_err,
                            const std::atomic<bool>* stop) {
    // stderr apart: an unnamed file, read once the child has ended.
    Fd err_file;
    if (on_err) {
        const char* tmp = ::getenv("TMPDIR");
        const std::string dir = tmp && *tmp ? tmp : "/tmp";
        err_file.fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
        if (err_file.fd < 0) {  // a file system without O_TMPFILE (overlayfs before 6.6)
            std::string name = dir + "/mlt-stderr-XXXXXX";
            err_file.fd = ::mkostemp(name.data(), O_CLOEXEC);
            if (err_file.fd >= 0) ::unlink(name.c_str());
        }
        if (err_file.fd < 0)
            throw io_error("cannot create a file for " + argv.at(0) +
                           "'s stderr: " + std::strerror(errno));
    }
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
    Fd in{::open(stdin_path.c_str(), O_RDONLY | O_CLOEXEC)};
    if (in.fd < 0)
        throw io_error("cannot read " + stdin_path + ": " + std::string(std::strerror(errno)));
    // Only mlt's end: the child's stays blocking (a pipe's ends are separate
    // descriptions).
    ::fcntl(out_read.fd, F_SETFL, ::fcntl(out_read.fd, F_GETFL) | O_NONBLOCK);
    const auto deadline = Clock::now() + timeout;
    pid_t pid = ::fork();
    if (pid < 0) throw io_error("cannot start " + argv.at(0) + ": " + std::strerror(errno));
    if (pid == 0) exec_child(args.data(), out[1], err_file.fd, in.fd, err[1]);
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
    bool output_open = true;
    Fd exited{exit_fd(pid)};
    const bool ended = watch(pid, out_read.fd, exited.fd, deadline, lines, output_open, stop);
    // The whole group goes, the child (if still running) and whatever it left
    // behind; the child is not reaped yet, so its group id still names its group.
    ::kill(-pid, SIGKILL);
    if (ended && output_open) drain(out_read.fd, lines);  // what it wrote before it exited
    result.timed_out = !ended && !interrupt_pending() && leave_signal() == 0 && !(stop && *stop);
    lines.finish();
    result.exit_code = wait_status(pid);
    throw_if_interrupted();
    if (on_err) {
        LineSplitter err_lines(on_err);
        char buf[4096];
        ssize_t n;
        size_t total = 0;
        ::lseek(err_file.fd, 0, SEEK_SET);
        while (total < (1u << 20) && (n = ::read(err_file.fd, buf, sizeof buf)) > 0) {
            err_lines.add(buf, static_cast<size_t>(n));
            total += static_cast<size_t>(n);
        }
        err_lines.finish();
    }
    return result;
}

}  // namespace mlt
