// Exec channels at the libssh level: opening them (one, or several side by side), the exec
// request, writing a command's input, one turn of reading its output, and its exit status.

#include "channel_io.h"

#include <poll.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <optional>
#include <vector>

#include "mlt/ssh/counts.h"
#include "mlt/util/interrupt.h"

namespace mlt::ssh_detail {

Error channel_error(ssh_session s, const std::string& what) {
    if (ssh_is_connected(s))
        return remote_error(what + ": " + last_error(s), "run with -v for details");
    return Error(ErrorKind::disconnected, what + ": " + last_error(s), "the connection was lost");
}

namespace {

// Sets a session non-blocking for as long as it lives: a call then sends its request and
// returns SSH_AGAIN instead of waiting for the answer.
class NonBlocking {
  public:
    explicit NonBlocking(ssh_session s) : s_(s), was_(ssh_is_blocking(s)) {
        ssh_set_blocking(s, 0);
    }
    ~NonBlocking() { ssh_set_blocking(s_, was_); }
    NonBlocking(const NonBlocking&) = delete;
    NonBlocking& operator=(const NonBlocking&) = delete;

  private:
    ssh_session s_;
    int was_;
};

}  // namespace

// A channel read with a timeout would not do: it returns on channel data only, so a window
// adjustment arriving first would still cost the whole timeout (a 1 GiB upload shuts sshd's
// 2 MiB window about 900 times).
void wait_for_server(ssh_session s, int timeout_ms) {
    pollfd p{ssh_get_fd(s), POLLIN, 0};
    if (p.fd < 0) return;
    while (::poll(&p, 1, timeout_ms) < 0 && errno == EINTR) {
    }
}

void write_all(ssh_session s, Liveness& live, ssh_channel ch, const char* data, size_t len,
               const std::string& display) {
    size_t sent = 0;
    while (sent < len) {
        int n = 0;
        if (ssh_channel_window_size(ch) == 0) {
            // A blocking write would wait for the window up to the call timeout (5 s), deaf
            // to signals: wait in short turns, and let a write that does not block take the
            // window adjustment in (and send what it allows).
            wait_for_server(s, kPollMs);
            NonBlocking polling(s);
            n = ssh_channel_write(ch, data + sent, static_cast<uint32_t>(len - sent));
        } else {
            // Within the window, a write only waits for the socket: a silent link is told
            // from a slow reader by the keepalives.
            const size_t room = std::min<size_t>(len - sent, ssh_channel_window_size(ch));
            n = ssh_channel_write(ch, data + sent, static_cast<uint32_t>(room));
        }
        if (n == SSH_ERROR) throw channel_error(s, "cannot send input to " + display);
        if (n > 0) sent += static_cast<size_t>(n);
        live.check(s, display);
        throw_if_interrupted();
    }
}

ChannelPtr open_ahead(ssh_session s) {
    ChannelPtr channel(ssh_channel_new(s));
    if (!channel) return nullptr;
    int rc;
    {
        NonBlocking sending(s);
        rc = ssh_channel_open_session(channel.get());
    }
    return rc == SSH_OK || rc == SSH_AGAIN ? std::move(channel) : nullptr;
}

ChannelPtr open_exec(ssh_session s, Liveness& live, const std::string& command,
                     const std::string& display, std::string_view first_input, ChannelPtr opening) {
    // An open sent ahead is no measure of the link: its answer waited for the caller.
    const bool measured = !opening;
    ChannelPtr channel = opening ? std::move(opening) : ChannelPtr(ssh_channel_new(s));
    if (!channel) throw channel_error(s, "cannot create a channel to " + display);
    // Both requests wait for the server's answer; SSH_AGAIN means the call timeout passed
    // first, and the same call continues where it was (also an open sent ahead).
    int rc;
    const auto asked = std::chrono::steady_clock::now();
    while ((rc = ssh_channel_open_session(channel.get())) == SSH_AGAIN) live.check(s, display);
    if (rc != SSH_OK) throw channel_error(s, "cannot open a channel to " + display);
    ssh_detail::count_channels(1);
    ssh_detail::count_commands(1);  // its exec request follows
    // sshd answers an open at once: about one round trip of the link.
    if (measured) live.saw_reply(asked);
    spdlog::trace("exec on {}: {}", display, command);
    if (!first_input.empty()) {
        // The request goes out without waiting for its answer (a call that does not block
        // returns SSH_AGAIN once it is sent), and the input is written as soon as it can go:
        // sshd gives a session channel a window of 0 until its command starts, and opens it
        // just before it answers, so the input travels while the login shell starts (libssh
        // waits that round trip for the window). The same call then waits for the answer.
        {
            NonBlocking sending(s);
            rc = ssh_channel_request_exec(channel.get(), command.c_str());
        }
        if (rc == SSH_ERROR) throw channel_error(s, "cannot start a remote command on " + display);
        try {
            write_all(s, live, channel.get(), first_input.data(), first_input.size(), display);
        } catch (const Error& e) {
            // The command ended before it took its input (a ForceCommand that runs something
            // else and exits): the caller sees the channel end. A lost link or a signal goes up.
            if (e.kind() != ErrorKind::remote) throw;
            spdlog::debug("{}", e.what());
        }
        if (rc == SSH_OK) return channel;
    }
    while ((rc = ssh_channel_request_exec(channel.get(), command.c_str())) == SSH_AGAIN)
        live.check(s, display);
    if (rc != SSH_OK) throw channel_error(s, "cannot start a remote command on " + display);
    return channel;
}

std::vector<ChannelPtr> open_sessions(ssh_session s, Liveness& live, size_t n,
                                      const std::string& display, std::optional<Error>& refused,
                                      const std::string* unix_path) {
    const auto open = [unix_path](ssh_channel ch) {
        return unix_path ? ssh_channel_open_forward_unix(ch, unix_path->c_str(), "127.0.0.1", 0)
                         : ssh_channel_open_session(ch);
    };
    std::vector<ChannelPtr> channels;
    // What each open said when it was sent: its answer (a refusal too) may already have come
    // within the call, while it read the answers to the opens before it.
    std::vector<int> said;
    const auto asked = std::chrono::steady_clock::now();
    {
        NonBlocking sending(s);
        for (size_t i = 0; i < n; ++i) {
            channels.emplace_back(ssh_channel_new(s));
            if (!channels.back()) throw channel_error(s, "cannot create a channel to " + display);
            said.push_back(open(channels.back().get()));
        }
    }
    // Every answer is awaited, also behind a refusal: a channel is closed only once its
    // open is answered, and no command has run on those behind it. A lost link shows here
    // as a failed open of a link that is gone (channel_error's kind).
    size_t opened = 0;
    for (size_t i = 0; i < channels.size(); ++i) {
        int rc = said[i];
        while (rc == SSH_AGAIN) {
            live.check(s, display);
            rc = open(channels[i].get());
        }
        // sshd answers a session's open at once (a socket's only after it connected).
        if (i == 0 && !unix_path) live.saw_reply(asked);
        if (rc != SSH_OK && !refused) {
            refused = channel_error(s, "cannot open a channel to " + display);
            if (refused->kind() != ErrorKind::remote) throw *refused;
        }
        if (!refused) ++opened;
    }
    channels.resize(opened);
    ssh_detail::count_channels(opened);
    return channels;
}

std::vector<StartedExec> open_execs(ssh_session s, Liveness& live,
                                    const std::vector<std::string>& commands,
                                    const std::string& display, std::optional<Error>& refused) {
    std::vector<ChannelPtr> channels = open_sessions(s, live, commands.size(), display, refused);
    ssh_detail::count_commands(channels.size());
    // Each exec request goes out, its answer taken later (exec_request).
    std::vector<StartedExec> started;
    for (size_t i = 0; i < channels.size(); ++i) {
        spdlog::trace("exec on {}: {}", display, commands[i]);
        StartedExec& exec = started.emplace_back();
        exec.channel = std::move(channels[i]);
        exec_request(s, exec.channel.get(), exec.answer, commands[i], display);
    }
    return started;
}

void exec_request(ssh_session s, ssh_channel ch, int& answer, const std::string& command,
                  const std::string& display) {
    if (answer != SSH_AGAIN) return;
    {
        NonBlocking sending(s);
        answer = ssh_channel_request_exec(ch, command.c_str());
    }
    if (answer != SSH_OK && answer != SSH_AGAIN)
        throw channel_error(s, "cannot start a remote command on " + display);
}

int exit_status_of(ssh_session s, Liveness& live, ssh_channel ch, const std::string& display) {
    for (;;) {
        // Takes in what has come, without waiting (a blocking call would wait up to the call
        // timeout, deaf to signals); -1 before the close arrived means "not yet", after it
        // "none was sent".
        int status;
        {
            NonBlocking polling(s);
            status = ssh_channel_get_exit_status(ch);
        }
        if (status != -1 || ssh_channel_is_closed(ch)) return status;
        if (!ssh_is_connected(s)) throw channel_error(s, "lost the connection to " + display);
        live.check(s, display);
        throw_if_interrupted();
        wait_for_server(s, kPollMs);
    }
}

size_t read_size(const Liveness& live) {
    if (live.fastest_reply_s < 0) return kReadChunk;
    const double bytes = live.fastest_reply_s * kWindowRate;
    return static_cast<size_t>(
        std::clamp(bytes, static_cast<double>(kMinReadChunk), static_cast<double>(kReadChunk)));
}

bool read_turn(ssh_session s, Liveness& live, ssh_channel ch, ReadBuffer& buf, int wait_ms,
               const OutputSink& on_stdout, const OutputSink& on_stderr, const std::string& display,
               size_t* got) {
    const auto size = static_cast<uint32_t>(std::min(buf.size(), read_size(live)));
    // Waits (up to wait_ms) for anything on either stream, then takes what has arrived: a
    // read of `size` with no wait grows the window to `size` without waiting to fill it.
    if (wait_ms > 0 && ssh_channel_poll(ch, 1) <= 0) ssh_channel_poll_timeout(ch, wait_ms, 0);
    int n = ssh_channel_read_timeout(ch, buf.data(), size, 0, 0);
    if (n == SSH_ERROR) throw channel_error(s, "lost the output of a remote command");
    if (n == SSH_EOF || n == SSH_AGAIN) n = 0;  // drained and closed; or nothing in time
    if (n > 0 && on_stdout) on_stdout(std::string_view(buf.data(), static_cast<size_t>(n)));
    int e = ssh_channel_read_nonblocking(ch, buf.data(), size, 1);
    if (e == SSH_ERROR) throw channel_error(s, "lost the output of a remote command");
    if (e == SSH_EOF || e == SSH_AGAIN) e = 0;
    if (e > 0 && on_stderr) on_stderr(std::string_view(buf.data(), static_cast<size_t>(e)));
    if (got) *got = static_cast<size_t>(n) + static_cast<size_t>(e);
    // A lost connection also reads as a closed channel: it is an error, not an end.
    if (!ssh_is_connected(s)) throw channel_error(s, "lost the connection to " + display);
    live.check(s, display);
    throw_if_interrupted();
    // Both streams are drained only when a final read finds nothing on either.
    return n == 0 && e == 0 && (ssh_channel_is_eof(ch) || ssh_channel_is_closed(ch)) &&
           ssh_channel_poll(ch, 0) <= 0 && ssh_channel_poll(ch, 1) <= 0;
}

}  // namespace mlt::ssh_detail
