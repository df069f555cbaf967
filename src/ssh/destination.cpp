// resolve_destination: a connect spec resolved and its key file checked, with nothing sent.
#include "mlt/ssh/destination.h"

#include "auth.h"
#include "configure.h"
#include "handles.h"

namespace mlt {

using namespace ssh_detail;

Destination resolve_destination(const ConnectSpec& spec) {
    SessionPtr probe(ssh_new());
    if (!probe) throw Error(ErrorKind::internal, "cannot create an ssh session");
    const Resolved r = configure(probe.get(), spec);
    Destination d;
    d.display = r.display;
    d.identity = r.identity;
    d.known_hosts = r.known_hosts;
    d.checking = r.checking;
    d.connect_timeout_s = r.connect_timeout_s;
    d.proxy = r.proxy_origin;
    // A ProxyCommand is not shown (its words may carry a token); the hops of a jump are.
    if (r.proxy_is_jump && r.proxy_origin.find(r.jump_host) == std::string::npos)
        d.proxy += " (via " + r.jump_host + ")";
    d.config_warnings = r.config_warnings;
    // The checks Connector makes before it decrypts (and so before it could ask).
    if (!r.identity.empty()) d.encrypted = !import_unless_encrypted(r.identity);
    return d;
}

}  // namespace mlt
