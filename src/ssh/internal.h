#pragma once
// Pieces of the session layer shared between its .cpp files.

#include <optional>
#include <string>

#include "handles.h"
#include "mlt/config/settings.h"
#include "mlt/ssh/session.h"
#include "mlt/util/error.h"

namespace mlt::ssh_detail {

// libssh's last error text for a session, never empty.
std::string last_error(ssh_session s);

// Checks the server's host key against `known_hosts_path` per `mode` (PRODUCT.md 3.1) and
// records a new key when mode is accept-new. Throws Error (host_key, exit 4) on refusal.
void verify_host_key(ssh_session s, HostKeyChecking mode, const std::string& known_hosts_path,
                     const std::string& host_port);

// Loads a private key file, asking for its passphrase when it is encrypted. Throws Error
// (key, exit 2) when the file is missing, unreadable, too open, or the passphrase is wrong.
KeyPtr load_private_key(const std::string& path);

// Authenticates with, in order: the explicit key (if any), the agent and default keys (when
// no explicit key), password and keyboard-interactive. Throws Error (auth, exit 255) that
// lists the methods tried.
void authenticate(ssh_session s, const KeyPtr& explicit_key, const std::string& key_path,
                  const std::optional<std::string>& password, const std::string& display);

}  // namespace mlt::ssh_detail

namespace mlt {

struct Session::Impl {
    ssh_detail::SessionPtr session;
    std::string display;
};

}  // namespace mlt
