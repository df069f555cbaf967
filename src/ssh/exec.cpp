// Remote commands over exec channels.

#include <spdlog/spdlog.h>

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

}  // namespace ssh_detail

namespace {


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
    // Stdin first: the commands mlt feeds (tar -x, cat >) read all their input before they
    // say much. Output that arrives meanwhile waits in libssh's channel buffer.
    if (input) {
        for (;;) {
            size_t len = input(buf.data(), buf.size());
            if (len == 0) break;
            write_all(s, ch, buf.data(), len);
        }
    }
    if (ssh_channel_send_eof(ch) != SSH_OK)
        throw channel_error(s, "cannot close the input of a remote command");

    for (;;) {
        int n = ssh_channel_read_timeout(ch, buf.data(), static_cast<uint32_t>(buf.size()), 0,
                                         kPollMs);
        if (n == SSH_ERROR) throw channel_error(s, "lost the output of a remote command");
        if (n == SSH_EOF) n = 0;  // reads report a drained, closed stream as SSH_EOF
        if (n > 0 && on_stdout) on_stdout(std::string_view(buf.data(), static_cast<size_t>(n)));
        int e = ssh_channel_read_nonblocking(ch, buf.data(), static_cast<uint32_t>(buf.size()), 1);
        if (e == SSH_ERROR) throw channel_error(s, "lost the output of a remote command");
        if (e == SSH_EOF) e = 0;
        if (e > 0 && on_stderr) on_stderr(std::string_view(buf.data(), static_cast<size_t>(e)));
        if (n == 0 && e == 0 && ssh_channel_is_eof(ch)) {
            // Both streams are drained only when a final read finds nothing on either.
            if (ssh_channel_poll(ch, 0) <= 0 && ssh_channel_poll(ch, 1) <= 0) break;
        }
        if (!ssh_is_connected(s)) throw channel_error(s, "lost the connection to " + impl_->display);
        throw_if_interrupted();
    }

    ExecResult result;
    result.exit_status = ssh_channel_get_exit_status(ch);
    spdlog::trace("exit status {}", result.exit_status);
    return result;
}

}  // namespace mlt
