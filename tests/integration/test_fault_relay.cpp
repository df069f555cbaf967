// Tests of the fault-injecting TCP relay against a small echo/sink server run in the test,
// and of OpenSSH sessions passing through it.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "../common/test_bytes.h"
#include "harness/fault_relay.h"
#include "harness/files.h"
#include "harness/net.h"
#include "harness/ssh_test.h"
#include "harness/train_process.h"

namespace mlt_test {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr std::size_t kMiB = 1024 * 1024;
// How long a test looks for bytes that must not arrive.
constexpr milliseconds kQuietWindow{300};

// How a connection ended, as one of its ends saw it.
enum class End { open, eof, reset };

// Polls `done` (bounded) until it holds; returns its last value.
bool wait_until(const std::function<bool()>& done, milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    while (!done()) {
        if (Clock::now() >= deadline) return false;
        poll(nullptr, 0, 5);
    }
    return true;
}

// The largest send buffer plus the largest receive buffer TCP may give a socket
// (net.ipv4.tcp_wmem and tcp_rmem), plus 1 MiB for the relay's own buffer.
std::size_t most_buffered() {
    std::size_t total = kMiB;
    for (const char* path : {"/proc/sys/net/ipv4/tcp_wmem", "/proc/sys/net/ipv4/tcp_rmem"}) {
        std::size_t low = 0, initial = 0, high = 0;
        std::istringstream in(read_file(path));
        in >> low >> initial >> high;
        total += in ? high : 32 * kMiB;
    }
    return total;
}

// Success when `a` == `b`; the failure names the sizes and the first differing byte
// (gtest would print megabytes).
::testing::AssertionResult same_bytes(const std::string& a, const std::string& b) {
    if (a == b) return ::testing::AssertionSuccess();
    const auto diff = std::mismatch(a.begin(), a.begin() + std::min(a.size(), b.size()), b.begin());
    return ::testing::AssertionFailure()
           << "sizes " << a.size() << " and " << b.size() << ", first difference at byte "
           << (diff.first - a.begin());
}

// A TCP server on 127.0.0.1 run by one thread. It accepts every connection and keeps what
// it receives; with `echo` it also sends it back and closes after the client's EOF.
class TestServer {
  public:
    explicit TestServer(bool echo) : echo_(echo) {
        listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof addr;
        if (listen_fd_ < 0 || bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), len) != 0 ||
            listen(listen_fd_, 16) != 0 ||
            getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0 ||
            pipe2(stop_pipe_, O_CLOEXEC) != 0) {
            throw std::runtime_error("TestServer: cannot listen");
        }
        port_ = ntohs(addr.sin_port);
        thread_ = std::thread([this] { loop(); });
    }
    ~TestServer() {
        (void)!write(stop_pipe_[1], "x", 1);
        thread_.join();
        for (Conn& c : conns_) {
            if (c.fd >= 0) close(c.fd);
        }
        close(listen_fd_);
        close(stop_pipe_[0]);
        close(stop_pipe_[1]);
    }
    TestServer(const TestServer&) = delete;
    TestServer& operator=(const TestServer&) = delete;

    int port() const { return port_; }
    // Snapshots of connection `i` (in accept order); `i` must exist.
    std::string received(std::size_t i) const {
        std::lock_guard<std::mutex> lock(mutex_);
        return conns_.at(i).received;
    }
    End end(std::size_t i) const {
        std::lock_guard<std::mutex> lock(mutex_);
        return conns_.at(i).end;
    }
    // Bounded waits: `n` connections accepted; connection `i` received `bytes`; it ended.
    bool wait_connections(std::size_t n, milliseconds timeout) const {
        std::unique_lock<std::mutex> lock(mutex_);
        return cv_.wait_for(lock, timeout, [&] { return conns_.size() >= n; });
    }
    bool wait_received(std::size_t i, std::size_t bytes, milliseconds timeout) const {
        std::unique_lock<std::mutex> lock(mutex_);
        return cv_.wait_for(
            lock, timeout, [&] { return conns_.size() > i && conns_[i].received.size() >= bytes; });
    }
    bool wait_end(std::size_t i, milliseconds timeout) const {
        std::unique_lock<std::mutex> lock(mutex_);
        return cv_.wait_for(lock, timeout,
                            [&] { return conns_.size() > i && conns_[i].end != End::open; });
    }

  private:
    struct Conn {
        int fd = -1;
        std::string received;
        std::size_t echoed = 0;  // bytes of `received` sent back
        End end = End::open;
    };

    void loop() {
        char buf[65536];
        for (;;) {
            std::vector<pollfd> pfds = {{stop_pipe_[0], POLLIN, 0}, {listen_fd_, POLLIN, 0}};
            {
                std::lock_guard<std::mutex> lock(mutex_);
                for (const Conn& c : conns_) {
                    const bool to_echo = echo_ && c.echoed < c.received.size();
                    const short events = c.end == End::open ? POLLIN : 0;
                    pfds.push_back({c.fd, static_cast<short>(events | (to_echo ? POLLOUT : 0)), 0});
                }
            }
            if (poll(pfds.data(), pfds.size(), -1) < 0 && errno != EINTR) return;
            if (pfds[0].revents != 0) return;
            std::lock_guard<std::mutex> lock(mutex_);
            if (pfds[1].revents != 0) {
                int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
                if (fd >= 0) conns_.push_back(Conn{fd, {}, 0, End::open});
            }
            for (std::size_t i = 0; i + 2 < pfds.size(); ++i) {
                Conn& c = conns_[i];
                const short revents = pfds[i + 2].revents;
                if (c.fd < 0 || revents == 0) continue;
                if (c.end == End::open && (revents & (POLLIN | POLLERR | POLLHUP)) != 0) {
                    ssize_t n = recv(c.fd, buf, sizeof buf, 0);
                    if (n > 0) c.received.append(buf, static_cast<std::size_t>(n));
                    if (n == 0) c.end = End::eof;
                    if (n < 0 && errno != EAGAIN) c.end = End::reset;
                }
                if (echo_ && c.end != End::reset && c.echoed < c.received.size() &&
                    (revents & POLLOUT) != 0) {
                    ssize_t n = send(c.fd, c.received.data() + c.echoed,
                                     c.received.size() - c.echoed, MSG_NOSIGNAL);
                    if (n > 0) c.echoed += static_cast<std::size_t>(n);
                    if (n < 0 && errno != EAGAIN) c.end = End::reset;
                }
                // Done once ended and (echo) everything was sent back.
                if (c.end != End::open &&
                    (!echo_ || c.end == End::reset || c.echoed == c.received.size())) {
                    close(c.fd);
                    c.fd = -1;
                }
            }
            cv_.notify_all();
        }
    }

    bool echo_;
    int listen_fd_ = -1;
    int port_ = 0;
    int stop_pipe_[2] = {-1, -1};
    mutable std::mutex mutex_;
    mutable std::condition_variable cv_;
    std::deque<Conn> conns_;
    std::thread thread_;
};

// A non-blocking client connection to `port` that sends what was queued and keeps what
// it receives.
class Client {
  public:
    explicit Client(int port) {
        int local_port = 0;
        if (!connect_loopback(port, &fd_, &local_port)) throw std::runtime_error("connect");
        fcntl(fd_, F_SETFL, fcntl(fd_, F_GETFL) | O_NONBLOCK);
    }
    ~Client() { close(fd_); }
    Client(const Client&) = delete;
    Client& operator=(const Client&) = delete;

    void queue(const std::string& data) { out_ += data; }
    void shut_write() { shutdown(fd_, SHUT_WR); }
    bool all_sent() const { return sent_ == out_.size(); }
    std::size_t sent() const { return sent_; }
    const std::string& received() const { return received_; }
    End end() const { return end_; }

    // Sends and receives until `done` holds, the connection ended or `timeout` passed;
    // returns done().
    bool pump_until(const std::function<bool()>& done, milliseconds timeout) {
        const auto deadline = Clock::now() + timeout;
        char buf[65536];
        while (!done() && end_ == End::open) {
            const auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
            if (left.count() <= 0) break;
            pollfd pfd = {fd_, static_cast<short>(POLLIN | (all_sent() ? 0 : POLLOUT)), 0};
            if (poll(&pfd, 1, static_cast<int>(left.count())) <= 0) continue;
            if ((pfd.revents & POLLOUT) != 0) {
                const std::size_t n = std::min<std::size_t>(out_.size() - sent_, 65536);
                ssize_t w = send(fd_, out_.data() + sent_, n, MSG_NOSIGNAL);
                if (w > 0) sent_ += static_cast<std::size_t>(w);
                if (w < 0 && errno != EAGAIN) end_ = End::reset;
            }
            // A failed send took the socket's error: a recv now would only say EOF.
            if (end_ == End::open && (pfd.revents & (POLLIN | POLLERR | POLLHUP)) != 0) {
                ssize_t r = recv(fd_, buf, sizeof buf, 0);
                if (r > 0) received_.append(buf, static_cast<std::size_t>(r));
                if (r == 0) end_ = End::eof;
                if (r < 0 && errno != EAGAIN) end_ = End::reset;
            }
        }
        return done();
    }
    // Pumps until the connection ends (bounded); its end.
    End pump_to_end(milliseconds timeout) {
        pump_until([] { return false; }, timeout);
        return end_;
    }

  private:
    int fd_ = -1;
    std::string out_;
    std::size_t sent_ = 0;
    std::string received_;
    End end_ = End::open;
};

// Sends `data` through `relay` to the echo `server` and checks it came back byte-exact, and
// that the relay counted it once each way.
void expect_echoed(Client& client, TestServer& server, FaultRelay& relay, const std::string& data) {
    client.queue(data);
    ASSERT_TRUE(
        client.pump_until([&] { return client.received().size() >= data.size(); }, seconds(60)));
    EXPECT_TRUE(same_bytes(client.received(), data));
    EXPECT_TRUE(same_bytes(server.received(0), data));
    EXPECT_EQ(relay.bytes(Direction::up), data.size());
    EXPECT_EQ(relay.bytes(Direction::down), data.size());
}

TEST(FaultRelay, ForwardsBothWaysByteExactAndPassesEof) {
    TestServer server(true);
    FaultRelay relay(server.port());
    Client client(relay.port());
    const std::string data = mlt::test::noise_bytes(8 * kMiB, 1);
    expect_echoed(client, server, relay, data);
    if (::testing::Test::HasFatalFailure()) return;
    EXPECT_EQ(relay.connections_accepted(), 1u);
    EXPECT_EQ(relay.open_connections(), 1u);

    // The client's half close reaches the server, whose close comes back.
    client.shut_write();
    ASSERT_TRUE(server.wait_end(0, seconds(10)));
    EXPECT_EQ(server.end(0), End::eof);
    EXPECT_EQ(client.pump_to_end(seconds(10)), End::eof);
    EXPECT_TRUE(wait_until([&] { return relay.open_connections() == 0; }, seconds(10)));
}

TEST(FaultRelay, CutResetsBothSidesAndLaterConnectionsWork) {
    TestServer server(false);
    FaultRelay relay(server.port());
    Client before(relay.port());
    before.queue("before cut");
    ASSERT_TRUE(before.pump_until([&] { return before.all_sent(); }, seconds(10)));
    ASSERT_TRUE(server.wait_received(0, 10, seconds(10)));
    EXPECT_EQ(relay.open_connections(), 1u);

    relay.cut();
    EXPECT_EQ(relay.cuts(), 1u);
    EXPECT_EQ(relay.open_connections(), 0u);
    EXPECT_EQ(before.pump_to_end(seconds(10)), End::reset);
    ASSERT_TRUE(server.wait_end(0, seconds(10)));
    EXPECT_EQ(server.end(0), End::reset);
    EXPECT_EQ(server.received(0), "before cut");

    Client after(relay.port());
    after.queue("after cut");
    ASSERT_TRUE(after.pump_until([&] { return after.all_sent(); }, seconds(10)));
    ASSERT_TRUE(server.wait_received(1, 9, seconds(10)));
    EXPECT_EQ(server.received(1), "after cut");
    EXPECT_EQ(server.end(1), End::open);
    EXPECT_EQ(relay.connections_accepted(), 2u);
    EXPECT_EQ(relay.open_connections(), 1u);
}

TEST(FaultRelay, StallHoldsDataOfOldAndNewConnectionsUntilResume) {
    TestServer server(false);
    FaultRelay relay(server.port());
    Client old_conn(relay.port());
    old_conn.queue("hello");
    ASSERT_TRUE(old_conn.pump_until([&] { return old_conn.all_sent(); }, seconds(10)));
    ASSERT_TRUE(server.wait_received(0, 5, seconds(10)));

    relay.stall();
    EXPECT_TRUE(relay.stalled());
    // More than the client's send buffer, the relay's receive buffer and its own buffer
    // can hold at most: the client's writes must block.
    const std::string data = mlt::test::noise_bytes(most_buffered() + kMiB, 2);
    old_conn.queue(data);
    old_conn.pump_until([] { return false; }, kQuietWindow);
    EXPECT_GT(old_conn.sent(), 5u);
    EXPECT_LT(old_conn.sent(), 5 + data.size()) << "no back-pressure while stalled";
    EXPECT_FALSE(server.wait_received(0, 6, kQuietWindow)) << "bytes passed while stalled";
    EXPECT_EQ(relay.bytes(Direction::up), 5u);

    // A new connection reaches the server but carries nothing either.
    Client new_conn(relay.port());
    new_conn.queue("new");
    ASSERT_TRUE(new_conn.pump_until([&] { return new_conn.all_sent(); }, seconds(10)));
    ASSERT_TRUE(server.wait_connections(2, seconds(10)));
    EXPECT_FALSE(server.wait_received(1, 1, kQuietWindow));
    EXPECT_EQ(relay.open_connections(), 2u);

    relay.resume();
    EXPECT_FALSE(relay.stalled());
    ASSERT_TRUE(old_conn.pump_until([&] { return old_conn.all_sent(); }, seconds(60)));
    ASSERT_TRUE(server.wait_received(0, 5 + data.size(), seconds(60)));
    EXPECT_TRUE(same_bytes(server.received(0), "hello" + data));
    ASSERT_TRUE(server.wait_received(1, 3, seconds(10)));
    EXPECT_EQ(server.received(1), "new");
    EXPECT_EQ(relay.bytes(Direction::up), 5 + data.size() + 3);
    EXPECT_EQ(relay.cuts(), 0u);
}

TEST(FaultRelay, CutAfterCountsBytesOverAllConnections) {
    TestServer server(false);
    FaultRelay relay(server.port());
    EXPECT_FALSE(relay.wait_fired(milliseconds(0)));  // nothing armed
    relay.cut_after(Direction::up, 1500);
    const std::string first = mlt::test::noise_bytes(1000, 3);
    const std::string second = mlt::test::noise_bytes(10000, 4);
    Client a(relay.port());
    a.queue(first);
    ASSERT_TRUE(a.pump_until([&] { return a.all_sent(); }, seconds(10)));
    ASSERT_TRUE(server.wait_received(0, first.size(), seconds(10)));
    EXPECT_FALSE(relay.wait_fired(milliseconds(0)));

    Client b(relay.port());
    b.queue(second);
    EXPECT_EQ(b.pump_to_end(seconds(10)), End::reset);
    ASSERT_TRUE(relay.wait_fired(seconds(10)));
    EXPECT_EQ(a.pump_to_end(seconds(10)), End::reset);
    ASSERT_TRUE(server.wait_end(0, seconds(10)));
    ASSERT_TRUE(server.wait_end(1, seconds(10)));
    EXPECT_EQ(server.end(0), End::reset);
    EXPECT_EQ(server.end(1), End::reset);
    EXPECT_TRUE(same_bytes(server.received(0), first));
    EXPECT_TRUE(same_bytes(server.received(1), second.substr(0, 500)));
    EXPECT_EQ(relay.bytes(Direction::up), 1500u);
    EXPECT_EQ(relay.cuts(), 1u);
    EXPECT_EQ(relay.open_connections(), 0u);
}

TEST(FaultRelay, CutAfterHitsTheMiddleOfABigTransfer) {
    TestServer server(false);
    FaultRelay relay(server.port());
    const std::size_t at = 3 * kMiB + 4321;
    relay.cut_after(Direction::up, at);
    const std::string data = mlt::test::noise_bytes(8 * kMiB, 5);
    Client client(relay.port());
    client.queue(data);
    EXPECT_EQ(client.pump_to_end(seconds(60)), End::reset);
    ASSERT_TRUE(relay.wait_fired(seconds(10)));
    ASSERT_TRUE(server.wait_end(0, seconds(10)));
    EXPECT_EQ(server.end(0), End::reset);
    EXPECT_TRUE(same_bytes(server.received(0), data.substr(0, at)));
    EXPECT_EQ(relay.bytes(Direction::up), at);
    EXPECT_FALSE(relay.stalled());
}

TEST(FaultRelay, StallAfterDownHoldsTheRestUntilResume) {
    TestServer server(true);
    FaultRelay relay(server.port());
    const std::size_t at = 100001;
    relay.stall_after(Direction::down, at);
    const std::string data = mlt::test::noise_bytes(kMiB, 6);
    Client client(relay.port());
    client.queue(data);
    ASSERT_TRUE(client.pump_until([&] { return client.received().size() >= at; }, seconds(30)));
    ASSERT_TRUE(relay.wait_fired(seconds(10)));
    EXPECT_TRUE(relay.stalled());
    client.pump_until([] { return false; }, kQuietWindow);
    EXPECT_EQ(client.received().size(), at) << "bytes passed the fired stall";
    EXPECT_EQ(relay.bytes(Direction::down), at);
    EXPECT_EQ(client.end(), End::open);

    relay.resume();
    ASSERT_TRUE(
        client.pump_until([&] { return client.received().size() >= data.size(); }, seconds(30)));
    EXPECT_TRUE(same_bytes(client.received(), data));
    EXPECT_EQ(relay.bytes(Direction::down), data.size());
    EXPECT_EQ(relay.cuts(), 0u);
}

TEST(FaultRelay, RateLimitHoldsBackUntilLifted) {
    TestServer server(false);
    FaultRelay relay(server.port());
    // 64 KiB/s: the 4 MiB would need a minute, so the relay must still hold most of it
    // when the first bytes arrive (only byte counts are compared, never durations).
    relay.set_rate(64 * 1024);
    const std::string data = mlt::test::noise_bytes(4 * kMiB, 7);
    Client client(relay.port());
    client.queue(data);
    client.pump_until([] { return false; }, kQuietWindow);
    ASSERT_TRUE(server.wait_received(0, 1, seconds(10)));
    EXPECT_LT(relay.bytes(Direction::up), data.size() / 2);

    relay.set_rate(0);
    ASSERT_TRUE(client.pump_until([&] { return client.all_sent(); }, seconds(60)));
    ASSERT_TRUE(server.wait_received(0, data.size(), seconds(60)));
    EXPECT_TRUE(same_bytes(server.received(0), data));
}

TEST(FaultRelay, RateLimitKeepsBytesAndOrderBothWays) {
    TestServer server(true);
    FaultRelay relay(server.port());
    relay.set_rate(2 * kMiB);
    const std::string data = mlt::test::noise_bytes(kMiB / 2, 8);
    Client client(relay.port());
    expect_echoed(client, server, relay, data);
    if (::testing::Test::HasFatalFailure()) return;
}

TEST(FaultRelay, DestructorReturnsWhileConnectionsAreOpen) {
    TestServer server(true);
    auto relay = std::make_unique<FaultRelay>(server.port());
    Client client(relay->port());
    client.queue("ping");
    ASSERT_TRUE(client.pump_until([&] { return client.received().size() >= 4; }, seconds(10)));
    relay.reset();
    EXPECT_EQ(client.pump_to_end(seconds(10)), End::reset);
    ASSERT_TRUE(server.wait_end(0, seconds(10)));
    EXPECT_EQ(server.end(0), End::reset);
}

TEST(FaultRelay, DestructorReturnsWhileStalled) {
    TestServer server(true);
    auto relay = std::make_unique<FaultRelay>(server.port());
    Client a(relay->port());
    a.queue("ping");
    ASSERT_TRUE(a.pump_until([&] { return a.received().size() >= 4; }, seconds(10)));
    relay->stall();
    a.queue(mlt::test::noise_bytes(4 * kMiB, 9));
    a.pump_until([] { return false; }, kQuietWindow);
    Client b(relay->port());  // accepted while stalled
    ASSERT_TRUE(server.wait_connections(2, seconds(10)));
    relay.reset();
    EXPECT_EQ(a.pump_to_end(seconds(10)), End::reset);
    EXPECT_EQ(b.pump_to_end(seconds(10)), End::reset);
}

TEST(FaultRelay, RefusedTargetResetsTheClient) {
    ClosedPort closed;
    FaultRelay relay(closed.port());
    Client client(relay.port());
    EXPECT_EQ(client.pump_to_end(seconds(10)), End::reset);
    EXPECT_TRUE(wait_until([&] { return relay.open_connections() == 0; }, seconds(10)));
    EXPECT_EQ(relay.connections_accepted(), 1u);
}

TEST(FaultRelay, ThrowsWhenThePortIsTaken) {
    SilentListener busy;
    EXPECT_THROW(FaultRelay(busy.port(), busy.port(), std::chrono::milliseconds(0)),
                 std::runtime_error);
}

// OpenSSH sessions through a relay in front of the test sshd.
class FaultRelaySsh : public SshTest {
  protected:
    // The fixture's `ssh ... command` argv, connecting to `port` instead of sshd's.
    std::vector<std::string> ssh_argv(int port, const std::string& command) const {
        std::vector<std::string> argv = sshd().openssh_argv(
            sshd().client_key_path(), sshd().home() + "/.ssh/known_hosts", command);
        auto p = std::find(argv.begin(), argv.end(), "-p");
        if (p == argv.end() || p + 1 == argv.end()) throw std::logic_error("no -p in argv");
        *(p + 1) = std::to_string(port);
        return argv;
    }
};

TEST_F(FaultRelaySsh, SessionPassesThrough) {
    FaultRelay relay(sshd().port());
    ProcessResult r = env().run(ssh_argv(relay.port(), "echo hello"), seconds(30));
    ASSERT_EQ(r.exit_code, 0) << describe(r) << sshd_log();
    EXPECT_EQ(trim(r.out), "hello");
    EXPECT_TRUE(logged_in()) << sshd_log();
    EXPECT_EQ(relay.connections_accepted(), 1u);
    EXPECT_GT(relay.bytes(Direction::up), 0u);
    EXPECT_GT(relay.bytes(Direction::down), 0u);
}

TEST_F(FaultRelaySsh, StalledSessionGoesOnAfterResume) {
    FaultRelay relay(sshd().port());
    relay.stall();
    BackgroundProcess ssh(ssh_argv(relay.port(), "echo hello"), env().vars(), sshd().home());
    ASSERT_TRUE(wait_until([&] { return relay.connections_accepted() == 1; }, seconds(10)));
    EXPECT_FALSE(ssh.wait_for_output("hello", kQuietWindow));
    EXPECT_EQ(relay.bytes(Direction::up) + relay.bytes(Direction::down), 0u);
    relay.resume();
    ProcessResult r = ssh.wait(seconds(30));
    ASSERT_EQ(r.exit_code, 0) << describe(r) << sshd_log();
    EXPECT_EQ(trim(r.out), "hello");
}

TEST_F(FaultRelaySsh, CutEndsTheSession) {
    FaultRelay relay(sshd().port());
    // Writes every second, so the remote loop ends (SIGPIPE) soon after the connection.
    BackgroundProcess ssh(ssh_argv(relay.port(), "echo started; while echo tick; do sleep 1; done"),
                          env().vars(), sshd().home());
    ASSERT_TRUE(ssh.wait_for_output("started", seconds(30))) << ssh.err() << sshd_log();
    relay.cut();
    ProcessResult r = ssh.wait(seconds(30));
    EXPECT_FALSE(r.timed_out);
    EXPECT_EQ(r.exit_code, 255) << describe(r);
    EXPECT_EQ(relay.cuts(), 1u);
}

}  // namespace
}  // namespace mlt_test
