// Host key verification with OpenSSH's StrictHostKeyChecking semantics.

#include "host_keys.h"

#include <pwd.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <utility>
#include <vector>

#include "known_hosts.h"
#include "mlt/util/shell.h"

namespace mlt {

std::string known_hosts_removal_command(const std::string& host_port,
                                        const std::string& known_hosts,
                                        const std::string& openssh_default) {
    std::string cmd = "ssh-keygen -R " + shell_quote(host_port);
    if (known_hosts != openssh_default) cmd += " -f " + shell_quote(known_hosts);
    return cmd;
}

}  // namespace mlt

namespace mlt::ssh_detail {

namespace {

Error host_key_error(std::string what, std::string hint) {
    return Error(ErrorKind::host_key, std::move(what), std::move(hint));
}

// The server's key, for comparing with known_hosts lines.
KeyPtr server_key(ssh_session s) {
    ssh_key raw = nullptr;
    if (ssh_get_server_publickey(s, &raw) != SSH_OK || raw == nullptr)
        throw host_key_error("cannot read the server's host key: " + last_error(s),
                             "retry; if it persists, run with -v");
    return KeyPtr(raw);
}

// known_hosts read for the server (known_hosts.h). A missing file is a file without lines; one
// that exists but cannot be read is refused, since a check that read nothing would call every
// host new.
KnownHostsCheck read_known_hosts(ssh_key key, const std::string& path,
                                 const std::string& host_port) {
    std::ifstream in(path);
    if (!in) {
        const int err = errno;
        struct stat st {};
        if (::stat(path.c_str(), &st) != 0 && errno == ENOENT) return {};
        throw host_key_error("cannot read " + path + " to check the host key of " + host_port +
                                 ": " + std::strerror(err),
                             "check that the file is readable");
    }
    KnownHostsCheck check = check_known_hosts(in, host_port, key);
    if (in.bad())
        throw host_key_error("cannot read " + path + " to check the host key of " + host_port,
                             "check that the file is a readable known_hosts file");
    return check;
}

// The system-wide known_hosts file libssh was given (the config's GlobalKnownHostsFile), else
// OpenSSH's default.
std::string global_known_hosts(ssh_session s) {
    char* raw = nullptr;
    if (ssh_options_get(s, SSH_OPTIONS_GLOBAL_KNOWNHOSTS, &raw) == SSH_OK && raw != nullptr) {
        std::string path(raw);
        ssh_string_free_char(raw);
        return path;
    }
    return "/etc/ssh/ssh_known_hosts";
}

}  // namespace

std::string server_fingerprint(ssh_session s, std::string* key_type) {
    ssh_key raw = nullptr;
    if (ssh_get_server_publickey(s, &raw) != SSH_OK)
        throw host_key_error("cannot read the server's host key: " + last_error(s),
                             "retry; if it persists, run with -v");
    KeyPtr key(raw);
    if (key_type) *key_type = ssh_key_type_to_char(ssh_key_type(key.get()));
    unsigned char* hash = nullptr;
    size_t len = 0;
    if (ssh_get_publickey_hash(key.get(), SSH_PUBLICKEY_HASH_SHA256, &hash, &len) != SSH_OK)
        throw host_key_error("cannot hash the server's host key", "run with -v");
    HashPtr owned_hash(hash);
    CString text(ssh_get_fingerprint_hash(SSH_PUBLICKEY_HASH_SHA256, hash, len));
    return text ? std::string(text.get()) : std::string("SHA256:?");
}

namespace {

// ssh-keygen's own default file: under the home of the password database, which is not
// always $HOME (mlt's ~).
std::string openssh_default_known_hosts() {
    const passwd* pw = ::getpwuid(::getuid());
    return pw && pw->pw_dir ? std::string(pw->pw_dir) + "/.ssh/known_hosts" : std::string();
}

std::string removal_command(const Resolved& r) {
    return known_hosts_removal_command(r.host_port, r.known_hosts, openssh_default_known_hosts());
}

}  // namespace

namespace {

// What the user's known_hosts and the system's say about the server's key.
struct KnownHostsLookup {
    KnownHostsCheck check;
    std::string path;                                                // the file `check` comes from
    std::vector<std::pair<std::string, UnreadableLine>> unreadable;  // with their files
};

// The user's file, then the system's (/etc/ssh/ssh_known_hosts unless the config names
// another), as ssh reads both: a key in either is known; a line with another key in either
// means changed.
KnownHostsLookup look_up_host_key(ssh_session s, const Resolved& r) {
    const std::string& host_port = r.host_port;
    const std::string& known_hosts_path = r.known_hosts;
    const KeyPtr key = server_key(s);  // read once for both files
    KnownHostsLookup found{
        read_known_hosts(key.get(), known_hosts_path, host_port), known_hosts_path, {}};
    KnownHostsCheck& check = found.check;
    std::string& check_path = found.path;
    auto& unreadable = found.unreadable;
    for (const UnreadableLine& bad : check.unreadable) unreadable.emplace_back(check_path, bad);
    const std::string global_path = global_known_hosts(s);
    if (!global_path.empty() && global_path != known_hosts_path) {
        try {
            const KnownHostsCheck global = read_known_hosts(key.get(), global_path, host_port);
            for (const UnreadableLine& bad : global.unreadable)
                unreadable.emplace_back(global_path, bad);
            if (check.revoked_line == 0 && global.revoked_line != 0) {
                check.revoked_line = global.revoked_line;
                check_path = global_path;
            }
            if (check.revoked_line == 0 && global.match != KnownHostsMatch::unknown &&
                (global.match == KnownHostsMatch::known ||
                 check.match == KnownHostsMatch::unknown ||
                 (global.match == KnownHostsMatch::changed &&
                  check.match == KnownHostsMatch::other))) {
                check.match = global.match;
                check.line = global.line;
                check_path = global_path;
            }
        } catch (const Error& e) {
            // As ssh: a system file that cannot be read is no reason to refuse the user's.
            spdlog::debug("{}", e.what());
        }
    }
    return found;
}

// On a reconnect the first connection's warning stands; the key is the same (Connector).
void warn_on_first(bool first, const std::string& text) {
    if (first)
        spdlog::warn("{}", text);
    else
        spdlog::debug("{}", text);
}

// The server's key differs from the one `where` holds: refused, unless checking is off.
HostKeyVerdict on_changed_key(const Resolved& r, const std::string& where,
                              const std::string& key_type, const std::string& fingerprint,
                              bool first) {
    const std::string& host_port = r.host_port;
    if (r.checking == HostKeyChecking::no) {
        // As OpenSSH: connect, but a man in the middle must not get a password.
        warn_on_first(first, "host key of " + host_port + " has CHANGED (now " + key_type + " " +
                                 fingerprint + "; " + where +
                                 " has another); connecting anyway as StrictHostKeyChecking is "
                                 "no, with key authentication only (no password or "
                                 "keyboard-interactive); " +
                                 r.known_hosts + " is left as it is");
        return HostKeyVerdict::changed;
    }
    throw host_key_error(
        "host key for " + host_port + " has CHANGED (now " + key_type + " " + fingerprint +
            "); the old key is at " + where,
        "if the host was reinstalled or replaced, remove the old key and connect again: " +
            removal_command(r) +
            "; for cloud hosts that reuse addresses, host_key_checking: no (or -o "
            "StrictHostKeyChecking=no) accepts a changed key with a warning");
}

// No known_hosts line names the host: as host_key_checking says.
HostKeyVerdict on_unknown_key(ssh_session s, const Resolved& r, const std::string& key_type,
                              const std::string& fingerprint, bool first) {
    const std::string& host_port = r.host_port;
    const std::string& known_hosts_path = r.known_hosts;
    switch (r.checking) {
        case HostKeyChecking::yes:
            throw host_key_error("host key of " + host_port + " is unknown (" + key_type + " " +
                                     fingerprint + ") and host_key_checking is yes",
                                 "verify the fingerprint, then add the host with "
                                 "-o StrictHostKeyChecking=accept-new or to " +
                                     known_hosts_path);
        case HostKeyChecking::no:
            warn_on_first(first, "host key of " + host_port + " is not verified (" + key_type +
                                     " " + fingerprint + "); not recorded");
            return HostKeyVerdict::unverified;
        case HostKeyChecking::accept_new:
            if (ssh_session_update_known_hosts(s) != SSH_OK)
                throw host_key_error("cannot record the host key of " + host_port + " in " +
                                         known_hosts_path + ": " + last_error(s),
                                     "check that the file and its directory are writable");
            spdlog::warn("added host key of {} ({} {}) to {}", host_port, key_type, fingerprint,
                         known_hosts_path);
            return HostKeyVerdict::recorded;
    }
    return HostKeyVerdict::known;
}

}  // namespace

HostKeyVerdict verify_host_key(ssh_session s, const Resolved& r, bool first) {
    const std::string& host_port = r.host_port;
    std::string key_type;
    const std::string fingerprint = server_fingerprint(s, &key_type);
    const KnownHostsLookup found = look_up_host_key(s, r);
    const KnownHostsCheck& check = found.check;
    if (check.revoked_line != 0)
        throw host_key_error(
            "host key of " + host_port + " (" + key_type + " " + fingerprint +
                ") is marked @revoked in " + found.path + ":" + std::to_string(check.revoked_line),
            "the server uses a revoked key: do not connect; ask its administrator");
    for (const auto& [path, bad] : found.unreadable)
        warn_on_first(first, "known_hosts line " + path + ":" + std::to_string(bad.line) + " for " +
                                 host_port + " cannot be read (" + bad.why +
                                 "); skipped, as ssh skips it");
    switch (check.match) {
        case KnownHostsMatch::known:
            spdlog::debug("host key {} {} matches {}:{}", key_type, fingerprint, found.path,
                          check.line);
            return HostKeyVerdict::known;
        case KnownHostsMatch::changed:
        case KnownHostsMatch::other:
            return on_changed_key(r, found.path + ":" + std::to_string(check.line), key_type,
                                  fingerprint, first);
        case KnownHostsMatch::unknown:
            break;
    }
    return on_unknown_key(s, r, key_type, fingerprint, first);
}

}  // namespace mlt::ssh_detail
