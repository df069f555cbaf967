// ProxyCommand and ProxyJump as OpenSSH runs them, handed to libssh as its proxy command.
//
// libssh 0.10 runs the command as `$SHELL -c "exec COMMAND"` with stderr on /dev/null and
// expands its own %-tokens first (it refuses OpenSSH's %n): mlt expands OpenSSH's tokens
// itself and doubles every remaining `%`. ProxyJump becomes OpenSSH's own `ssh -W` command
// (as `ssh` does): the `ssh` program then checks the jump host's key against the user's
// known_hosts and authenticates there with the user's keys and agent, while mlt checks the
// target's key as for a direct connection. ssh's stderr is kept in a private file, so that a
// failed jump ends in one line that says why instead of libssh's "connection reset by peer".

#include "proxy.h"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>

#include "mlt/config/host_spec.h"
#include "mlt/config/ssh_config.h"
#include "mlt/util/paths.h"
#include "mlt/util/shell.h"

namespace mlt::ssh_detail {

namespace {

// A value that may stand unquoted in a shell command (as OpenSSH inserts its tokens): host
// names, addresses, user names of the usual spelling.
bool is_plain_word(const std::string& value) {
    if (value.empty()) return false;
    for (unsigned char c : value) {
        if (!std::isalnum(c) && c != '.' && c != '-' && c != '_' && c != '@' && c != '+' &&
            c != ':' && c != '[' && c != ']')
            return false;
    }
    return value[0] != '-';
}

// The user config `ssh` reads by itself: under the home of the password database (not $HOME).
std::string openssh_user_config() {
    const passwd* pw = ::getpwuid(::getuid());
    return pw && pw->pw_dir ? std::string(pw->pw_dir) + "/.ssh/config" : std::string();
}

std::string trimmed(std::string s) {
    const size_t end = s.find_last_not_of(" \t\r\n");
    s.erase(end == std::string::npos ? 0 : end + 1);
    return s.substr(std::min(s.size(), s.find_first_not_of(" \t\r\n")));
}

// ssh's last line that says something (not the notice that it recorded a host key).
std::string last_ssh_line(const std::string& text) {
    std::string last;
    size_t start = 0;
    while (start < text.size()) {
        size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        std::string line = trimmed(text.substr(start, end - start));
        start = end + 1;
        if (line.empty() || line.rfind("Warning: Permanently added", 0) == 0) continue;
        if (line.find_first_not_of("@") == std::string::npos) continue;  // banner frame
        last = line;
    }
    return last.size() <= 300 ? last : last.substr(0, 297) + "...";
}

// The `ssh` command line that logs in to the jump host `jump` ([user@]host[:port]) as ssh
// takes it: ssh reads no :port in a host name, so the port goes to -p.
std::string jump_login(const std::string& jump) {
    try {
        const HostSpec hop = parse_host_spec(jump);
        std::vector<std::string> words{"ssh"};
        if (hop.port) words.insert(words.end(), {"-p", std::to_string(hop.port)});
        words.push_back(hop.user.empty() ? hop.host : hop.user + "@" + hop.host);
        return shell_join(words);
    } catch (const Error&) {
        return "ssh " + jump;  // not reached: proxy_jump_command parsed it before
    }
}

bool contains(const std::string& text, const char* needle) {
    return text.find(needle) != std::string::npos;
}

}  // namespace

std::string expand_proxy_tokens(const std::string& command, const ProxyTokens& t,
                                const std::string& origin) {
    std::string out;
    for (size_t i = 0; i < command.size(); ++i) {
        if (command[i] != '%') {
            out += command[i];
            continue;
        }
        if (i + 1 >= command.size())
            throw config_error(origin + " ends in a lone '%'", "write %% for a literal '%'");
        const char token = command[++i];
        std::string value;
        switch (token) {
            case '%':
                out += '%';
                continue;
            case 'h':
                value = t.hostname;
                break;
            case 'p':
                value = std::to_string(t.port);
                break;
            case 'r':
                value = t.user;
                break;
            case 'n':
                value = t.alias;
                break;
            default:
                throw config_error(origin + " uses %" + std::string(1, token) +
                                       ", which mlt does not expand there",
                                   "use %h, %p, %r, %n or %% (as ssh does)");
        }
        if (!is_plain_word(value))
            throw config_error(origin + ": %" + std::string(1, token) + " would insert '" + value +
                                   "', which is not safe in a shell command",
                               "use a plain host and user name");
        out += value;
    }
    return out;
}

std::string proxy_jump_command(const std::string& hops_text, const std::string& origin,
                               const ProxyTokens& target, const std::string& config_path,
                               std::string* jump_host) {
    // As OpenSSH's parse_jump: the last hop is the one `ssh -W` logs in to; the hops before it
    // are its own -J.
    std::string hops = hops_text;
    std::string before;
    if (size_t comma = hops.rfind(','); comma != std::string::npos) {
        before = hops.substr(0, comma);
        hops = hops.substr(comma + 1);
    }
    if (hops.rfind("ssh://", 0) == 0) hops = hops.substr(6);
    HostSpec hop;
    try {
        hop = parse_host_spec(hops);
    } catch (const Error& e) {
        throw config_error(origin + ": " + e.what(), "write ProxyJump [user@]host[:port][,...]");
    }
    if (!hop.remote_dir.empty())
        throw config_error(origin + ": a jump host has no directory ('/" + hop.remote_dir + "')",
                           "write ProxyJump [user@]host[:port][,...]");
    *jump_host = hops;
    std::vector<std::string> words{"ssh"};
    if (!config_path.empty() && config_path != openssh_user_config())
        words.insert(words.end(), {"-F", config_path});
    if (!hop.user.empty()) words.insert(words.end(), {"-l", hop.user});
    if (hop.port) words.insert(words.end(), {"-p", std::to_string(hop.port)});
    if (!before.empty()) words.insert(words.end(), {"-J", before});
    words.insert(words.end(),
                 {"-W", "[" + target.hostname + "]:" + std::to_string(target.port), hop.host});
    return shell_join(words);
}

std::string libssh_proxy_command(const std::string& command, const std::string& stderr_path) {
    std::string full = command;
    if (!stderr_path.empty())
        full =
            "exec /bin/sh -c " + shell_quote("exec " + command + " 2>>" + shell_quote(stderr_path));
    std::string escaped;
    for (char c : full) {
        if (c == '%') escaped += '%';
        escaped += c;
    }
    return escaped;
}

Error proxy_failure(const Resolved& r, const std::string& ssh_stderr,
                    const std::string& libssh_error) {
    const std::string target = r.host_port;
    if (!r.proxy_is_jump)
        return Error(ErrorKind::connect,
                     "cannot connect to " + target + " through the " + r.proxy_origin +
                         ": the command ended or closed its output before the ssh handshake (" +
                         libssh_error + ")",
                     "run it by hand to see why: " + r.proxy_command);
    const std::string said = last_ssh_line(ssh_stderr);
    const std::string jump = r.jump_host;
    const std::string login = jump_login(jump);
    if (contains(ssh_stderr, "REMOTE HOST IDENTIFICATION HAS CHANGED"))
        return Error(ErrorKind::host_key,
                     "host key of jump host " + jump + " has CHANGED; ssh refused it (" +
                         r.proxy_origin + ")",
                     "someone may be in the middle; check with `" + login +
                         "`, and if the key changed legitimately remove the old one with "
                         "ssh-keygen -R");
    if (contains(ssh_stderr, "Host key verification failed"))
        return Error(ErrorKind::host_key,
                     "host key of jump host " + jump + " is not known; ssh refused it (" +
                         r.proxy_origin + ")",
                     "connect once with `" + login +
                         "` to check and record its key, or set StrictHostKeyChecking "
                         "accept-new for it in the ssh config");
    if (contains(ssh_stderr, "Permission denied"))
        return Error(ErrorKind::auth,
                     "jump host " + jump + " refused the login (" + r.proxy_origin + "): " + said,
                     "check that `" + login + "` logs in from this machine");
    return Error(ErrorKind::connect,
                 "cannot reach " + target + " through jump host " + jump + " (" + r.proxy_origin +
                     "): " + (said.empty() ? libssh_error : said),
                 "check that `" + login + "` logs in from this machine");
}

}  // namespace mlt::ssh_detail
