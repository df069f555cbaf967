#pragma once
// known_hosts read as OpenSSH's ssh reads it, line by line, for one host and one server key.
// libssh's own check (ssh_session_is_known_server) stops at the first line about the host that
// it cannot parse and then calls a known host "unknown": with accept-new a changed key was
// recorded and trusted. Here an unreadable line is skipped (and reported), as ssh skips it.

#include <istream>
#include <string>
#include <vector>

#include "handles.h"

namespace mlt::ssh_detail {

// What the lines about a host say of the server's key.
enum class KnownHostsMatch {
    known,    // a line holds this very key
    changed,  // no line holds it, a line holds another key of the same type
    other,    // no line holds it, lines hold keys of other types only
    unknown,  // no readable line is about the host
};

// A line about the host that could not be read, and why.
struct UnreadableLine {
    int line = 0;  // 1-based
    std::string why;
};

// The verdict over a whole known_hosts file.
struct KnownHostsCheck {
    KnownHostsMatch match = KnownHostsMatch::unknown;
    // The line that decided: the one holding the key (known), else the first line with another
    // key of the key's type (changed), else the first with a key of another type (other).
    int line = 0;
    // A `@revoked` line holds the server's key (whatever host it names, as mlt has always
    // read it, more strictly than OpenSSH); its number.
    int revoked_line = 0;
    // Lines whose host field names the host but whose key (or marker) cannot be read.
    std::vector<UnreadableLine> unreadable;
};

// True when the host field of a known_hosts line (`pattern,pattern,!negated` or one hashed
// `|1|salt|hash`) names `host_port` ("host", or "[host]:port" for a port other than 22),
// as OpenSSH's match_hostname and its hashed-name check decide, ignoring case.
bool known_hosts_field_matches(const std::string& field, const std::string& host_port);

// Reads `text` (a known_hosts file) for `host_port` and the server's key `server_key`.
// Comments, blank lines and `@cert-authority` lines are skipped; never throws for content.
KnownHostsCheck check_known_hosts(std::istream& text, const std::string& host_port,
                                  ssh_key server_key);

}  // namespace mlt::ssh_detail
