#pragma once

#include <netinet/in.h>

namespace mlt_test {

// The IPv4 address 127.0.0.1:port.
sockaddr_in loopback_address(int port);

// A TCP port on 127.0.0.1 that was free a moment ago (bound to port 0, then closed).
// Throws std::runtime_error when no socket can be bound.
int find_free_port();

// A port on 127.0.0.1 that refuses connections for the lifetime of this object: a socket is
// bound to it but never listens, so nobody else (e.g. a parallel test's sshd) can take it.
class ClosedPort {
  public:
    ClosedPort();  // throws std::runtime_error on failure
    // The same on `port` (one a test's relay just left: a lost host's address stays refused,
    // never another parallel test's sshd).
    explicit ClosedPort(int port);
    ~ClosedPort();
    ClosedPort(const ClosedPort&) = delete;
    ClosedPort& operator=(const ClosedPort&) = delete;

    // The refused port.
    int port() const { return port_; }

  private:
    int fd_ = -1;
    int port_ = 0;
};

// A socket on 127.0.0.1 that listens but never accepts nor speaks: the kernel completes
// the TCP handshake, so a client waits for the SSH banner until its own timeout.
class SilentListener {
  public:
    SilentListener();  // throws std::runtime_error on failure
    ~SilentListener();
    SilentListener(const SilentListener&) = delete;
    SilentListener& operator=(const SilentListener&) = delete;

    // The port it listens on.
    int port() const { return port_; }

  private:
    int fd_ = -1;
    int port_ = 0;
};

// Opens a TCP connection to 127.0.0.1:port and returns its fd and local port in the
// out-parameters; returns false when the connection is refused.
bool connect_loopback(int port, int* fd, int* local_port);

}  // namespace mlt_test
