#include "harness/spawner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>

namespace mlt_test {
namespace {

// A request is one datagram: "cwd\0argc\0argv...\0env...\0" with the three fds attached.
constexpr size_t kMaxRequest = 256 * 1024;

// What the helper sends back: the pid of a start (or -errno), or an exit.
struct Reply {
    char type = 0;  // 's' started, 'x' exited
    pid_t pid = 0;
    int status = 0;
    long rss = -1;
};

std::vector<char*> c_array(std::vector<std::string>& items) {
    std::vector<char*> ptrs;
    for (auto& item : items) ptrs.push_back(item.data());
    ptrs.push_back(nullptr);
    return ptrs;
}

[[noreturn]] void exec_failed(int err, const std::string& what) {
    const std::string text = "exec failed: " + what + ": " + std::strerror(err) + "\n";
    (void)!write(STDERR_FILENO, text.data(), text.size());
    _exit(127);
}

// In the helper: the child's side of a start.
[[noreturn]] void become(std::vector<std::string>& parts, size_t argc, const int fds[3], int sock) {
    std::vector<std::string> argv(parts.begin() + 2, parts.begin() + 2 + argc);
    std::vector<std::string> env(parts.begin() + 2 + argc, parts.end());
    std::vector<char*> c_argv = c_array(argv), c_env = c_array(env);
    setsid();
    for (int i = 0; i < 3; ++i) dup2(fds[i], i);
    close(sock);
    signal(SIGPIPE, SIG_DFL);
    signal(SIGCHLD, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    if (!parts[0].empty() && chdir(parts[0].c_str()) != 0) exec_failed(errno, "chdir " + parts[0]);
    execvpe(c_argv[0], c_argv.data(), c_env.data());
    exec_failed(errno, argv[0]);
}

// In the helper: reads one request and starts it; false when the test binary has gone.
bool start_one(int sock, std::vector<char>& buf) {
    int fds[3] = {-1, -1, -1};
    char control[CMSG_SPACE(sizeof fds)];
    iovec iov{buf.data(), buf.size()};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    const ssize_t n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
    if (n < 0 && errno == EINTR) return true;
    if (n <= 0) return false;
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
            std::memcpy(fds, CMSG_DATA(c), sizeof fds);
    std::vector<std::string> parts;
    for (size_t at = 0; at < static_cast<size_t>(n);) {
        const void* zero = std::memchr(buf.data() + at, '\0', static_cast<size_t>(n) - at);
        const size_t end = zero ? static_cast<size_t>(static_cast<const char*>(zero) - buf.data())
                                : static_cast<size_t>(n);
        parts.emplace_back(buf.data() + at, end - at);
        at = end + 1;
    }
    Reply reply{'s', -EINVAL, 0, -1};
    const size_t argc = parts.size() >= 2 ? std::strtoul(parts[1].c_str(), nullptr, 10) : 0;
    if (argc > 0 && parts.size() >= 2 + argc) {
        const pid_t pid = fork();
        if (pid == 0) become(parts, argc, fds, sock);
        reply.pid = pid < 0 ? -errno : pid;
    }
    for (int fd : fds)
        if (fd >= 0) close(fd);
    return send(sock, &reply, sizeof reply, 0) == sizeof reply;
}

void on_child(int) {}

// The helper's life: starts what it is asked to and reports each exit, until the test
// binary closes its end.
[[noreturn]] void serve(int sock) {
    struct sigaction sa {};
    sa.sa_handler = on_child;
    sigaction(SIGCHLD, &sa, nullptr);
    signal(SIGPIPE, SIG_IGN);
    sigset_t chld, waiting;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_BLOCK, &chld, &waiting);  // SIGCHLD wakes ppoll only
    sigdelset(&waiting, SIGCHLD);
    std::vector<char> buf(kMaxRequest);
    for (;;) {
        int status = 0;
        rusage usage{};
        for (pid_t w; (w = wait4(-1, &status, WNOHANG, &usage)) > 0;) {
            const Reply reply{'x', w, status, usage.ru_maxrss};
            if (send(sock, &reply, sizeof reply, 0) != sizeof reply) _exit(0);
        }
        pollfd p{sock, POLLIN, 0};
        if (ppoll(&p, 1, nullptr, &waiting) > 0 && !start_one(sock, buf)) _exit(0);
    }
}

class Spawner {
  public:
    Spawner() {
        int pair[2];
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) return;
        const int size = static_cast<int>(kMaxRequest);
        setsockopt(pair[0], SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
        const pid_t pid = fork();
        if (pid == 0) {
            close(pair[0]);
            serve(pair[1]);
        }
        close(pair[1]);
        if (pid < 0) {
            close(pair[0]);
            return;
        }
        sock_ = pair[0];
        helper_ = pid;
    }

    // At the test binary's exit: the helper sees its end of the socket close, ends, and is
    // reaped here (a container's pid 1 may never reap it).
    ~Spawner() {
        if (sock_ < 0) return;
        close(sock_);
        int status = 0;
        while (waitpid(helper_, &status, 0) < 0 && errno == EINTR) {
        }
    }
    Spawner(const Spawner&) = delete;
    Spawner& operator=(const Spawner&) = delete;

    pid_t spawn(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                const std::string& cwd, const int fds[3]) {
        std::string blob = cwd + '\0' + std::to_string(argv.size()) + '\0';
        for (const auto& a : argv) blob += a + '\0';
        for (const auto& e : env) blob += e + '\0';
        if (argv.empty() || blob.size() > kMaxRequest)
            throw std::runtime_error("spawn: no argv, or argv and env over 256 KiB");
        std::lock_guard<std::mutex> lock(mutex_);
        if (sock_ < 0) throw std::runtime_error("spawn: the helper process did not start");
        char control[CMSG_SPACE(3 * sizeof(int))] = {};
        iovec iov{blob.data(), blob.size()};
        msghdr msg{};
        msg.msg_iov = &iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control;
        msg.msg_controllen = sizeof control;
        cmsghdr* c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(3 * sizeof(int));
        std::memcpy(CMSG_DATA(c), fds, 3 * sizeof(int));
        if (sendmsg(sock_, &msg, MSG_NOSIGNAL) != static_cast<ssize_t>(blob.size()))
            throw std::runtime_error(std::string("spawn: ") + std::strerror(errno));
        for (;;) {
            const Reply r = receive(true);
            if (r.type != 's') continue;
            if (r.pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(-r.pid));
            running_.insert(r.pid);
            return r.pid;
        }
    }

    pid_t wait(pid_t pid, int* status, int options, long* rss) {
        for (;;) {
            {
                std::lock_guard<std::mutex> lock(mutex_);
                if (!running_.count(pid)) {
                    errno = ECHILD;
                    return -1;
                }
                while (sock_ >= 0 && receive(false).type != 0) {
                }
                auto it = exited_.find(pid);
                if (it != exited_.end()) {
                    *status = it->second.status;
                    *rss = it->second.rss;
                    exited_.erase(it);
                    running_.erase(pid);
                    return pid;
                }
                if (options & WNOHANG) return 0;
            }
            pollfd p{sock_, POLLIN, 0};
            poll(&p, 1, 10);
        }
    }

  private:
    // One reply (blocking or not; type 0 when none is there); exits are kept for wait().
    Reply receive(bool block) {
        Reply r;
        const ssize_t n = recv(sock_, &r, sizeof r, block ? 0 : MSG_DONTWAIT);
        if (n == sizeof r) {
            if (r.type == 'x') exited_[r.pid] = r;
            return r;
        }
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) return Reply{};
        throw std::runtime_error("spawn: the helper process ended");
    }

    int sock_ = -1;
    pid_t helper_ = -1;
    std::mutex mutex_;
    std::map<pid_t, Reply> exited_;
    std::set<pid_t> running_;
};

Spawner& spawner() {
    static Spawner instance;
    return instance;
}

// Forked before main(), while the test binary is small.
const bool started_early = (spawner(), true);

}  // namespace

pid_t spawn(const std::vector<std::string>& argv, const std::vector<std::string>& env,
            const std::string& cwd, const int fds[3]) {
    return spawner().spawn(argv, env, cwd, fds);
}

pid_t spawn_wait(pid_t pid, int* status, int options, long* peak_rss_kib) {
    return spawner().wait(pid, status, options, peak_rss_kib);
}

}  // namespace mlt_test
