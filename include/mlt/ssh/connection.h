#pragma once

#include <exception>
#include <memory>
#include <optional>
#include <string>

#include "mlt/ssh/remote.h"

namespace mlt {

struct ConnectSpec;
class Connector;
class Session;
class SessionRemote;

// A link to one host that can be opened again after it was lost: what the run engine talks
// to (unit tests give it a fake). Not thread-safe: one thread per
// Connection (open_side() gives another thread a link of its own).
class Connection {
  public:
    virtual ~Connection() = default;
    // `user@host:port` (before the first open: the host as given), for messages.
    virtual const std::string& name() const = 0;
    // The Remote of the open link; opens it first when there is none. Throws mlt::Error as
    // Session::open does.
    virtual Remote& remote() = 0;
    // Drops what is left of the current link (without waiting on it) and opens a new one
    // without asking for anything again. Throws mlt::Error: kinds connect, disconnected and
    // timeout mean "try again later"; host_key and auth mean it never will work.
    virtual void reconnect() = 0;
    // A second, independent link to the same host for another thread (the live pull of
    // --sync-every): it connects on its first remote() call, with the same verified host key
    // and the credentials kept in memory, never prompting. Both may then be used at the same
    // time, each from its own thread. nullptr: not offered (the default, and the fakes).
    virtual std::unique_ptr<Connection> open_side() { return nullptr; }
};

// True for the errors after which a new connection may work: a reset or silent link, a
// refused or timed-out connect. Host keys, authentication, usage and remote command errors
// are not.
bool is_link_loss(const Error& error);
bool is_link_loss(ErrorKind kind);

// A Connection over real SSH sessions: the connect spec is resolved and the key decrypted
// once, in the constructor, before any network traffic; a password (or the passphrase of a
// default key) is asked at the first authentication. What worked is kept in memory until
// destruction (secrets wiped then), so reconnect() never prompts.
class SessionConnection : public Connection {
  public:
    // Resolves `spec` (ssh config, key file, its passphrase prompt): errors as Session::open's
    // local checks (exit 2). Does not connect.
    explicit SessionConnection(const ConnectSpec& spec);
    ~SessionConnection() override;
    SessionConnection(const SessionConnection&) = delete;
    SessionConnection& operator=(const SessionConnection&) = delete;

    const std::string& name() const override;
    // Throws first the error that open_ahead() kept, if any.
    Remote& remote() override;
    void reconnect() override;
    // Connects now, ahead of the first remote() (train: while python3 loads the spec). An
    // error (but an interruption) is kept and thrown by that first remote() call instead,
    // where it would have come without this, so the run treats it as before.
    void open_ahead();
    // Shares this connection's Connector (whose opens are thread-safe), so the side link may
    // connect or reconnect while this one does.
    std::unique_ptr<Connection> open_side() override;

  private:
    explicit SessionConnection(std::shared_ptr<Connector> connector);

    std::shared_ptr<Connector> connector_;
    std::unique_ptr<Session> session_;
    std::unique_ptr<SessionRemote> remote_;
    std::exception_ptr ahead_error_;
};

}  // namespace mlt
