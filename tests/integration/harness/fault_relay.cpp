#include "harness/fault_relay.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "harness/net.h"
#include "harness/time_factor.h"

namespace mlt_test {
namespace {

using Clock = std::chrono::steady_clock;

// Bytes the relay holds per direction of a connection; then it stops reading the sender,
// whose kernel buffers fill up and whose writes block, as behind a slow or dead link.
constexpr std::size_t kBufferSize = 256 * 1024;
// Bound for a command to be carried out by the relay thread.
const std::chrono::seconds kCommandTimeout = scaled(std::chrono::seconds{10});
// A fired cut_after waits at most this long for its forwarded bytes to be acknowledged by
// the receiver (a peer that does not read must not delay the cut for long)...
const std::chrono::milliseconds kCutDrainLimit = scaled(std::chrono::milliseconds{2000});
// ...looking every kDrainPollMs.
constexpr int kDrainPollMs = 2;

// Indexes: side 0 is the client, side 1 the target; direction d reads side d and writes
// side 1 - d (Direction::up == 0, Direction::down == 1).
int index_of(Direction d) {
    return d == Direction::up ? 0 : 1;
}

// Closes `fd` so that the peer gets a RST rather than a FIN, as when a link drops and the
// far end gives up.
void reset_and_close(int fd) {
    if (fd < 0) return;
    linger no_linger{1, 0};
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &no_linger, sizeof no_linger);
    close(fd);
}

// The relay adds no delay of its own on small writes (interactive SSH traffic).
void set_nodelay(int fd) {
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

// One direction of a connection: what was read from the sender and not yet written.
struct Pipe {
    std::vector<char> buf = std::vector<char>(kBufferSize);
    std::size_t begin = 0;
    std::size_t end = 0;
    bool eof = false;   // the sender shut down its side
    bool shut = false;  // ...and the relay passed that on
    double tokens = 0;  // token bucket under set_rate
    Clock::time_point refilled = Clock::now();

    std::size_t held() const { return end - begin; }
    std::size_t room() const { return kBufferSize - held(); }
    // Where the next read goes (room() bytes), moving held bytes to the front first.
    char* tail() {
        if (begin > 0) {
            std::memmove(buf.data(), buf.data() + begin, held());
            end -= begin;
            begin = 0;
        }
        return buf.data() + end;
    }
};

}  // namespace

struct FaultRelay::Link {
    int fd[2] = {-1, -1};             // client, target
    bool broken[2] = {false, false};  // the socket failed (reset, refused, EPIPE)
    bool connecting = true;           // the connect to the target is in progress
    short revents[2] = {0, 0};        // from the last poll
    Pipe pipe[2];                     // up: fd[0] to fd[1]; down: fd[1] to fd[0]
};

struct FaultRelay::Trigger {
    int dir;
    uint64_t left;  // bytes still to forward before it fires
    bool cut;       // cut, else stall
};

FaultRelay::FaultRelay(int target_port, int listen_port, std::chrono::milliseconds wait_for_port)
    : target_port_(target_port) {
    listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (listen_fd_ < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
    int one = 1;
    setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr = loopback_address(listen_port);
    socklen_t len = sizeof addr;
    const auto give_up = std::chrono::steady_clock::now() + wait_for_port;
    int bound = bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    while (bound != 0 && errno == EADDRINUSE && listen_port != 0 &&
           std::chrono::steady_clock::now() < give_up) {
        ::usleep(50 * 1000);  // polled: nothing tells when another socket lets the port go
        bound = bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    }
    if (bound != 0 || listen(listen_fd_, 64) != 0 ||
        getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0 ||
        pipe2(wake_pipe_, O_NONBLOCK | O_CLOEXEC) != 0) {
        const std::string why = std::strerror(errno);
        close(listen_fd_);
        throw std::runtime_error(
            "FaultRelay: cannot listen on 127.0.0.1:" + std::to_string(listen_port) + ": " + why);
    }
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { loop(); });
}

FaultRelay::~FaultRelay() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        commands_.push_back([this] { stopping_ = true; });
        (void)!write(wake_pipe_[1], "x", 1);
    }
    // The loop never blocks except in poll, which the wake pipe ends.
    thread_.join();
    close(listen_fd_);
    close(wake_pipe_[0]);
    close(wake_pipe_[1]);
}

void FaultRelay::cut() {
    run_in_loop([this] {
        reset_all();
        ++cuts_;
        if (cutting_) {  // a fired cut_after was still draining: this cut completes it
            cutting_ = false;
            mark_fired();
        }
    });
}

void FaultRelay::stall() {
    run_in_loop([this] { stalled_ = true; });
}

void FaultRelay::resume() {
    run_in_loop([this] { stalled_ = false; });
}

void FaultRelay::set_rate(uint64_t bytes_per_second) {
    run_in_loop([this, bytes_per_second] {
        rate_ = bytes_per_second;
        // Every bucket starts empty, so no burst saved up under the old rate passes.
        for (auto& link : links_) {
            for (Pipe& p : link->pipe) {
                p.tokens = 0;
                p.refilled = Clock::now();
            }
        }
    });
}

uint64_t FaultRelay::bytes(Direction d) const {
    run_in_loop([] {});  // a send() the peer has seen is counted before the next command
    return bytes_[index_of(d)];
}

std::size_t FaultRelay::connections_accepted() const {
    run_in_loop([] {});
    return accepted_;
}

std::size_t FaultRelay::open_connections() const {
    run_in_loop([] {});
    return open_;
}

bool FaultRelay::wait_fired(std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (!armed_ever_) return false;
    return cv_.wait_for(lock, timeout, [this] { return fired_; });
}

void FaultRelay::run_in_loop(std::function<void()> command) const {
    std::unique_lock<std::mutex> lock(mutex_);
    commands_.push_back(std::move(command));
    const uint64_t ticket = ++commands_queued_;
    (void)!write(wake_pipe_[1], "x", 1);  // a full pipe wakes the thread just as well
    if (!cv_.wait_for(lock, kCommandTimeout, [&] { return commands_done_ >= ticket; })) {
        throw std::runtime_error("FaultRelay: the relay thread did not carry out a command");
    }
}

void FaultRelay::arm(Direction d, uint64_t bytes, bool cut) {
    run_in_loop([this, d, bytes, cut] {
        {
            // Here, in the relay thread, so that an older trigger firing now is not taken
            // for this one.
            std::lock_guard<std::mutex> lock(mutex_);
            armed_ever_ = true;
            fired_ = false;
        }
        trigger_ = std::make_unique<Trigger>(Trigger{index_of(d), bytes, cut});
        if (bytes == 0) fire_trigger();
    });
}

void FaultRelay::run_commands() {
    char drain[64];
    while (read(wake_pipe_[0], drain, sizeof drain) > 0) {
    }
    std::unique_lock<std::mutex> lock(mutex_);
    while (!commands_.empty()) {
        std::function<void()> command = std::move(commands_.front());
        commands_.pop_front();
        lock.unlock();  // a command may take the lock itself (mark_fired)
        command();
        lock.lock();
        ++commands_done_;
    }
    cv_.notify_all();
}

void FaultRelay::loop() {
    std::vector<pollfd> pfds;
    for (;;) {
        if (cutting_ && (outgoing_drained() || Clock::now() >= cut_deadline_)) {
            cutting_ = false;
            reset_all();
            ++cuts_;
            mark_fired();
        }
        int timeout = cutting_ ? kDrainPollMs : -1;
        pfds.clear();
        pfds.push_back({wake_pipe_[0], POLLIN, 0});
        // No new connection while a cut waits for its bytes: it would be cut at once.
        pfds.push_back({cutting_ ? -1 : listen_fd_, POLLIN, 0});
        for (auto& link : links_) {
            short events[2] = {0, 0};
            for (int s = 0; s < 2; ++s) {
                const Pipe& p = link->pipe[s];
                const bool readable_side = !(s == 1 && link->connecting);
                if (!link->broken[s] && readable_side && !p.eof && p.room() > 0) {
                    events[s] |= POLLIN;
                }
                if (wants_write(*link, s, &timeout)) events[1 - s] |= POLLOUT;
            }
            if (link->connecting) events[1] |= POLLOUT;
            // A negative fd is skipped: POLLHUP/POLLERR would otherwise wake poll for a
            // socket the relay does not mean to touch (stalled, buffer full).
            for (int s = 0; s < 2; ++s)
                pfds.push_back({events[s] ? link->fd[s] : -1, events[s], 0});
        }
        if (poll(pfds.data(), pfds.size(), timeout) < 0 && errno != EINTR) break;
        for (std::size_t i = 0; i < links_.size(); ++i) {
            for (int s = 0; s < 2; ++s) links_[i]->revents[s] = pfds[2 + 2 * i + s].revents;
        }
        // Accepting first: a command then also sees a connection that was just accepted.
        if (pfds[1].revents != 0) accept_new();
        run_commands();
        if (stopping_) break;
        for (auto& link : links_) pump(*link);
        links_.erase(std::remove_if(links_.begin(), links_.end(),
                                    [](const std::unique_ptr<Link>& l) { return l->fd[0] < 0; }),
                     links_.end());
        open_ = links_.size();
    }
    reset_all();
}

void FaultRelay::accept_new() {
    for (;;) {
        int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) return;  // EAGAIN; a real error is reported again by the next poll
        ++accepted_;
        auto link = std::make_unique<Link>();
        link->fd[0] = fd;
        set_nodelay(fd);
        // Non-blocking connect: a target with a full backlog must not freeze the relay.
        link->fd[1] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        sockaddr_in addr = loopback_address(target_port_);
        if (link->fd[1] < 0) {
            link->broken[1] = true;
            link->connecting = false;
        } else {
            set_nodelay(link->fd[1]);
            int rc = connect(link->fd[1], reinterpret_cast<sockaddr*>(&addr), sizeof addr);
            if (rc == 0 || errno != EINPROGRESS) {
                link->broken[1] = rc != 0;
                link->connecting = false;
            }
        }
        for (Pipe& p : link->pipe) p.refilled = Clock::now();
        links_.push_back(std::move(link));
    }
}

bool FaultRelay::wants_write(Link& link, int dir, int* timeout) {
    Pipe& p = link.pipe[dir];
    if (!forwarding() || link.connecting || link.broken[1 - dir]) return false;
    if (p.held() == 0) return p.eof && !p.shut;
    if (rate_ == 0) return true;
    // Token bucket holding at most 50 ms of the rate: refill, then write only once a
    // full slice (or all that is held) may go, so a slow rate does not mean tiny writes.
    const auto now = Clock::now();
    const double burst = std::max(static_cast<double>(rate_) / 20, 1.0);
    const double elapsed = std::chrono::duration<double>(now - p.refilled).count();
    p.tokens = std::min(burst, p.tokens + elapsed * static_cast<double>(rate_));
    p.refilled = now;
    const double need = std::min(burst, static_cast<double>(p.held()));
    if (p.tokens >= need) return true;
    const int wait_ms =
        static_cast<int>(std::ceil((need - p.tokens) * 1000 / static_cast<double>(rate_)));
    *timeout = *timeout < 0 ? std::max(wait_ms, 1) : std::min(*timeout, std::max(wait_ms, 1));
    return false;
}

void FaultRelay::pump(Link& link) {
    if (link.connecting && link.revents[1] != 0) {
        int err = 0;
        socklen_t len = sizeof err;
        getsockopt(link.fd[1], SOL_SOCKET, SO_ERROR, &err, &len);
        link.connecting = false;
        link.broken[1] = err != 0;
        link.revents[1] = 0;
    }
    for (int s = 0; s < 2; ++s) {
        Pipe& p = link.pipe[s];
        if (link.broken[s] || (link.connecting && s == 1) || p.eof || p.room() == 0) continue;
        if ((link.revents[s] & (POLLIN | POLLERR | POLLHUP)) == 0) continue;
        const std::size_t room = p.room();
        ssize_t n = recv(link.fd[s], p.tail(), room, 0);
        if (n > 0) {
            p.end += static_cast<std::size_t>(n);
        } else if (n == 0) {
            p.eof = true;
        } else if (errno != EAGAIN && errno != EINTR) {
            link.broken[s] = true;
        }
    }
    for (int d = 0; d < 2; ++d) {
        if ((link.revents[1 - d] & (POLLOUT | POLLERR | POLLHUP)) != 0) forward(link, d);
    }
    link.revents[0] = link.revents[1] = 0;
    // Stalled, the relay keeps even a reset or an EOF to itself, as a dead link would.
    if (!forwarding()) return;
    if (link.broken[0] || link.broken[1]) {
        // One side failed: the other one gets a reset too, as from a proxy that gives up.
        reset_and_close(link.fd[0]);
        reset_and_close(link.fd[1]);
        link.fd[0] = link.fd[1] = -1;
    } else if (link.pipe[0].shut && link.pipe[1].shut) {
        close(link.fd[0]);
        close(link.fd[1]);
        link.fd[0] = link.fd[1] = -1;
    }
}

void FaultRelay::forward(Link& link, int dir) {
    Pipe& p = link.pipe[dir];
    const int to = link.fd[1 - dir];
    if (!forwarding() || link.connecting || link.broken[1 - dir]) return;
    if (p.held() == 0) {
        if (p.eof && !p.shut) {
            shutdown(to, SHUT_WR);
            p.shut = true;
        }
        return;
    }
    std::size_t n = p.held();
    if (rate_ != 0) n = std::min(n, static_cast<std::size_t>(p.tokens));
    if (trigger_ && trigger_->dir == dir)
        n = static_cast<std::size_t>(std::min<uint64_t>(n, trigger_->left));
    if (n == 0) return;
    ssize_t sent = send(to, p.buf.data() + p.begin, n, MSG_NOSIGNAL);
    if (sent < 0) {
        if (errno != EAGAIN && errno != EINTR) link.broken[1 - dir] = true;
        return;
    }
    p.begin += static_cast<std::size_t>(sent);
    if (p.begin == p.end) p.begin = p.end = 0;
    p.tokens -= static_cast<double>(sent);
    bytes_[dir] += static_cast<uint64_t>(sent);
    // The trigger counts what was written to the receiver's socket, so it fires exactly at
    // its byte whatever the read and write sizes were.
    if (trigger_ && trigger_->dir == dir) {
        trigger_->left -= static_cast<uint64_t>(sent);
        if (trigger_->left == 0) fire_trigger();
    }
}

void FaultRelay::fire_trigger() {
    const Trigger trigger = *trigger_;
    trigger_.reset();
    if (trigger.cut) {
        // Stop forwarding now; reset once the receivers acknowledged the bytes already
        // written (else a RST would throw away some of them and the count would be wrong).
        cutting_ = true;
        cut_dir_ = trigger.dir;
        cut_deadline_ = Clock::now() + kCutDrainLimit;
        return;
    }
    stalled_ = true;
    mark_fired();
}

void FaultRelay::mark_fired() {
    std::lock_guard<std::mutex> lock(mutex_);
    fired_ = true;
    cv_.notify_all();
}

bool FaultRelay::outgoing_drained() const {
    for (const auto& link : links_) {
        const int side = 1 - cut_dir_;
        int unacked = 0;
        if (link->broken[side] || link->fd[side] < 0) continue;
        if (ioctl(link->fd[side], SIOCOUTQ, &unacked) == 0 && unacked > 0) return false;
    }
    return true;
}

void FaultRelay::reset_all() {
    for (auto& link : links_) {
        reset_and_close(link->fd[0]);
        reset_and_close(link->fd[1]);
    }
    links_.clear();
    open_ = 0;
}

}  // namespace mlt_test
