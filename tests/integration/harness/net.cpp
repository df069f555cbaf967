#include "harness/net.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace mlt_test {

sockaddr_in loopback_address(int port) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return addr;
}

namespace {

int local_port_of(int fd) {
    sockaddr_in addr{};
    socklen_t len = sizeof addr;
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return 0;
    return ntohs(addr.sin_port);
}

// A socket bound to 127.0.0.1:0; throws on failure.
int bind_any_port(int port = 0) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
    const int one = 1;  // a port a relay just left may still have connections in TIME_WAIT
    if (port != 0) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr = loopback_address(port);
    if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
        close(fd);
        throw std::runtime_error(std::string("bind: ") + std::strerror(errno));
    }
    return fd;
}

}  // namespace

int find_free_port() {
    int fd = bind_any_port();
    int port = local_port_of(fd);
    close(fd);
    if (port == 0) throw std::runtime_error("getsockname failed");
    return port;
}

ClosedPort::ClosedPort() : fd_(bind_any_port()), port_(local_port_of(fd_)) {}

ClosedPort::ClosedPort(int port) : fd_(bind_any_port(port)), port_(port) {}

ClosedPort::~ClosedPort() {
    close(fd_);
}

SilentListener::SilentListener() : fd_(bind_any_port()) {
    if (listen(fd_, 16) != 0) {
        close(fd_);
        throw std::runtime_error(std::string("listen: ") + std::strerror(errno));
    }
    port_ = local_port_of(fd_);
}

SilentListener::~SilentListener() {
    close(fd_);
}

bool connect_loopback(int port, int* fd, int* local_port) {
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0) return false;
    sockaddr_in addr = loopback_address(port);
    if (connect(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
        close(s);
        return false;
    }
    *fd = s;
    *local_port = local_port_of(s);
    return true;
}

}  // namespace mlt_test
