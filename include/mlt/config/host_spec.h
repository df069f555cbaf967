#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace mlt {

// One `-h` value: `[user@]host[:port][/remote_dir]`, or a `Host` alias of ~/.ssh/config.
// IPv6 literals are written in brackets: `user@[::1]:2222/work`. As in MLTK, the remote dir is
// the text after the first `/` that follows host[:port], kept as given: `h/ws` -> `ws`
// (relative to the login dir), `h//abs` -> `/abs`, `h/~/ws` -> `~/ws`.
struct HostSpec {
    std::string user;        // empty: from ssh config / settings / local user
    std::string host;        // hostname, address or ssh-config alias (never empty)
    int port = 0;            // 0: not given
    std::string remote_dir;  // empty: not given; may start with `~` or `/`
};

// Parses a `-h` value. Throws mlt::Error (usage, exit 2) naming the value and the problem:
// empty host, port not in 1..65535, unbalanced brackets, spaces or control characters,
// an empty user before `@`, a host or user starting with `-`, nothing after `/`.
HostSpec parse_host_spec(std::string_view text);

// Why `name` cannot be connected to as a host name, or nullopt when it can: it must be an IPv4
// or IPv6 address, or a DNS name whose dot-separated labels are letters, digits and '-' (not
// first or last), 1..63 characters each, 253 in all. libssh refuses other names outright (an
// ssh config alias such as `vast_ai` is not a host name: its HostName is).
std::optional<std::string> host_name_problem(std::string_view name);

// The canonical text of a spec (inverse of parse_host_spec), used in messages.
std::string to_string(const HostSpec& spec);

}  // namespace mlt
