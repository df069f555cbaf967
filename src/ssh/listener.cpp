// Session::listen_for_channels: the channel listener (sh/channel_listener.sh), started by the
// control shell, so that exec_parallel's channels run their commands without a login shell
// each (docs/remote-protocol.md, "Channels without a login").

#include <spdlog/spdlog.h>

#include <optional>
#include <vector>

#include "channel_io.h"
#include "mlt/util/bounded.h"
#include "mlt/util/shell.h"
#include "mlt/util/text.h"
#include "remote_scripts.h"
#include "session_impl.h"

namespace mlt {

using namespace ssh_detail;

namespace {

// What a channel to the listener costs before its command runs: a fork of the listener and
// an exec of sh (a few ms on a loaded core), against a login's 0.05-1 s.
constexpr double kListenerChannelCost = 0.01;

// Where python3 is looked for before PATH (a shim there may take half a second to start).
constexpr const char* kPythons = "'/usr/bin/python3 /usr/local/bin/python3'";

// The longest socket path a sockaddr_un holds (108 bytes with its NUL on Linux).
constexpr size_t kMaxSocketPath = 107;

// The socket named by the listener's "listening PATH" line; empty when the line is not one
// (the listener said "none WHY", or something else answered).
std::string socket_named(const std::string& out) {
    const std::string first = out.substr(0, out.find('\n'));
    const std::string prefix = "listening ";
    if (first.rfind(prefix, 0) != 0) return {};
    const std::string path = first.substr(prefix.size());
    if (path.empty() || path.front() != '/' || path.size() > kMaxSocketPath ||
        path.find_first_of(std::string("\0\r", 2)) != std::string::npos)
        return {};
    return path;
}

}  // namespace

void SharedListener::offer(const std::string& at, const std::string& with) {
    const std::lock_guard<std::mutex> lock(mutex);
    if (!path.empty()) return;
    path = at;
    token = with;
}

void SharedListener::forget(const std::string& at) {
    const std::lock_guard<std::mutex> lock(mutex);
    if (path == at) path.clear();
}

void adopt_listener(ChannelListener& own, SharedListener& shared) {
    if (own.state != ChannelListener::State::untried) return;
    const std::lock_guard<std::mutex> lock(shared.mutex);
    if (shared.path.empty()) return;
    own.state = ChannelListener::State::up;
    own.path = shared.path;
    own.token = shared.token;
}

namespace {

// Opens one channel to the listener at `path` and closes it unused: whether sshd forwards
// to it (AllowStreamLocalForwarding, DisableForwarding, `restrict` keys refuse).
bool forwards_to(ssh_session s, Liveness& live, const std::string& path,
                 const std::string& display) {
    std::optional<Error> refused;
    const std::vector<ChannelPtr> probe = open_sessions(s, live, 1, display, refused, &path);
    if (refused)
        spdlog::debug("{} forwards no channel to its listener: {}", display, refused->what());
    return !refused && probe.size() == 1;
}

}  // namespace

bool Session::listen_for_channels() {
    ControlShell& sh = impl_->shell;
    ChannelListener& l = sh.listener;
    adopt_listener(l, *sh.shared_listener);
    if (l.state != ChannelListener::State::untried) return l.state == ChannelListener::State::up;
    l.state = ChannelListener::State::none;
    // libssh opens direct-streamlocal channels only to a server that says it is OpenSSH.
    if (sh.unavailable || sh.refusal || ssh_get_openssh_version(impl_->session.get()) == 0)
        return false;
    std::string token = random_token();
    // The token goes in the frame's text, never in an argv; `$$` is the control shell (also
    // in the frame's subshell), whose end ends the listener.
    const std::string command = shell_assignment("MLT_LISTEN_TOKEN", shell_quote(token)) +
                                "export MLT_LISTEN_TOKEN; mlt_watch=$$\n" +
                                shell_assignment("mlt_pys", kPythons) +
                                std::string(scripts::ssh_channel_listener);
    BoundedTail out(512), err(4096);
    int status = -1;
    try {
        status = shell(command, {}, out.sink(), err.sink()).exit_status;
    } catch (const Error& e) {
        // The listener is optional: a command of the shell that failed is no failure of the
        // transfer's (a lost link is).
        if (e.kind() != ErrorKind::remote) throw;
        spdlog::debug("no channel listener on {}: {}", impl_->display, e.what());
        return false;
    }
    const std::string path = socket_named(out.str());
    // A control shell that could not start ran it on an exec channel: the listener watches a
    // shell that is gone.
    if (status != 0 || path.empty() || sh.unavailable) {
        spdlog::debug("no channel listener on {}: {}{}", impl_->display,
                      printable(trim(out.str()), 200), printable(trim(err.str()), 200));
        return false;
    }
    if (!forwards_to(impl_->session.get(), impl_->live, path, impl_->display)) return false;
    l = {ChannelListener::State::up, path, std::move(token), true};
    sh.shared_listener->offer(l.path, l.token);
    spdlog::debug("channels on {} go to the listener at {}: no login each", impl_->display, path);
    return true;
}

bool Session::channel_cheaper_than_shell() {
    ControlShell& sh = impl_->shell;
    adopt_listener(sh.listener, *sh.shared_listener);
    return sh.listener.state == ChannelListener::State::up && !sh.channel && !sh.opening &&
           sh.ahead.empty();
}

double Session::channel_cost_s() const {
    return impl_->shell.listener.state == ChannelListener::State::up ? kListenerChannelCost
                                                                     : impl_->login_cost_s;
}

}  // namespace mlt
