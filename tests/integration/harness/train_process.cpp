#include "harness/train_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include "harness/spawner.h"
#include "harness/time_factor.h"

namespace mlt_test {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::chrono::milliseconds kPollSlice{20};
// After the exit, output still buffered in the pipes is read for at most this long.
const std::chrono::milliseconds kDrainGrace = scaled(std::chrono::milliseconds{2000});

int decode_status(int status) {
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return -1;
}

void pause_a_little() {
    poll(nullptr, 0, static_cast<int>(kPollSlice.count()));
}

// waitpid for the spawned process (spawner.h), which also takes its own peak RSS (KiB).
pid_t reap(pid_t pid, int* status, int options, long* rss) {
    return spawn_wait(pid, status, options, rss);
}

}  // namespace

BackgroundProcess::BackgroundProcess(const std::vector<std::string>& argv,
                                     const std::vector<std::string>& env, const std::string& cwd) {
    if (argv.empty()) throw std::invalid_argument("BackgroundProcess: empty argv");
    // Writing to a closed pipe must give EPIPE, not kill the test binary.
    ::signal(SIGPIPE, SIG_IGN);
    int out_pipe[2], err_pipe[2];
    if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0 ||
        pipe2(stop_pipe_, O_CLOEXEC) != 0) {
        throw std::runtime_error(std::string("pipe2: ") + std::strerror(errno));
    }
    const int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    const int fds[3] = {null_fd, out_pipe[1], err_pipe[1]};
    pid_ = spawn(argv, env, cwd, fds);
    close(null_fd);
    close(out_pipe[1]);
    close(err_pipe[1]);
    reader_ = std::thread(
        [this, out_fd = out_pipe[0], err_fd = err_pipe[0]] { read_loop(out_fd, err_fd); });
}

BackgroundProcess::~BackgroundProcess() {
    if (!try_reap()) {
        kill(-pid_, SIGKILL);
        kill(pid_, SIGKILL);
        while (reap(pid_, &status_, 0, &peak_rss_kib_) < 0 && errno == EINTR) {
        }
        reaped_ = true;
    }
    (void)!write(stop_pipe_[1], "x", 1);
    if (reader_.joinable()) reader_.join();
    close(stop_pipe_[0]);
    close(stop_pipe_[1]);
}

void BackgroundProcess::read_loop(int out_fd, int err_fd) {
    int fds[2] = {out_fd, err_fd};
    std::string* sinks[2] = {&out_, &err_};
    char buf[8192];
    while (fds[0] >= 0 || fds[1] >= 0) {
        pollfd pfds[3] = {{fds[0], POLLIN, 0}, {fds[1], POLLIN, 0}, {stop_pipe_[0], POLLIN, 0}};
        int rc = poll(pfds, 3, -1);  // negative fds are ignored by poll
        if (rc < 0 && errno != EINTR) break;
        if (pfds[2].revents != 0) break;
        for (int k = 0; k < 2; ++k) {
            if (fds[k] < 0 || pfds[k].revents == 0) continue;
            ssize_t n = read(fds[k], buf, sizeof buf);
            if (n > 0) {
                std::lock_guard<std::mutex> lock(mutex_);
                sinks[k]->append(buf, static_cast<std::size_t>(n));
            } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
                close(fds[k]);
                fds[k] = -1;
            }
        }
    }
    for (int fd : fds) {
        if (fd >= 0) close(fd);
    }
    std::lock_guard<std::mutex> lock(mutex_);
    output_closed_ = true;
}

std::string BackgroundProcess::out() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return out_;
}

std::string BackgroundProcess::err() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return err_;
}

bool BackgroundProcess::wait_for_output(const std::string& needle,
                                        std::chrono::milliseconds timeout, bool in_stderr) {
    const auto deadline = Clock::now() + timeout;
    for (;;) {
        bool closed = false;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            if ((in_stderr ? err_ : out_).find(needle) != std::string::npos) return true;
            closed = output_closed_;
        }
        if (closed || Clock::now() >= deadline) return false;
        pause_a_little();
    }
}

void BackgroundProcess::signal(int sig) const {
    kill(pid_, sig);
}

bool BackgroundProcess::wait_signal_taken(int sig, std::chrono::milliseconds timeout) const {
    // /proc/<pid>/status lists pending signals as hex masks: SigPnd (thread) and ShdPnd
    // (process); bit sig-1 is `sig`.
    const std::string path = "/proc/" + std::to_string(pid_) + "/status";
    const unsigned long long bit = 1ULL << (sig - 1);
    const auto deadline = Clock::now() + timeout;
    for (;;) {
        std::ifstream in(path);
        std::string line;
        bool pending = false;
        while (std::getline(in, line)) {
            if (line.rfind("SigPnd:", 0) == 0 || line.rfind("ShdPnd:", 0) == 0) {
                pending = pending || (std::stoull(line.substr(7), nullptr, 16) & bit) != 0;
            }
        }
        if (!pending) return true;
        if (Clock::now() >= deadline) return false;
        poll(nullptr, 0, 1);
    }
}

bool BackgroundProcess::try_reap() {
    if (reaped_) return true;
    pid_t w = reap(pid_, &status_, WNOHANG, &peak_rss_kib_);
    if (w == pid_ || (w < 0 && errno == ECHILD)) reaped_ = true;
    return reaped_;
}

ProcessResult BackgroundProcess::wait(std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    ProcessResult result;
    while (!try_reap() && Clock::now() < deadline) pause_a_little();
    if (!reaped_) {
        kill(-pid_, SIGKILL);
        kill(pid_, SIGKILL);
        while (reap(pid_, &status_, 0, &peak_rss_kib_) < 0 && errno == EINTR) {
        }
        reaped_ = true;
        result.timed_out = true;
    }
    const auto drain_deadline = Clock::now() + kDrainGrace;
    for (;;) {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            if (output_closed_) break;
        }
        if (Clock::now() >= drain_deadline) break;
        pause_a_little();
    }
    result.exit_code = result.timed_out ? -1 : decode_status(status_);
    result.peak_rss_kib = peak_rss_kib_;
    result.out = out();
    result.err = err();
    return result;
}

}  // namespace mlt_test
