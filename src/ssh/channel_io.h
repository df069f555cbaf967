#pragma once
// Exec channels at the libssh level (channel_io.cpp): opening, the exec request, input,
// reading output in turns, the exit status, and the sizes of reads and writes. Private to
// src/ssh/.

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "handles.h"
#include "liveness.h"
#include "mlt/ssh/session.h"
#include "mlt/util/error.h"

namespace mlt::ssh_detail {

// Reads wait up to this long for output before looking at the other stream and at EOF.
constexpr int kPollMs = 50;
// The most a read asks for. libssh 0.10 grows a channel's receive window to the size of the
// read it is asked for (else 1.28 MB), and one window per round trip caps a download: 16 MiB
// allows 160 MB/s per channel at 100 ms where 1.28 MB allowed 13 (tests/bench/README.md). A
// read takes what has arrived and does not wait for the whole size, so memory follows the
// data, not the window.
constexpr size_t kReadChunk = 16 * 1024 * 1024;
// The least a read asks for, over a link whose round trip is known to be short.
constexpr size_t kMinReadChunk = 2 * 1024 * 1024;
// The rate per channel the window is sized for (about one core's cipher).
constexpr double kWindowRate = 400e6;

// The size of a channel read, and so of the window libssh keeps open: the link's round trip
// (Liveness::fastest_reply_s) times kWindowRate, between kMinReadChunk and kReadChunk, or
// kReadChunk while the round trip is not known. No bigger than the link needs: sshd buffers
// a command's output up to the window, and its buffers grow by copies that zero memory; over
// loopback a 16 MiB window made a 1 GiB download a third slower than 2 MiB.
size_t read_size(const Liveness& live);

// A buffer of kReadChunk bytes whose pages are touched only as data lands in them.
class ReadBuffer {
  public:
    ReadBuffer() : data_(new char[kReadChunk]) {}
    char* data() { return data_.get(); }
    static constexpr size_t size() { return kReadChunk; }

  private:
    std::unique_ptr<char[]> data_;
};
// How much input is taken from an InputSource at a time.
constexpr size_t kInputChunk = 256 * 1024;
// An Error for a failed channel operation: `remote` while the connection is up, otherwise
// `disconnected` (exit 255 either way).
Error channel_error(ssh_session s, const std::string& what);

// One turn of reading a channel: stdout (waiting up to `wait_ms`; 0: not at all), then
// stderr without waiting, each handed to its sink. Returns true when the channel is done:
// nothing came on either stream, the remote sent EOF or closed, and both are drained. Throws
// when the connection is lost or silent, or a signal is pending. `got` (if given) receives
// the number of bytes read.
bool read_turn(ssh_session s, Liveness& live, ssh_channel ch, ReadBuffer& buf, int wait_ms,
               const OutputSink& on_stdout, const OutputSink& on_stderr, const std::string& display,
               size_t* got = nullptr);

// Writes all of `data` to a channel's stdin, waiting (with liveness checks) for the remote
// window; a signal is seen within kPollMs while it waits.
void write_all(ssh_session s, Liveness& live, ssh_channel ch, const char* data, size_t len,
               const std::string& display);

// Opens a session channel and starts `command` on it (an exec request), waiting through
// libssh's call timeouts while the link answers. `first_input`, when given, is written to
// the command's stdin right behind the request, before its answer. `opening`, when given, is
// a channel whose open went out already (open_ahead): it is taken on from there. Throws
// channel_error / Liveness errors.
ChannelPtr open_exec(ssh_session s, Liveness& live, const std::string& command,
                     const std::string& display, std::string_view first_input = {},
                     ChannelPtr opening = nullptr);

// Sends the open of a session channel without waiting for its answer (for open_exec's
// `opening`); null when libssh refused it at once (the open in open_exec then says why).
ChannelPtr open_ahead(ssh_session s);

// A channel whose exec request went out: `answer` is SSH_OK once the server said yes, or
// SSH_AGAIN while its answer has not come (exec_request takes it later).
// A channel to the channel listener carries no exec request (`answer` is SSH_OK at once):
// `header` goes first on its stdin, and its stdout is the listener's frames
// (listener_frames.h).
struct StartedExec {
    ChannelPtr channel;
    int answer = SSH_AGAIN;
    std::string header;  // empty: an exec channel
};

// Opens `n` session channels side by side (every open goes out before the first answer is
// awaited). A refused open (sshd's MaxSessions) sets `refused` and ends the list there: the
// channels opened behind it are closed, so the result holds the first ones only. Other
// failures throw. With `unix_path`, direct-streamlocal channels to that socket on the host
// instead (the channel listener's: no login shell; a refusal there is a listener gone or
// forwarding not allowed).
std::vector<ChannelPtr> open_sessions(ssh_session s, Liveness& live, size_t n,
                                      const std::string& display, std::optional<Error>& refused,
                                      const std::string* unix_path = nullptr);

// Opens a session channel for each of `commands` and sends the command's exec request on
// it, side by side: every open goes out before the first answer is awaited, so n channels
// take one round trip where open_exec one after another takes 2n. The exec requests' answers
// are not awaited: input goes as soon as sshd opens the channel's window, which it does when
// it starts the command, just before the answer. A refused open (sshd's MaxSessions) sets
// `refused` and ends the list there: the channels opened behind it are closed before any
// command ran on them, so the result holds the first commands only (none when the first open
// was refused). Other failures throw.
std::vector<StartedExec> open_execs(ssh_session s, Liveness& live,
                                    const std::vector<std::string>& commands,
                                    const std::string& display, std::optional<Error>& refused);

// The exec request of `command` on the open channel `ch`, without waiting: the first call
// sends it, and while `answer` is SSH_AGAIN a later one takes its answer into `answer` once
// it has come (libssh keeps the request pending, so it is never sent twice). Throws
// channel_error when the server refused to run the command.
void exec_request(ssh_session s, ssh_channel ch, int& answer, const std::string& command,
                  const std::string& display);

// The exit status of a channel whose command ended, waiting (with liveness checks, and a
// signal seen within kPollMs) until the server's close has arrived; -1 when it sent none
// (killed by a signal).
int exit_status_of(ssh_session s, Liveness& live, ssh_channel ch, const std::string& display);

// Waits up to `timeout_ms` for the server to send anything (a window adjustment, output,
// a close) on the session's socket.
void wait_for_server(ssh_session s, int timeout_ms);

}  // namespace mlt::ssh_detail
