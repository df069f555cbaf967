// The control shell: one long-lived remote `sh` that runs mlt's own commands one after the
// other. An exec channel costs a channel open, an exec request and a start of the user's
// login shell (which may source a slow ~/.bashrc); a command in the control shell costs one
// round trip. docs/remote-protocol.md describes the framing.

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <utility>
#include <vector>

#include "channel_io.h"
#include "control_frame.h"
#include "mlt/util/bounded.h"
#include "mlt/util/interrupt.h"
#include "mlt/util/shell.h"
#include "mlt/util/text.h"
#include "session_impl.h"

namespace mlt {

using namespace ssh_detail;

namespace {

// A command of mlt's that sends nothing for this long, on a link that answers, is given up:
// the quiet ones are short (the longest wait inside one, a stop, is about 16 s; a log follow
// ends after 15 s), and a long one (a pull of a big file) keeps sending.
constexpr std::chrono::seconds kFrameDeadline{600};

// How much of what a login printed before mlt's first frame is kept (its end) for an error.
constexpr size_t kLoginKeep = 16 * 1024;

// Reads the channel into `out` and `err` until both have seen the end of their frame (true),
// or until the channel ended first (false: sh itself ended). Throws when nothing came in
// before `deadline`, which each read that brings bytes moves on, and when `floor` (if any)
// finds the frame's stdout under it.
bool read_frame(ssh_session s, Liveness& live, ssh_channel ch, const std::string& display,
                ReadBuffer& buf, std::chrono::steady_clock::time_point& deadline, FrameStream& out,
                FrameStream& err, FloorCheck* floor) {
    const OutputSink to_out = [&](std::string_view d) {
        if (floor) floor->moved(d.size());
        out.feed(d.data(), d.size());
    };
    const OutputSink to_err = [&](std::string_view d) { err.feed(d.data(), d.size()); };
    while (!out.done() || !err.done()) {
        const auto now = std::chrono::steady_clock::now();
        if (now > deadline)
            throw remote_error("a command of mlt on " + display + " sent nothing for " +
                                   std::to_string(kFrameDeadline.count()) + " s",
                               "look at the remote host (a hung disk or mount?); run with -v");
        size_t got = 0;
        const bool drained = read_turn(s, live, ch, buf, kPollMs, to_out, to_err, display, &got);
        if (got > 0) deadline = now + kFrameDeadline;  // a long pull is no hang
        if (drained) return false;
        if (floor && !out.done()) floor->check();
    }
    return true;
}

// A server that runs no `sh` may still run other commands (a ForceCommand that picks the
// ones it allows). An account that runs none (nologin as its shell or as the ForceCommand)
// would fail every command with the server's words on stdout, where they would pass for the
// command's own output (a console log): one probe tells the two apart, and the error for the
// second quotes what the server said (`login_said`: what it printed for the shell). The
// probe's output is computed by a shell, so a server that echoes the command does not pass.
void require_commands(Session& session, const std::string& token, const std::string& login_said) {
    BoundedTail kept(kLoginKeep);
    const OutputSink keep = kept.sink();
    const int status =
        session.exec("printf '%s-%s\\n' " + shell_quote(token) + " ok", input_from({}), keep, keep)
            .exit_status;
    std::string said = kept.str();
    if (said.find(token + "-ok\n") != std::string::npos) return;
    if (trim(said).empty()) said = login_said;
    if (!said.empty()) spdlog::debug("the login on {} said:\n{}", session.display_name(), said);
    std::string what = "the account on " + session.display_name() + " runs no commands (" +
                       exit_text(status) + ")";
    const std::string quoted = last_lines(said);
    if (!quoted.empty()) what += ": " + quoted;
    throw remote_error(
        what,
        "its login shell or sshd's ForceCommand is not a shell, e.g. /usr/sbin/nologin; "
        "mlt needs a POSIX shell there: ask the host's admin");
}

// What the login took: from sending the control shell's start (`sent_at`) to its first
// reply, less the round trips in that time (the exec request's, and the channel open's when
// it was not sent ahead); `rtt` is the quickest reply so far (-1: none, taken as 0).
// Said with -v.
double login_cost(std::chrono::steady_clock::time_point sent_at, bool opened_ahead, double rtt,
                  const std::string& display) {
    const double took =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - sent_at).count();
    const double cost = std::max(0.0, took - std::max(0.0, rtt) * (opened_ahead ? 1 : 2));
    spdlog::debug(
        "a new channel on {} costs {:.3f} s before its command runs (the login shell and its "
        "startup files)",
        display, cost);
    return cost;
}

// Reads the reply to frame `n` into the sinks (null or empty: dropped), starting with what an
// earlier read took past its own frame; keeps what comes past this one's end. False when
// the channel ended first (sh itself ended).
bool read_reply(ssh_session s, Liveness& live, ControlShell& sh, const std::string& display,
                uint64_t n, const OutputSink* to_out, const OutputSink* to_err, int* status,
                FloorCheck* floor = nullptr) {
    FrameStream out(std::exchange(sh.out_rest, {})), err(std::exchange(sh.err_rest, {}));
    out.start(marker_prefix(sh.token, n), to_out);
    err.start(marker_prefix(sh.token, n), to_err);
    auto deadline = std::chrono::steady_clock::now() + kFrameDeadline;
    ReadBuffer buf;
    if (!read_frame(s, live, sh.channel.get(), display, buf, deadline, out, err, floor))
        return false;
    sh.out_rest = out.take_rest();
    sh.err_rest = err.take_rest();
    *status = out.status();
    return true;
}

// sh itself ended during a command's frame (a syntax error ends it): the exit status as an
// exec channel would report it; the shell is dropped.
int shell_ended(ssh_session s, Liveness& live, ControlShell& sh, const std::string& display) {
    const int status = exit_status_of(s, live, sh.channel.get(), display);
    drop_shell(sh);
    return status;
}

// The text to write for `command` (frame `serial`, set here), after frame 0 when the shell
// starts, followed by the commands to send ahead.
std::string frames(ControlShell& sh, const std::string& command, std::string_view input,
                   uint64_t& serial) {
    std::string text;
    if (!sh.channel) {
        sh.token = random_token();
        sh.serial = 0;
        // Frame 0 says the shell is ours; whatever the login shell printed before is not
        // output (it is kept for the error when frame 0 never comes).
        text = "true\n" + frame_end(sh.token, 0);
    }
    serial = ++sh.serial;
    text += command_frame(sh.token, serial, command, input);
    for (ControlShell::Ahead& ahead : sh.ahead) {
        ahead.serial = ++sh.serial;
        text += command_frame(sh.token, ahead.serial, ahead.command, ahead.input);
    }
    return text;
}

}  // namespace

void forget_listener(ControlShell& sh) {
    if (sh.listener.own && sh.shared_listener) sh.shared_listener->forget(sh.listener.path);
    sh.listener = {};
}

void drop_shell(ControlShell& sh) {
    forget_listener(sh);
    sh.channel.reset();
    sh.ahead.clear();
    sh.unasked.clear();
    sh.out_rest.clear();
    sh.err_rest.clear();
}

void Session::open_shell_ahead() {
    ControlShell& sh = impl_->shell;
    if (sh.channel || sh.opening || sh.unavailable || sh.refusal) return;
    spdlog::trace("opening the control shell's channel on {}", impl_->display);
    sh.opening = open_ahead(impl_->session.get());
}

void Session::shell_ahead(std::string command, std::string input, bool guess) {
    ControlShell& sh = impl_->shell;
    if (sh.unavailable || sh.refusal) return;
    // A command on its way already (sent on a guess that came true) is not sent twice.
    for (const ControlShell::Ahead& a : sh.ahead)
        if (a.command == command && a.input == input) return;
    sh.ahead.push_back({std::move(command), std::move(input), 0, guess});
}

std::optional<ExecResult> Session::reply_sent_ahead(const std::string& command,
                                                    std::string_view input,
                                                    const OutputSink& on_stdout,
                                                    const OutputSink& on_stderr) {
    ControlShell& sh = impl_->shell;
    bool asked = false;
    for (;;) {
        if (sh.ahead.empty()) return std::nullopt;
        const ControlShell::Ahead& front = sh.ahead.front();
        asked = front.command == command && front.input == input;
        if (front.serial == 0) {
            // Not sent yet: it goes with this command, or, when it is this one (the command
            // before went over an exec channel), it runs once, now.
            if (asked) sh.ahead.erase(sh.ahead.begin());
            return std::nullopt;
        }
        if (asked || !front.guess) break;
        // Guesses only, none of them asked for: the command goes out now, and its reader drops
        // their replies first (sh.unasked), instead of waiting for them before it is sent.
        const auto sent = std::find_if(sh.ahead.begin(), sh.ahead.end(),
                                       [](const ControlShell::Ahead& a) { return a.serial == 0; });
        const bool all_guesses = std::all_of(sh.ahead.begin(), sent, [&](const auto& a) {
            return a.guess && !(a.command == command && a.input == input);
        });
        if (all_guesses) {
            for (auto a = sh.ahead.begin(); a != sent; ++a) {
                spdlog::trace("shell on {}: a reply sent ahead on a guess is not asked for: {}",
                              impl_->display, a->command);
                sh.unasked.push_back(a->serial);
            }
            sh.ahead.erase(sh.ahead.begin(), sent);
            continue;
        }
        if (!skip_reply()) return std::nullopt;
    }
    if (!asked) {
        // Not asked for (another run holds the lock, a Ctrl+C, a stop): its reply is not
        // waited for (a log follow sent ahead may take seconds); a new shell runs this.
        spdlog::trace(
            "dropping the control shell on {}: its commands sent ahead were not "
            "asked for",
            impl_->display);
        drop_shell(sh);
        return std::nullopt;
    }
    spdlog::trace("shell on {} (sent ahead): {}", impl_->display, command);
    try {
        int status = -1;
        const uint64_t serial = sh.ahead.front().serial;
        sh.ahead.erase(sh.ahead.begin());
        if (!read_reply(impl_->session.get(), impl_->live, sh, impl_->display, serial, &on_stdout,
                        &on_stderr, &status))
            status = shell_ended(impl_->session.get(), impl_->live, sh, impl_->display);
        spdlog::trace("exit status {}", status);
        return ExecResult{status};
    } catch (...) {
        drop_shell(sh);
        throw;
    }
}

bool Session::skip_reply() {
    ControlShell& sh = impl_->shell;
    spdlog::trace("shell on {}: a reply sent ahead on a guess is not asked for: {}", impl_->display,
                  sh.ahead.front().command);
    try {
        int status = -1;
        const uint64_t serial = sh.ahead.front().serial;
        sh.ahead.erase(sh.ahead.begin());
        if (read_reply(impl_->session.get(), impl_->live, sh, impl_->display, serial, nullptr,
                       nullptr, &status))
            return true;
        shell_ended(impl_->session.get(), impl_->live, sh, impl_->display);
        return false;
    } catch (...) {
        drop_shell(sh);
        throw;
    }
}

ExecResult Session::shell(const std::string& command, std::string_view input,
                          const OutputSink& on_stdout, const OutputSink& on_stderr,
                          const std::string& data_stream) {
    ControlShell& sh = impl_->shell;
    if (sh.refusal) throw *sh.refusal;
    if (sh.unavailable)
        return exec_parallel(
                   {StreamJob{command, input_from(input), on_stdout, on_stderr, {}, data_stream}})
            .front();
    ssh_session s = impl_->session.get();
    if (auto sent = reply_sent_ahead(command, input, on_stdout, on_stderr)) return *sent;
    const bool starting = !sh.channel;
    uint64_t serial = 0;
    const std::string text = frames(sh, command, input, serial);

    // The login shell did not run `sh` (a ForceCommand, a restricted shell): nothing of ours
    // ran, so plain exec channels take over, once the account is known to run commands.
    const auto without_shell = [&](const std::string& login_said) {
        spdlog::debug("no control shell on {}; using exec channels", impl_->display);
        drop_shell(sh);
        sh.unavailable = true;
        try {
            require_commands(*this, sh.token, login_said);
        } catch (const Error& e) {
            if (e.kind() == ErrorKind::remote) sh.refusal = e;
            throw;
        }
        return shell(command, input, on_stdout, on_stderr, data_stream);
    };
    const auto sent_at = std::chrono::steady_clock::now();
    const bool opened_ahead = starting && sh.opening;
    try {
        if (starting) {
            // The frames go with the request that starts the shell. A login that ends at once
            // (nologin) may close the channel while they are written: open_exec leaves that
            // to the read below, where it is a frame 0 that never comes.
            spdlog::trace("starting the control shell on {}", impl_->display);
            sh.channel =
                open_exec(s, impl_->live, "exec sh", impl_->display, text, std::move(sh.opening));
        } else {
            write_all(s, impl_->live, sh.channel.get(), text.data(), text.size(), impl_->display);
        }
        spdlog::trace("shell on {}: {}", impl_->display, command);
        for (const ControlShell::Ahead& ahead : sh.ahead)
            spdlog::trace("sent ahead on {}: {}", impl_->display, ahead.command);
        int status = -1;
        for (const uint64_t unasked : std::exchange(sh.unasked, {}))
            if (!read_reply(s, impl_->live, sh, impl_->display, unasked, nullptr, nullptr,
                            &status)) {
                // sh ended in a guess, before this command ran: a new shell runs it.
                shell_ended(s, impl_->live, sh, impl_->display);
                return shell(command, input, on_stdout, on_stderr, data_stream);
            }
        if (starting) {
            BoundedTail login(kLoginKeep);
            const OutputSink keep_login = login.sink();
            if (!read_reply(s, impl_->live, sh, impl_->display, 0, &keep_login, &keep_login,
                            &status))
                return without_shell(login.str());
            const std::string login_said = login.str();
            if (!trim(login_said).empty())
                spdlog::debug("the login on {} printed first:\n{}", impl_->display, login_said);
            impl_->login_cost_s =
                login_cost(sent_at, opened_ahead, impl_->live.fastest_reply_s, impl_->display);
        }
        // A data stream's input went with its frame: it counts as moved from the start.
        FloorCheck floor(impl_->data_floor, data_stream, impl_->display);
        floor.moved(input.size());
        if (!read_reply(s, impl_->live, sh, impl_->display, serial, &on_stdout, &on_stderr, &status,
                        &floor))
            return ExecResult{shell_ended(s, impl_->live, sh, impl_->display)};
        if (!starting) impl_->live.saw_reply(sent_at);
        spdlog::trace("exit status {}", status);
        return ExecResult{status};
    } catch (...) {
        // The frame was cut short: its rest would end up in the next command's output.
        drop_shell(sh);
        throw;
    }
}

}  // namespace mlt
