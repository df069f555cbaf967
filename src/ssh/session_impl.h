#pragma once
// A Session's state, shared by the files that implement Session (session.cpp, exec.cpp,
// control_shell.cpp, forward.cpp). Private to src/ssh/.

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "handles.h"
#include "liveness.h"
#include "mlt/ssh/session.h"
#include "mlt/util/error.h"

namespace mlt {

// The channel listener (sh/channel_listener.sh, listener.cpp): where the host runs it,
// exec_parallel's channels go to its socket and run their commands without a login.
struct ChannelListener {
    enum class State { untried, up, none };
    State state = State::untried;
    std::string path;   // its socket on the host
    std::string token;  // what every channel's header starts with
    bool own = false;   // started by this session's control shell (not another session's)
};

// The listener a session of a Connector started, for its other sessions (a transfer's side
// links, on other threads): their channels go there too, and need no login at all. It lives
// as long as the control shell that started it.
struct SharedListener {
    // Records the listener at `path` when none is recorded.
    void offer(const std::string& path, const std::string& token);
    // Forgets the one at `path` (gone, or its shell ended); another stays.
    void forget(const std::string& path);

    std::mutex mutex;
    std::string path, token;  // empty: none started
};

// Takes up `shared`'s listener when this session has not tried one of its own.
void adopt_listener(ChannelListener& own, SharedListener& shared);

struct ControlShell;
// Forgets the shell's listener, for the Connector's other sessions too when it was its own.
void forget_listener(ControlShell& sh);

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
    bool no_stream = false;    // its host's `head -c` reads ahead: no streamed frames
    // Set when the account runs no commands at all (nologin): every later command fails so.
    std::optional<Error> refusal;
    // The channel listener it started (it ends with the shell), or another session's.
    ChannelListener listener;
    std::shared_ptr<SharedListener> shared_listener;  // its Connector's

    ControlShell() = default;
    ControlShell(const ControlShell&) = delete;
    ControlShell& operator=(const ControlShell&) = delete;
    // A session that ends takes its shell, and so its listener, with it.
    ~ControlShell() { forget_listener(*this); }
};

// Forgets the shell after an error (its output is out of step) or when it ended; the next
// command starts a new one (control_shell.cpp). Its listener ends with it: forgotten too
// (also by the Connector's other sessions, when it was this one's own). An open sent ahead stays
// for the next shell (a channel freed while its open is answered would leave a session open on the
// server).
void drop_shell(ControlShell& sh);

struct Session::Impl {
    ssh_detail::Liveness live;  // before `session`: libssh holds pointers into it
    ssh_detail::SessionPtr session;
    std::string display;
    std::string fingerprint;   // of the host key this session verified
    LoginFacts login;          // how it got in (doctor)
    double login_cost_s = -1;  // what the control shell's login took (login_cost_s())
    ProgressFloor data_floor;  // ConnectSpec::data_floor
    ControlShell shell;        // declared after `session`: closed before it
};

}  // namespace mlt
