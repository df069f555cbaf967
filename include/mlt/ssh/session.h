#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mlt/config/settings.h"
#include "mlt/ssh/remote.h"

namespace mlt {

// Everything needed to reach one host. Values come in three layers: the command line (the
// plain fields), the ssh config entry of `host` (read by the session layer), and the
// settings (the fallback_ fields). Higher layers win (docs/settings.md, "Precedence").
struct ConnectSpec {
    std::string host;  // alias or hostname, as typed or from settings (never empty)
    std::string host_origin = "from -h";  // where `host` came from, for messages
    std::string user;  // command line; empty: ssh config, then fallback_user, then local user
    int port = 0;      // command line; 0: ssh config, then fallback_port, then 22
    std::string identity_file;  // command line -i; empty: ssh config, then fallback, then auto
    std::string fallback_user;
    int fallback_port = 0;
    std::string fallback_identity_file;
    std::string config_path;       // ssh client config; empty or missing file: none
    std::string known_hosts_path;  // -o UserKnownHostsFile; empty: ssh config, then default
    std::optional<HostKeyChecking> host_key_checking;  // -o; else ssh config, else fallback
    HostKeyChecking fallback_host_key_checking = HostKeyChecking::accept_new;
    // --password, else the settings' connection.password; never logged. Also tried as the
    // passphrase of an encrypted key when `passphrase` is not set (as paramiko does).
    std::optional<std::string> password;
    // The settings' connection.passphrase for encrypted keys; never logged. When set, it is
    // the only one tried: no prompt.
    std::optional<std::string> passphrase;
    // Seconds for the TCP connect and the SSH handshake: -o ConnectTimeout, else the ssh
    // config's, else fallback (settings' connection.timeout), else 15.
    std::optional<int> connect_timeout_s;
    int fallback_connect_timeout_s = 0;
    bool look_for_keys = true;  // false: the default keys ~/.ssh/id_* are not tried
    bool allow_agent = true;    // false: ssh-agent is not asked
    // -o Ciphers (OpenSSH syntax, +/-/^ allowed); empty: the ssh config's, else
    // preferred_ciphers().
    std::string ciphers;
    // -o ServerAliveInterval / ServerAliveCountMax; unset: the ssh config's, else 10 and 2
    // (a silent link is declared dead after interval x (count + 1) = 30 s). 0 turns it off.
    std::optional<int> alive_interval_s;
    std::optional<int> alive_count_max;
    // -o ProxyCommand=CMD or -o ProxyJump=HOPS (the first given; "none": direct), over the ssh
    // config's; empty keyword: the ssh config's.
    std::string proxy_keyword, proxy_value;
    // The floor under the data streams of this host's sessions (StreamJob::data_stream):
    // settings transfer.min_rate and transfer.stall_seconds. Off by default.
    ProgressFloor data_floor;
};

// mlt's cipher order when neither -o Ciphers nor the ssh config names one: AES-GCM first on
// a CPU with AES instructions (there it is 1.5-2x cheaper than chacha20-poly1305, which
// OpenSSH puts first for CPUs without them), else libssh's own order (empty).
std::string preferred_ciphers();

// The command that removes the entries of `host_port` (`host`, or `[host]:port` for ports
// other than 22, as known_hosts names them) from `known_hosts`, quoted for a shell; `-f` only
// when the file is not `openssh_default`, the one ssh-keygen uses by itself.
std::string known_hosts_removal_command(const std::string& host_port,
                                        const std::string& known_hosts,
                                        const std::string& openssh_default);

// How a session got in, for `mlt ssh doctor`.
struct LoginFacts {
    // What the host key check found: "known" (in known_hosts), "recorded" (unknown, learned
    // now: accept-new), "unverified" (unknown, not recorded: no), "changed" (accepted: no).
    std::string host_key;
    std::string key_type;     // "ssh-ed25519", ...
    std::string fingerprint;  // "SHA256:..."
    std::string known_hosts;  // the file checked
    // The authentication that worked: "publickey (FILE)", "ssh-agent", "password",
    // "keyboard-interactive".
    std::string auth;
};

// What a finished remote command left behind.
struct ExecResult {
    int exit_status = -1;  // -1: killed by a signal or no status sent
};

class Session;

// One host's connect spec, resolved once: the ssh config layered in (libssh is only ever
// given the HostName, never an alias it could refuse), the key file loaded and decrypted (its
// passphrase asked), before any network traffic. Opens any number of sessions to that host
// without asking anything again (a reconnect): the key, and a password that was asked for,
// stay in memory until destruction, which wipes them. A later session must present the same
// host key as the first. Not thread-safe.
class Connector {
  public:
    // Errors: 2 (bad key, config or option; a host that is no valid host name and no alias
    // with a HostName).
    explicit Connector(const ConnectSpec& spec);
    ~Connector();
    Connector(const Connector&) = delete;
    Connector& operator=(const Connector&) = delete;

    // Connects, verifies the host key and authenticates. Errors: 4 (host key, also a key
    // that differs from the first session's), 255 (connect, auth). Thread-safe: the opens
    // wait for the first one to succeed (it may prompt), then run side by side.
    Session open();
    // `user@host:port` for messages.
    const std::string& display_name() const;

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// An authenticated SSH connection to one host. Move-only; closes the connection on
// destruction. All methods throw mlt::Error with the libssh error text on failure; a link
// that stops answering (keepalives, see ConnectSpec) throws kind timeout.
class Session {
  public:
    // Resolves `spec` against the ssh config, validates the key file (prompting for its
    // passphrase) before any network traffic, connects, verifies the host key and
    // authenticates. Errors: 2 (bad key/config), 4 (host key), 255 (connect/auth).
    static Session open(const ConnectSpec& spec);

    Session(Session&&) noexcept;
    Session& operator=(Session&&) noexcept;
    ~Session();

    // `user@host:port` for messages.
    const std::string& display_name() const;

    // Runs `command` through the remote login shell, feeds its stdin from `input` (if any)
    // then closes it, streams stdout and stderr to the sinks as they arrive, and returns the
    // exit status.
    ExecResult exec(const std::string& command, const InputSource& input,
                    const OutputSink& on_stdout, const OutputSink& on_stderr);

    // Like exec() for several commands at once, each on its own channel of this connection:
    // each channel has its own flow-control window (2 MiB in OpenSSH's sshd), so N uploads
    // side by side keep N windows in flight where one would wait a round trip per window.
    // One thread drives them all. The channels open side by side: every open request goes
    // out before the first answer is awaited, then every exec request, so N commands start
    // in two round trips, not 2N. A server that refuses a channel once some run (sshd's
    // MaxSessions) gets the rest as others end. Returns the results in the order of `jobs`.
    // `through_shell`: the first job goes through the control shell instead, its input
    // streamed in chunks behind its frame (no channel, no login), when the shell runs with
    // nothing outstanding and its host's `head -c` reads exactly (else a channel of its own).
    std::vector<ExecResult> exec_parallel(const std::vector<StreamJob>& jobs,
                                          bool through_shell = false);

    // Runs `command` in the session's control shell: one remote `sh`, started on first use,
    // that runs commands one after another, so each costs one round trip instead of a channel
    // open, an exec and a login-shell start. `input` (held in memory, so keep it small) is
    // the command's stdin; without it stdin is /dev/null. Streams output like exec() and
    // returns the exit status (128+N for a signal). Falls back to exec() when the server does
    // not run the shell (ForceCommand, restricted shells); throws Error (remote, exit 1),
    // quoting what the server printed, when the account runs no commands at all (nologin).
    // A `data_stream` name holds the command to the progress floor (StreamJob::data_stream).
    // An exception from a sink ends the command; the next one gets a new shell.
    ExecResult shell(const std::string& command, std::string_view input,
                     const OutputSink& on_stdout, const OutputSink& on_stderr,
                     const std::string& data_stream = {});
    // Sends `command` (with `input`) right after the next command of the control shell, in
    // the same write, so that its round trip overlaps that one's: a later shell() of exactly
    // this command and input reads the reply already on its way. Only for a command whose
    // running unasked does no harm (a listing, a log follow): when another command comes
    // first, the shell is dropped unread (a follow may take seconds) and a new one runs it.
    // A `guess` (a quick command that only reads) that is not asked for has its reply read
    // and dropped instead. Commands sent ahead are asked for in the order they were sent.
    void shell_ahead(std::string command, std::string input, bool guess = false);
    // Sends the open of the control shell's channel now, when it has none, without waiting
    // for the answer: the first shell() then finds that round trip (partly) behind it.
    void open_shell_ahead();

    // Forwards connections to 127.0.0.1:`local_port` here (0: a free one) to
    // `remote_host`:`remote_port` as the remote host reaches it, over this session's
    // direct-tcpip channels (what `ssh -L` does), until a Ctrl+C (mlt::Error interrupted) or
    // a lost link. `on_listening(port)` is called once the local port listens. A connection
    // the remote side refuses is a warning; the forward goes on.
    void forward(int local_port, const std::string& remote_host, int remote_port,
                 const std::function<void(int)>& on_listening);

    // The quickest answer to a request so far, in seconds (a channel open, a command of the
    // control shell: the link's round trip and a little): -1 before one.
    double round_trip_s() const;
    // What a new channel costs on this host before its command runs (the login shell and
    // its startup files, ~/.bashrc): the control shell's start to its first reply, less the
    // round trips in it; -1 before the control shell started.
    double login_cost_s() const;
    // Starts the channel listener on the host, once per session, where python3 is there and
    // sshd forwards to unix sockets (docs/remote-protocol.md, "Channels without a login"):
    // then exec_parallel's channels run their commands without a login shell each, as
    // `sh -c` in the control shell's environment. One command of the control shell. True
    // when channels go there; false (with -v saying why) when they keep logging in.
    bool listen_for_channels();
    // What a new channel of exec_parallel costs before its command runs: the login
    // (login_cost_s), or next to nothing when the listener takes the channels.
    double channel_cost_s() const;
    // Whether a command is cheaper on a channel of its own than in the control shell: the
    // shell has not started (its start is a login) and a listener of this host (this
    // session's or another of its Connector's) takes channels. A transfer's side links.
    bool channel_cheaper_than_shell();
    // How this session got in (host key, authentication).
    const LoginFacts& login_facts() const;
    // Opens up to `most` session channels side by side, holds them all, then closes them
    // without running anything: how many the server opened (sshd's MaxSessions, less the
    // channels already open). Throws as a channel open does when the link fails.
    int count_channels(int most);

  private:
    friend class Connector;
    struct Impl;
    // shell()'s reply when it was sent ahead; nullopt when it was not (a command sent ahead
    // and not asked for drops the shell, a guess's reply is dropped).
    std::optional<ExecResult> reply_sent_ahead(const std::string& command, std::string_view input,
                                               const OutputSink& on_stdout,
                                               const OutputSink& on_stderr);
    // Reads and drops the reply of the first command sent ahead, a guess not asked for; false
    // when the shell ended meanwhile (dropped).
    bool skip_reply();
    explicit Session(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

}  // namespace mlt
