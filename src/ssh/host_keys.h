#pragma once
// The server's host key checked as OpenSSH's StrictHostKeyChecking does (host_keys.cpp).
// Private to src/ssh/.

#include <string>

#include "configure.h"
#include "handles.h"

namespace mlt::ssh_detail {

// What verify_host_key decided.
enum class HostKeyVerdict {
    known,       // matches known_hosts
    recorded,    // was unknown, now recorded (accept-new)
    unverified,  // unknown, accepted without recording (no)
    changed,     // differs from known_hosts, accepted (no): key authentication only
};

// Checks the server's host key against r.known_hosts per r.checking, as OpenSSH's
// StrictHostKeyChecking: a new key is recorded with accept-new; a changed one is accepted
// only with `no` (known_hosts untouched; the caller must then allow key authentication only).
// `first`: false on a reconnect, whose acceptance is logged at debug level only. Throws Error
// (host_key, exit 4) on refusal; a changed key's message holds the ssh-keygen -R command that
// removes the stale entry.
HostKeyVerdict verify_host_key(ssh_session s, const Resolved& r, bool first);

// "SHA256:..." of the server's host key; throws Error (host_key) when it cannot be read.
std::string server_fingerprint(ssh_session s, std::string* key_type);

}  // namespace mlt::ssh_detail
