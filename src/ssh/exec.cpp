// Remote commands over exec channels.

#include <poll.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <vector>

#include "internal.h"
#include "mlt/util/interrupt.h"

namespace mlt {

using namespace ssh_detail;

namespace ssh_detail {

Error channel_error(ssh_session s, const std::string& what) {
    const bool connected = ssh_is_connected(s);
    return Error(connected ? ErrorKind::remote : ErrorKind::disconnected, exit_code::kConnection,
                 what + ": " + last_error(s),
                 connected ? "run with -v for details" : "the connection was lost; try again");
}

void write_all(ssh_session s, ssh_channel ch, const char* data, size_t len) {
    size_t sent = 0;
    while (sent < len) {
        int n = ssh_channel_write(ch, data + sent, static_cast<uint32_t>(len - sent));
        if (n == SSH_ERROR) throw channel_error(s, "cannot send input to a remote command");
        sent += static_cast<size_t>(n);
    }
}

bool read_turn(ssh_session s, ssh_channel ch, std::vector<char>& buf, int wait_ms,
               const OutputSink& on_stdout, const OutputSink& on_stderr,
               const std::string& display) {
    const auto size = static_cast<uint32_t>(buf.size());
    int n = wait_ms == 0 ? ssh_channel_read_nonblocking(ch, buf.data(), size, 0)
                         : ssh_channel_read_timeout(ch, buf.data(), size, 0, wait_ms);
    if (n == SSH_ERROR) throw channel_error(s, "lost the output of a remote command");
    if (n == SSH_EOF) n = 0;  // reads report a drained, closed stream as SSH_EOF
    if (n > 0 && on_stdout) on_stdout(std::string_view(buf.data(), static_cast<size_t>(n)));
    int e = ssh_channel_read_nonblocking(ch, buf.data(), size, 1);
    if (e == SSH_ERROR) throw channel_error(s, "lost the output of a remote command");
    if (e == SSH_EOF) e = 0;
    if (e > 0 && on_stderr) on_stderr(std::string_view(buf.data(), static_cast<size_t>(e)));
    // A lost connection also reads as a closed channel: it is an error, not an end.
    if (!ssh_is_connected(s)) throw channel_error(s, "lost the connection to " + display);
    throw_if_interrupted();
    // Both streams are drained only when a final read finds nothing on either.
    return n == 0 && e == 0 && (ssh_channel_is_eof(ch) || ssh_channel_is_closed(ch)) &&
           ssh_channel_poll(ch, 0) <= 0 && ssh_channel_poll(ch, 1) <= 0;
}

}  // namespace ssh_detail

namespace {

// Waits up to `timeout_ms` for the server to send anything (a window adjustment, output).
// A channel read with a timeout would not do: it returns on channel data only, so a window
// adjustment arriving first would still cost the whole timeout (about 900 times for 1 GiB
// through sshd's 2 MiB window; with 2 ms, a fifth of the upload's time here).
void wait_for_server(ssh_session s, int timeout_ms) {
    pollfd p{ssh_get_fd(s), POLLIN, 0};
    if (p.fd < 0) return;
    while (::poll(&p, 1, timeout_ms) < 0 && errno == EINTR) {
    }
}

}  // namespace

ExecResult Session::exec(const std::string& command, const InputSource& input,
                         const OutputSink& on_stdout, const OutputSink& on_stderr) {
    ssh_session s = impl_->session.get();
    ChannelPtr channel(ssh_channel_new(s));
    if (!channel) throw channel_error(s, "cannot create a channel to " + impl_->display);
    ssh_channel ch = channel.get();
    if (ssh_channel_open_session(ch) != SSH_OK)
        throw channel_error(s, "cannot open a channel to " + impl_->display);
    spdlog::trace("exec on {}: {}", impl_->display, command);
    if (ssh_channel_request_exec(ch, command.c_str()) != SSH_OK)
        throw channel_error(s, "cannot start a remote command on " + impl_->display);

    // A pending Ctrl+C ends this command (the caller decides what next).
    throw_if_interrupted();
    std::vector<char> buf(kReadChunk);
    // Input and output are interleaved: input goes out as far as the remote window allows
    // and output is read in between, so neither side can wait on the other. If the remote
    // command ends before it has read all its input (tar unable to start zstd), the rest is
    // dropped: its exit status and stderr say what happened, not a failed write.
    std::vector<char> in(input ? kInputChunk : 0);
    size_t in_at = 0, in_len = 0;
    bool sending = static_cast<bool>(input);
    bool stalled = false;
    std::chrono::steady_clock::time_point stalled_since;
    if (!sending && ssh_channel_send_eof(ch) != SSH_OK)
        throw channel_error(s, "cannot close the input of a remote command");
    for (;;) {
        bool wrote = false;
        if (sending && in_at == in_len) {
            in_len = input(in.data(), in.size());
            in_at = 0;
            if (in_len == 0) {
                sending = false;
                if (!ssh_channel_is_closed(ch) && ssh_channel_send_eof(ch) != SSH_OK)
                    throw channel_error(s, "cannot close the input of a remote command");
            }
        }
        if (sending && ssh_channel_is_closed(ch)) {
            sending = false;  // the command is gone; nobody reads the rest
        } else if (sending) {
            const uint32_t window = ssh_channel_window_size(ch);
            // The remote closed its output and takes no more input: it has ended, and its
            // channel close is late (a busy server). Stop feeding it rather than wait.
            if (window == 0 && ssh_channel_is_eof(ch)) {
                const auto now = std::chrono::steady_clock::now();
                if (!stalled) stalled_since = now;
                stalled = true;
                if (now - stalled_since > std::chrono::seconds(2)) sending = false;
            } else {
                stalled = false;
            }
            if (sending && window > 0) {
                const uint32_t len = static_cast<uint32_t>(std::min<size_t>(window, in_len - in_at));
                const int n = ssh_channel_write(ch, in.data() + in_at, len);
                if (n == SSH_ERROR) {
                    if (!ssh_is_connected(s) || !ssh_channel_is_closed(ch))
                        throw channel_error(s, "cannot send input to " + impl_->display);
                    sending = false;
                } else {
                    in_at += static_cast<size_t>(n);
                    wrote = n > 0;
                }
            }
        }
        // While input flows, only glance at the output; when the remote window is shut, wait
        // for the server's next packet, which the read then takes in. With no input left,
        // wait for output as long as kPollMs.
        if (sending && !wrote) wait_for_server(s, kPollMs);
        const int wait = sending ? 0 : kPollMs;
        if (read_turn(s, ch, buf, wait, on_stdout, on_stderr, impl_->display) && !sending) break;
    }

    ExecResult result;
    result.exit_status = ssh_channel_get_exit_status(ch);
    spdlog::trace("exit status {}", result.exit_status);
    return result;
}

}  // namespace mlt
