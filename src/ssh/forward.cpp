// Session::forward: a local TCP port forwarded to a port the remote host reaches, over
// direct-tcpip channels of the session (what `ssh -L` does). One thread drives the listening
// socket, every accepted connection and the session: libssh wants one thread per session.

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <list>
#include <vector>

#include "channel_io.h"
#include "mlt/util/fd.h"
#include "mlt/util/interrupt.h"
#include "session_impl.h"

namespace mlt {

using namespace ssh_detail;

namespace {

// What may wait here for a local reader, per connection.
constexpr size_t kBacklog = 1024 * 1024;

// One accepted connection and its channel.
struct Pipe {
    UniqueFd fd;
    ChannelPtr channel;
    std::string to_socket;  // from the channel, not yet sent to the socket
    bool socket_eof = false;
};

// The listening socket on 127.0.0.1:`port` (0: a free one), non-blocking.
UniqueFd listen_on(int port) {
    UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!fd) throw io_error(std::string("cannot create a socket: ") + std::strerror(errno));
    const int one = 1;
    ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(fd.get(), 16) != 0)
        throw usage_error(
            "cannot listen on 127.0.0.1:" + std::to_string(port) + ": " + std::strerror(errno),
            "pick another local port, or 0 for a free one");
    return fd;
}

int port_of(int fd) {
    sockaddr_in addr{};
    socklen_t len = sizeof addr;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    return ntohs(addr.sin_port);
}

// Moves what is waiting between the socket and the channel; false once the pipe is done
// (both sides ended, or one failed).
bool pump(Pipe& p, char* buf, size_t size) {
    ssh_channel ch = p.channel.get();
    if (!p.socket_eof) {
        const ssize_t n = ::recv(p.fd.get(), buf, size, MSG_DONTWAIT);
        if (n > 0) {
            for (ssize_t done = 0; done < n;) {
                const int w = ssh_channel_write(ch, buf + done, static_cast<uint32_t>(n - done));
                if (w == SSH_ERROR) return false;
                done += w;
            }
        } else if (n == 0) {
            p.socket_eof = true;
            ssh_channel_send_eof(ch);
        } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            return false;
        }
    }
    // A local reader that does not keep up leaves the rest in the channel, whose window
    // then holds the remote side back: what waits here stays bounded.
    if (p.to_socket.size() < kBacklog) {
        const int r = ssh_channel_read_nonblocking(ch, buf, static_cast<uint32_t>(size), 0);
        if (r == SSH_ERROR) return false;
        if (r > 0) p.to_socket.append(buf, static_cast<size_t>(r));
    }
    if (!p.to_socket.empty()) {
        const ssize_t n =
            ::send(p.fd.get(), p.to_socket.data(), p.to_socket.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n > 0)
            p.to_socket.erase(0, static_cast<size_t>(n));
        else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            return false;
    }
    const bool channel_done = ssh_channel_is_eof(ch) || ssh_channel_is_closed(ch);
    if (channel_done && p.to_socket.empty() && ssh_channel_poll(ch, 0) <= 0) {
        ::shutdown(p.fd.get(), SHUT_WR);
        return !p.socket_eof;  // the socket's side may still have something to say
    }
    return true;
}

}  // namespace

void Session::forward(int local_port, const std::string& remote_host, int remote_port,
                      const std::function<void(int)>& on_listening) {
    ssh_session s = impl_->session.get();
    const UniqueFd listener = listen_on(local_port);
    on_listening(port_of(listener.get()));
    std::list<Pipe> pipes;
    std::vector<char> buf(64 * 1024);
    for (;;) {
        std::vector<pollfd> fds{{listener.get(), POLLIN, 0}, {ssh_get_fd(s), POLLIN, 0}};
        for (const Pipe& p : pipes)
            fds.push_back({p.fd.get(),
                           static_cast<short>((p.socket_eof ? 0 : POLLIN) |
                                              (p.to_socket.empty() ? 0 : POLLOUT)),
                           0});
        ::poll(fds.data(), fds.size(), 50);
        throw_if_interrupted();
        impl_->live.check(s, impl_->display);
        if (fds[0].revents & POLLIN) {
            UniqueFd client(
                ::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
            if (client) {
                ChannelPtr channel(ssh_channel_new(s));
                int rc = SSH_ERROR;
                if (channel)
                    while ((rc = ssh_channel_open_forward(channel.get(), remote_host.c_str(),
                                                          remote_port, "127.0.0.1",
                                                          port_of(client.get()))) == SSH_AGAIN)
                        impl_->live.check(s, impl_->display);
                if (rc == SSH_OK)
                    pipes.push_back({std::move(client), std::move(channel), {}, false});
                else
                    spdlog::warn("{}:{} on {} refused a forwarded connection: {}", remote_host,
                                 remote_port, impl_->display, ssh_get_error(s));
            }
        }
        for (auto it = pipes.begin(); it != pipes.end();)
            it = pump(*it, buf.data(), buf.size()) ? std::next(it) : pipes.erase(it);
        if (!ssh_is_connected(s))
            throw Error(ErrorKind::disconnected, "lost the connection to " + impl_->display,
                        "the forward ended; start it again");
    }
}

}  // namespace mlt
