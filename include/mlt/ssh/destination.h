#pragma once
// Where a connect spec leads, worked out locally as a connection would (train --dry-run).

#include <string>
#include <vector>

#include "mlt/config/settings.h"
#include "mlt/ssh/session.h"

namespace mlt {

// A connect spec after the ssh config was layered in, as Connector resolves it.
struct Destination {
    std::string display;      // user@hostname:port
    std::string identity;     // the key file; empty: the default keys and ssh-agent
    bool encrypted = false;   // the key file needs a passphrase (asked when the run starts)
    std::string known_hosts;  // the known_hosts file the host key is checked against
    HostKeyChecking checking = HostKeyChecking::accept_new;
    int connect_timeout_s = 15;
    std::string proxy;  // where the proxy comes from ("ProxyJump X at FILE:LINE"); empty: direct
    std::vector<std::string> config_warnings;  // what the ssh config says that mlt does not do
};

// Resolves `spec` as Connector's constructor does (ssh config, command line over it,
// settings under it) and checks its key file as it does, without decrypting it: no prompt,
// no network, no name lookup. Throws the same mlt::Error as that constructor for a bad host
// name, ssh config line or key file.
Destination resolve_destination(const ConnectSpec& spec);

}  // namespace mlt
