#pragma once

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

// The canonical text of a spec (inverse of parse_host_spec), used in messages.
std::string to_string(const HostSpec& spec);

}  // namespace mlt
