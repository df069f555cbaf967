#pragma once
// Pieces of the session layer shared between its .cpp files.

#include <optional>
#include <string>
#include <vector>

#include "handles.h"
#include "mlt/config/settings.h"
#include "mlt/ssh/session.h"
#include "mlt/util/error.h"

namespace mlt::ssh_detail {

// libssh's last error text for a session, never empty.
std::string last_error(ssh_session s);

// Reads wait up to this long for output before looking at the other stream and at EOF.
constexpr int kPollMs = 50;
// The read size. libssh 0.10 grows a channel's receive window to the size of the read it
// is asked for (else 1.28 MB), and one window per round trip caps a download: 4 MiB allows
// 80 MB/s at 50 ms where 1.28 MB allowed 25 (LIBSSH_NOTES.md, tests/bench/README.md).
constexpr size_t kReadChunk = 4 * 1024 * 1024;
// How much input is taken from an InputSource at a time.
constexpr size_t kInputChunk = 1024 * 1024;

// An Error for a failed channel operation: `remote` while the connection is up, otherwise
// `disconnected` (exit 255 either way).
Error channel_error(ssh_session s, const std::string& what);

// One turn of reading a channel: stdout (waiting up to `wait_ms`; 0: not at all), then
// stderr without waiting, each handed to its sink. Returns true when the channel is done:
// nothing came on either stream, the remote sent EOF or closed, and both are drained. Throws
// when the connection is lost or a Ctrl+C is pending. `got` (if given) receives the number
// of bytes read.
bool read_turn(ssh_session s, ssh_channel ch, std::vector<char>& buf, int wait_ms,
               const OutputSink& on_stdout, const OutputSink& on_stderr,
               const std::string& display, size_t* got = nullptr);

// Writes all of `data` to a channel's stdin (blocking on the remote window).
void write_all(ssh_session s, ssh_channel ch, const char* data, size_t len);

// Checks the server's host key against `known_hosts_path` per `mode` (PRODUCT.md 3.1) and
// records a new key when mode is accept-new. Throws Error (host_key, exit 4) on refusal.
void verify_host_key(ssh_session s, HostKeyChecking mode, const std::string& known_hosts_path,
                     const std::string& host_port);

// Loads a private key file, asking for its passphrase when it is encrypted. Throws Error
// (key, exit 2) when the file is missing, unreadable, too open, or the passphrase is wrong.
KeyPtr load_private_key(const std::string& path);

// Authenticates with, in order: the explicit key (if any), the agent and default keys (when
// no explicit key), password and keyboard-interactive. Throws Error (auth, exit 255) that
// lists the methods tried.
void authenticate(ssh_session s, const KeyPtr& explicit_key, const std::string& key_path,
                  const std::optional<std::string>& password, const std::string& display);

}  // namespace mlt::ssh_detail

namespace mlt {

// The control shell: one remote `sh` reading framed commands on its stdin (control_shell.cpp).
struct ControlShell {
    ssh_detail::ChannelPtr channel;  // null: not started (or dropped after an error)
    std::string token;               // random, so that no command output can fake a frame end
    uint64_t serial = 0;
    bool unavailable = false;        // the server refused it: use exec channels instead
};

struct Session::Impl {
    ssh_detail::SessionPtr session;
    std::string display;
    ControlShell shell;  // declared after `session`: closed before it
};

}  // namespace mlt
