#pragma once
// Pieces of the session layer shared between its .cpp files.

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "handles.h"
#include "mlt/config/settings.h"
#include "mlt/ssh/session.h"
#include "mlt/util/bounded.h"
#include "mlt/util/error.h"

namespace mlt::ssh_detail {

// libssh's last error text for a session, never empty.
std::string last_error(ssh_session s);

// A connect spec after the ssh config was layered in: the same for every session opened
// from one spec.
struct Resolved {
    std::string hostname;  // what libssh connects to (the HostName of an alias)
    std::string user, identity, known_hosts, host_port, display;
    int port = 22;
    HostKeyChecking checking = HostKeyChecking::accept_new;
    int alive_interval_s = 10;
    int alive_count_max = 2;
    int connect_timeout_s = 15;
    // The proxy: the command to run, OpenSSH's tokens expanded (empty: a direct connection),
    // where it came from ("ProxyJump gpu_jump at FILE:LINE", "-o ProxyCommand=..."), and for a
    // ProxyJump the hop `ssh -W` logs in to.
    std::string proxy_command, proxy_origin, jump_host;
    bool proxy_is_jump = false;
    // What the ssh config says that mlt does not do, for the caller to show once.
    std::vector<std::string> config_warnings;
    // The config lines of keywords mlt does not use ("FILE:LINE Keyword"), for -v.
    std::vector<std::string> unused_config;
};

// The values OpenSSH's %-tokens stand for in a ProxyCommand.
struct ProxyTokens {
    std::string hostname;  // %h: the HostName
    int port = 22;         // %p
    std::string user;      // %r: the remote user
    std::string alias;     // %n: the host as typed
};

// `command` with %h %p %r %n and %% replaced. Throws Error (config, exit 2) naming `origin`
// for another token, or for a value that is not safe unquoted in a shell command.
std::string expand_proxy_tokens(const std::string& command, const ProxyTokens& t,
                                const std::string& origin);

// The `ssh -W` command that makes a ProxyJump `hops` ([user@]host[:port][,...]) to `target`,
// as OpenSSH builds it (the last hop is logged in to, the ones before are its -J); -F
// `config_path` unless it is the file ssh reads by itself. `jump_host` receives the last hop.
// Throws Error (config, exit 2) naming `origin` for a hop that is no [user@]host[:port].
std::string proxy_jump_command(const std::string& hops, const std::string& origin,
                               const ProxyTokens& target, const std::string& config_path,
                               std::string* jump_host);

// SSH_OPTIONS_PROXYCOMMAND for `command`: its stderr appended to `stderr_path` (none when
// empty), every `%` doubled against libssh's own token expansion.
std::string libssh_proxy_command(const std::string& command, const std::string& stderr_path);

// The error for a connect through r's proxy that failed: for a ProxyJump, what `ssh` wrote
// (`ssh_stderr`) decides: host key refused (exit 4), login refused or unreachable (255).
Error proxy_failure(const Resolved& r, const std::string& ssh_stderr,
                    const std::string& libssh_error);

// Sets up a fresh session from `spec` and returns what it resolved to: the ssh config entry
// of spec.host read as OpenSSH does (Host patterns against the name as typed), libssh given
// only its HostName, then the command line over the entry over the settings. Throws Error
// (config, exit 2) for a name that is no valid host name (naming where it came from and what
// to do), a config line libssh refuses, or a bad option.
Resolved configure(ssh_session raw, const ConnectSpec& spec);

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
struct Liveness;
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
// After the connect, every blocking libssh call gives control back within this many
// seconds (SSH_OPTIONS_TIMEOUT); it then returns SSH_AGAIN, 0 or -1 instead of an error, and
// the caller asks Liveness whether the link still answers. 0 would mean "wait forever".
constexpr long kCallTimeoutS = 5;

// Whether the link still answers, in the spirit of OpenSSH's ServerAliveInterval and
// ServerAliveCountMax. libssh notices a reset link by itself, never a silent one: it counts
// every packet it receives (ssh_set_counters), and after `interval_s` seconds without one a
// keepalive request goes out, which sshd answers. When `count_max` of them went unanswered
// and another interval passed, the link is dead.
struct Liveness {
    int interval_s = 10;  // 0: no keepalives (a silent link is then never declared dead)
    int count_max = 2;
    // Registered with ssh_set_counters: libssh keeps the pointers, so they live as long as
    // the session (declared before it in Session::Impl).
    ssh_counter_struct tx{}, rx{};
    uint64_t seen_packets = 0;
    std::chrono::steady_clock::time_point last_rx = std::chrono::steady_clock::now();
    std::chrono::steady_clock::time_point last_probe{};
    int unanswered = 0;
    // The quickest answer to a request of ours so far (a channel open, a command frame of
    // the control shell): the link's round trip and a little; -1 before one.
    double fastest_reply_s = -1;

    // Keeps the time from `asked` (a request sent) to now (its answer) when it is the
    // quickest so far.
    void saw_reply(std::chrono::steady_clock::time_point asked) {
        const double took =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - asked).count();
        if (fastest_reply_s < 0 || took < fastest_reply_s) fastest_reply_s = took;
    }

    // Notes packets that arrived, sends a keepalive when one is due, and throws mlt::Error
    // (timeout, exit 255) naming `display` when the link is dead. Call it on every pass of a
    // wait loop and after every libssh call that may have timed out.
    void check(ssh_session s, const std::string& display);
};

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
struct StartedExec {
    ChannelPtr channel;
    int answer = SSH_AGAIN;
};

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

// The data streams of one command, or of one exec_parallel (the channels of one connection
// together: a slow link shared by 8 of them is no stall), held to a progress floor
// (StreamJob::data_stream): counts the bytes that move and, asked on every pass of the read
// loop, throws StallError naming `data_stream` once too few moved over the floor's window.
// Does nothing without a name or a floor.
class FloorCheck {
  public:
    FloorCheck(const ProgressFloor& floor, std::string data_stream, std::string display);
    bool on() const { return on_; }
    // `n` bytes moved (stdout received, input taken).
    void moved(uint64_t n) {
        if (on_) watch_.add(n);
    }
    // Throws StallError when the streams are under the floor.
    void check();

  private:
    bool on_;
    ProgressWatch watch_;
    std::string data_stream_;
    std::string display_;
};

// What verify_host_key decided.
enum class HostKeyVerdict {
    known,       // matches known_hosts
    recorded,    // was unknown, now recorded (accept-new)
    unverified,  // unknown, accepted without recording (no)
    changed,     // differs from known_hosts, accepted (no): key authentication only
};

// Checks the server's host key against r.known_hosts per r.checking, as OpenSSH's
// StrictHostKeyChecking: a new key is recorded with accept-new; a changed one is accepted
// only with `no` (known_hosts untouched; the caller must then allow key authentication only).
// `first`: false on a reconnect, whose acceptance is logged at debug level only. Throws Error
// (host_key, exit 4) on refusal; a changed key's message holds the ssh-keygen -R command that
// removes the stale entry.
HostKeyVerdict verify_host_key(ssh_session s, const Resolved& r, bool first);

// "SHA256:..." of the server's host key; throws Error (host_key) when it cannot be read.
std::string server_fingerprint(ssh_session s, std::string* key_type);

// The secrets that may decrypt a key file before anybody is asked (ConnectSpec).
struct KeySecrets {
    std::optional<std::string> passphrase;  // the only one tried when set: no prompt
    std::optional<std::string> password;    // tried silently first, as paramiko does
};

// Loads a private key file; when it is encrypted, tries `secrets`, else asks for the
// passphrase. Throws Error (key, exit 2) when the file is missing, unreadable, too open, or
// the passphrase is wrong (never naming it).
KeyPtr load_private_key(const std::string& path, const KeySecrets& secrets = {});

// How an Authenticator may authenticate (ConnectSpec).
struct AuthOptions {
    std::optional<std::string> password;
    KeySecrets key_secrets;
    bool look_for_keys = true;  // try ~/.ssh/id_* when there is no explicit key
    bool allow_agent = true;    // try ssh-agent when there is no explicit key
};

// Authenticates sessions to one host, the first time with, in order: the explicit key (if
// any), the agent and the default keys (when no explicit key, as `options` allow), password
// and keyboard-interactive, asking for what is needed. It keeps what worked (a decrypted key,
// the password), so later sessions (reconnects) authenticate the same way without asking.
// Secrets are wiped on destruction. Nothing is handed to libssh that it keeps (no callbacks).
class Authenticator {
  public:
    Authenticator(KeyPtr explicit_key, std::string key_path, AuthOptions options,
                  std::string ssh_dir);
    ~Authenticator();
    Authenticator(const Authenticator&) = delete;
    Authenticator& operator=(const Authenticator&) = delete;

    // `key_only`: password and keyboard-interactive are not used (the host key changed and was
    // accepted anyway). Throws Error (auth, exit 255) listing the methods tried,
    // (disconnected) when the link fails during authentication.
    void authenticate(ssh_session s, Liveness& live, const std::string& display, bool key_only);

  private:
    enum class Method { unknown, key, agent, password, kbdint };
    bool try_key(ssh_session s, Liveness& live, const KeyPtr& key);
    bool try_agent(ssh_session s, Liveness& live);
    bool try_default_keys(ssh_session s, Liveness& live, std::vector<std::string>& tried);
    bool try_password(ssh_session s, Liveness& live, bool may_ask);
    bool try_kbdint(ssh_session s, Liveness& live, bool may_ask);
    // The first authentication: every method the server offers (`methods`) and the options
    // allow, in order (the key given only when not `key_tried` already); the one that
    // worked, else Method::unknown. Adds each tried to `tried`.
    Method try_first_time(ssh_session s, Liveness& live, bool key_only, int methods,
                          std::vector<std::string>& tried, bool key_tried);
    // The way that worked before (a reconnect), or the key given the first time.
    bool try_known(ssh_session s, Liveness& live, bool key_only);
    // The error for a first authentication in which nothing of `tried` worked.
    Error first_time_failure(const std::string& display, bool key_only, int methods,
                             const std::vector<std::string>& tried) const;

    KeyPtr explicit_key_;
    std::string key_path_;
    AuthOptions options_;
    std::string ssh_dir_;
    Method method_ = Method::unknown;  // what worked the first time
    KeyPtr used_key_;                  // a default key that worked, decrypted
    std::string used_key_path_;
    std::string display_;
};

}  // namespace mlt::ssh_detail

namespace mlt {

// The control shell: one remote `sh` reading framed commands on its stdin (control_shell.cpp).
struct ControlShell {
    ssh_detail::ChannelPtr channel;  // null: not started (or dropped after an error)
    std::string token;               // random, so that no command output can fake a frame end
    uint64_t serial = 0;
    // A command sent ahead (Session::shell_ahead): its frame goes out right after the next
    // one, and a later shell() of the same command and input reads its reply.
    struct Ahead {
        std::string command, input;
        uint64_t serial = 0;  // 0: not sent yet
        bool guess = false;   // not asked for: its reply is read and dropped
    };
    std::vector<Ahead> ahead;
    // Frames sent ahead on a guess and not asked for, whose replies the next frame's reader
    // drops first: that frame goes out without waiting for them.
    std::vector<uint64_t> unasked;
    // What was read past the end of the last frame read (a frame sent ahead answers at once).
    std::string out_rest, err_rest;
    // The open of its channel, sent ahead (Session::open_shell_ahead) and not answered yet.
    ssh_detail::ChannelPtr opening;
    bool unavailable = false;  // the server refused it: use exec channels instead
    // Set when the account runs no commands at all (nologin): every later command fails so.
    std::optional<Error> refusal;
};

struct Session::Impl {
    ssh_detail::Liveness live;  // before `session`: libssh holds pointers into it
    ssh_detail::SessionPtr session;
    std::string display;
    std::string fingerprint;   // of the host key this session verified
    ProgressFloor data_floor;  // ConnectSpec::data_floor
    ControlShell shell;        // declared after `session`: closed before it
};

}  // namespace mlt
