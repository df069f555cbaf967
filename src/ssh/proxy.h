#pragma once
// ProxyCommand and ProxyJump as OpenSSH runs them, made into libssh's proxy command
// (proxy.cpp). Private to src/ssh/.

#include <string>

#include "configure.h"
#include "mlt/util/error.h"

namespace mlt::ssh_detail {

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

}  // namespace mlt::ssh_detail
