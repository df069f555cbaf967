// mlt_delay_relay: a TCP relay on 127.0.0.1 that behaves like a long, paced link, for the
// bench scripts (tests/bench/lib.sh's start_relay).
//
//   mlt_delay_relay --target PORT [--listen PORT] [--rtt-ms N] [--rate-mbit N] [--buffer-ms N]
//
// Every connection accepted on 127.0.0.1:LISTEN (0, the default: a free port) is forwarded to
// 127.0.0.1:TARGET. Each direction is a delay line of rtt/2: a chunk read from one side is
// stamped with the time it is due at the other and written there once due, so the round
// trip of any exchange grows by --rtt-ms and a sender limited by a window W moves W per RTT,
// as over a real long link. Reading never waits for the delay.
//
// --rate-mbit N (10^6 bit/s per direction; 0, the default: unlimited) puts a bottleneck of N
// Mbit/s in front of each delay line, one per direction shared by every connection through
// the relay, as a link is: a chunk occupies the link len/rate after the previous chunk of any
// connection left it (or after it arrived, if the link was idle; no credit builds up), and its
// bytes reach the far end in slices of 0.5 ms of the rate (16 KiB at least), each rtt/2 after
// it left the link. Reads are cut to 2 ms of the rate (16-256 KiB), so connections interleave
// finely.
//
// Memory: per direction the relay holds what is on the wire (rate x rtt/2) plus a bottleneck
// buffer of --buffer-ms of the rate (default 20 ms, at least 1 MiB in all); without a rate cap
// at most 64 MiB. Once a direction holds that much it stops reading, so the senders' TCP
// windows fill as at a real bottleneck.
//
// Prints "ready <port>" once it listens. Ends on SIGTERM or SIGINT and, when its stdin is a
// pipe or a socket, once that reaches EOF (so a relay whose starter died does not linger); it
// prints the bytes it carried to stderr and drops every open connection. Bad arguments exit
// 2, a relay that cannot listen 1.
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <iostream>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "harness/net.h"
#include "stop_signals.h"

namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t kMaxRead = 256 * 1024;
constexpr std::size_t kMinRead = 16 * 1024;
constexpr uint64_t kUncappedLimit = 64ull << 20;  // bytes held per direction without a cap
constexpr uint64_t kMinLimit = 1ull << 20;

std::atomic<uint64_t> g_bytes[2] = {{0}, {0}};  // 0: up (client to target), 1: down
std::atomic<uint64_t> g_connections{0};

Clock::duration seconds(double s) {
    return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

// One direction of the link, shared by every connection: the bottleneck's schedule and the
// bytes held in this direction.
class Link {
  public:
    Link(double bytes_per_s, double delay_s, double buffer_s)
        : rate_(bytes_per_s),
          delay_(seconds(delay_s)),
          limit_(bytes_per_s > 0
                     ? std::max<uint64_t>(kMinLimit,
                                          static_cast<uint64_t>(bytes_per_s * (delay_s + buffer_s)))
                     : kUncappedLimit),
          read_size_(bytes_per_s > 0
                         ? std::clamp<std::size_t>(static_cast<std::size_t>(bytes_per_s * 0.002),
                                                   kMinRead, kMaxRead)
                         : kMaxRead),
          slice_(bytes_per_s > 0
                     ? std::clamp<std::size_t>(static_cast<std::size_t>(bytes_per_s * 0.0005),
                                               kMinRead, read_size_)
                     : kMaxRead) {}

    std::size_t read_size() const { return read_size_; }
    std::size_t slice() const { return slice_; }

    // The time `bytes` take on the link (0 without a cap).
    Clock::duration airtime(std::size_t bytes) const {
        return rate_ > 0 ? seconds(static_cast<double>(bytes) / rate_) : Clock::duration(0);
    }

    // Waits until this direction holds less than its limit.
    void wait_for_space() {
        std::unique_lock<std::mutex> lock(mutex_);
        space_.wait(lock, [this] { return held_ < limit_; });
    }

    // Puts `len` bytes that arrived `now` on the link: returns when their first byte is due
    // at the far end (the end of the stream when len is 0).
    Clock::time_point send(std::size_t len, Clock::time_point now) {
        std::lock_guard<std::mutex> lock(mutex_);
        const Clock::time_point start = std::max(now, free_at_);
        free_at_ = start + airtime(len);
        held_ += len;
        return start + delay_;
    }

    // `len` bytes reached the far end (or were dropped).
    void delivered(std::size_t len) {
        std::lock_guard<std::mutex> lock(mutex_);
        held_ -= len;
        if (held_ < limit_) space_.notify_all();
    }

  private:
    const double rate_;  // bytes/s, 0: unlimited
    const Clock::duration delay_;
    const uint64_t limit_;
    const std::size_t read_size_;
    const std::size_t slice_;
    std::mutex mutex_;
    std::condition_variable space_;
    Clock::time_point free_at_{};
    uint64_t held_ = 0;
};

// What one read produced: `len` bytes whose first is due at the far end at `due`; len 0 ends
// the stream (`reset`: after a read error).
struct Chunk {
    std::unique_ptr<char[]> data;
    std::size_t len = 0;
    Clock::time_point due;
    bool reset = false;
};

// One direction of one connection: a reader stamps chunks, a writer delivers them when due.
struct Pipe {
    int from = -1;
    int to = -1;
    int index = 0;  // into g_bytes
    Link* link = nullptr;
    std::mutex mutex;
    std::condition_variable ready;
    std::deque<Chunk> queue;
    std::vector<std::unique_ptr<char[]>> spare;  // buffers for the reader to reuse

    void push(Chunk chunk) {
        {
            std::lock_guard<std::mutex> lock(mutex);
            queue.push_back(std::move(chunk));
        }
        ready.notify_one();
    }
};

// A relayed connection; its two sockets close when its last thread ends.
struct Connection {
    int client = -1;
    int server = -1;
    Pipe pipes[2];

    ~Connection() {
        close(client);
        close(server);
    }
    // Ends both sides at once (after a write error or a reset): every blocked read and write
    // of the four threads returns.
    void abort() const {
        shutdown(client, SHUT_RDWR);
        shutdown(server, SHUT_RDWR);
    }
};

void read_side(const std::shared_ptr<Connection>& conn, Pipe& pipe) {
    for (;;) {
        pipe.link->wait_for_space();
        std::unique_ptr<char[]> buf;
        {
            std::lock_guard<std::mutex> lock(pipe.mutex);
            if (!pipe.spare.empty()) {
                buf = std::move(pipe.spare.back());
                pipe.spare.pop_back();
            }
        }
        if (!buf) buf.reset(new char[pipe.link->read_size()]);
        ssize_t n;
        do {
            n = read(pipe.from, buf.get(), pipe.link->read_size());
        } while (n < 0 && errno == EINTR);
        Chunk chunk;
        chunk.len = n > 0 ? static_cast<std::size_t>(n) : 0;
        chunk.due = pipe.link->send(chunk.len, Clock::now());
        chunk.reset = n < 0;
        if (n > 0) chunk.data = std::move(buf);
        pipe.push(std::move(chunk));
        if (n <= 0) break;
    }
    (void)conn;  // held so that the sockets stay open while this thread reads
}

bool write_all(int fd, const char* data, std::size_t len) {
    while (len > 0) {
        const ssize_t n = send(fd, data, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        data += n;
        len -= static_cast<std::size_t>(n);
    }
    return true;
}

// Writes `chunk` to the far side slice by slice, each once it is due; false once a write
// failed (the bytes are still counted off the link).
bool deliver(Pipe& pipe, const Chunk& chunk, bool ok) {
    std::size_t off = 0;
    while (off < chunk.len) {
        const std::size_t end = std::min(chunk.len, off + pipe.link->slice());
        std::this_thread::sleep_until(chunk.due + pipe.link->airtime(end));
        if (ok && write_all(pipe.to, chunk.data.get() + off, end - off)) {
            g_bytes[pipe.index] += end - off;
        } else {
            ok = false;
        }
        pipe.link->delivered(end - off);
        off = end;
    }
    return ok;
}

void write_side(const std::shared_ptr<Connection>& conn, Pipe& pipe) {
    bool ok = true;
    for (;;) {
        Chunk chunk;
        {
            std::unique_lock<std::mutex> lock(pipe.mutex);
            pipe.ready.wait(lock, [&pipe] { return !pipe.queue.empty(); });
            chunk = std::move(pipe.queue.front());
            pipe.queue.pop_front();
        }
        if (chunk.len == 0) {
            std::this_thread::sleep_until(chunk.due);
            if (ok && !chunk.reset) {
                shutdown(pipe.to, SHUT_WR);
            } else {
                conn->abort();
            }
            return;
        }
        if (!deliver(pipe, chunk, ok) && ok) {
            ok = false;
            conn->abort();  // the reader then reads EOF and ends the stream
        }
        std::lock_guard<std::mutex> lock(pipe.mutex);
        pipe.spare.push_back(std::move(chunk.data));
    }
}

void set_nodelay(int fd) {
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

// Connects the accepted `client` to the target and starts the four threads.
void relay(int client, int target, Link* links) {
    auto conn = std::make_shared<Connection>();
    conn->client = client;
    int local_port = 0;
    if (!mlt_test::connect_loopback(target, &conn->server, &local_port)) {
        std::cerr << "mlt_delay_relay: cannot connect to 127.0.0.1:" << target << ": "
                  << std::strerror(errno) << "\n";
        return;  // conn closes the client
    }
    set_nodelay(conn->client);
    set_nodelay(conn->server);
    for (int d = 0; d < 2; ++d) {
        Pipe& pipe = conn->pipes[d];
        pipe.from = d == 0 ? conn->client : conn->server;
        pipe.to = d == 0 ? conn->server : conn->client;
        pipe.index = d;
        pipe.link = &links[d];
    }
    ++g_connections;
    try {
        for (Pipe& pipe : conn->pipes) {
            std::thread([conn, &pipe] { read_side(conn, pipe); }).detach();
            std::thread([conn, &pipe] { write_side(conn, pipe); }).detach();
        }
    } catch (const std::exception& e) {
        std::cerr << "mlt_delay_relay: " << e.what() << "\n";
        conn->abort();
    }
}

int listen_on(int port) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr = mlt_test::loopback_address(port);
    if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || listen(fd, 128) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

int bound_port(int fd) {
    sockaddr_in addr{};
    socklen_t len = sizeof addr;
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return 0;
    return ntohs(addr.sin_port);
}

struct Options {
    double target = 0, listen = 0, rtt_ms = 0, rate_mbit = 0, buffer_ms = 20;
};

// A non-negative decimal number that fills `text` entirely.
bool parse_number(const char* text, double* value) {
    if (*text == '\0' || std::strspn(text, "0123456789.") != std::strlen(text)) return false;
    char* end = nullptr;
    errno = 0;
    *value = std::strtod(text, &end);
    return errno == 0 && *end == '\0';
}

bool parse_options(int argc, char** argv, Options* o) {
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        double* into = arg == "--target"      ? &o->target
                       : arg == "--listen"    ? &o->listen
                       : arg == "--rtt-ms"    ? &o->rtt_ms
                       : arg == "--rate-mbit" ? &o->rate_mbit
                       : arg == "--buffer-ms" ? &o->buffer_ms
                                              : nullptr;
        if (into == nullptr || i + 1 >= argc || !parse_number(argv[++i], into)) return false;
    }
    const auto is_port = [](double p) { return p >= 0 && p <= 65535 && p == static_cast<int>(p); };
    return o->target > 0 && is_port(o->target) && is_port(o->listen);
}

// Accepts connections until SIGTERM/SIGINT or, when `watch_stdin`, EOF on stdin.
void serve(int listen_fd, int signal_fd, bool watch_stdin, int target, Link* links) {
    for (;;) {
        pollfd pfds[3] = {{listen_fd, POLLIN, 0}, {signal_fd, POLLIN, 0}, {-1, POLLIN, 0}};
        if (watch_stdin) pfds[2].fd = STDIN_FILENO;
        if (poll(pfds, 3, -1) < 0) {
            if (errno == EINTR) continue;
            return;
        }
        if (pfds[1].revents != 0) return;
        if (pfds[2].revents != 0) {
            char buf[512];
            if (read(STDIN_FILENO, buf, sizeof buf) <= 0) return;  // input is ignored
        }
        if (pfds[0].revents != 0) {
            const int client = accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
            if (client >= 0) relay(client, target, links);
        }
    }
}

}  // namespace

int main(int argc, char** argv) {
    Options o;
    if (!parse_options(argc, argv, &o)) {
        std::cerr << "usage: mlt_delay_relay --target PORT [--listen PORT] [--rtt-ms N] "
                     "[--rate-mbit N] [--buffer-ms N]\n";
        return 2;
    }
    const int signal_fd = mlt_test::stop_signal_fd();  // before any thread starts
    const int listen_fd = listen_on(static_cast<int>(o.listen));
    if (signal_fd < 0 || listen_fd < 0) {
        std::cerr << "mlt_delay_relay: cannot listen on 127.0.0.1:" << o.listen << ": "
                  << std::strerror(errno) << "\n";
        return 1;
    }
    struct stat in {};
    const bool watch_stdin =
        fstat(STDIN_FILENO, &in) == 0 && (S_ISFIFO(in.st_mode) || S_ISSOCK(in.st_mode));

    const double rate = o.rate_mbit * 1e6 / 8, delay = o.rtt_ms / 2000, buffer = o.buffer_ms / 1000;
    Link links[2] = {Link(rate, delay, buffer), Link(rate, delay, buffer)};
    std::cout << "ready " << bound_port(listen_fd) << std::endl;
    serve(listen_fd, signal_fd, watch_stdin, static_cast<int>(o.target), links);
    std::cerr << "mlt_delay_relay: up " << g_bytes[0] << " bytes, down " << g_bytes[1] << " bytes, "
              << g_connections << " connections\n";
    // Open connections are dropped with the process; their threads are never joined.
    std::fflush(nullptr);
    _exit(0);
}
