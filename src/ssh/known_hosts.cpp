// known_hosts read line by line as OpenSSH's hostfile.c does; see known_hosts.h for why
// libssh's own check is not used.

#include "known_hosts.h"

#include <algorithm>
#include <cctype>
#include <sstream>

#include "mlt/config/ssh_config.h"
#include "mlt/util/sha256.h"

namespace mlt::ssh_detail {

namespace {

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

// `|1|salt|hash` (base64 each, as ssh-keygen -H writes): HMAC-SHA1 of the name under the salt.
bool hashed_field_matches(const std::string& field, const std::string& name) {
    const size_t bar = field.find('|', 3);
    if (bar == std::string::npos) return false;
    const auto salt = base64_decode(std::string_view(field).substr(3, bar - 3));
    const auto hash = base64_decode(std::string_view(field).substr(bar + 1));
    if (!salt || !hash || salt->size() != 20 || hash->size() != 20) return false;
    return hmac_sha1(*salt, name) == *hash;
}

struct Line {
    std::string marker, hosts, type, blob;
};

Line split(const std::string& text) {
    std::istringstream words(text);
    Line l;
    std::string first;
    words >> first;
    if (!first.empty() && first[0] == '@') {
        l.marker = first;
        words >> l.hosts;
    } else {
        l.hosts = first;
    }
    words >> l.type >> l.blob;
    return l;
}

// The key of a line, or the reason it cannot be read.
KeyPtr read_key(const Line& l, std::string* why) {
    if (l.type.empty()) {
        *why = "no key after the host";
        return nullptr;
    }
    const ssh_keytypes_e type = ssh_key_type_from_name(l.type.c_str());
    if (type == SSH_KEYTYPE_UNKNOWN) {
        *why = "unknown key type '" + l.type.substr(0, 60) + "'";
        return nullptr;
    }
    if (l.blob.empty()) {
        *why = "no key after the key type";
        return nullptr;
    }
    ssh_key raw = nullptr;
    if (ssh_pki_import_pubkey_base64(l.blob.c_str(), type, &raw) != SSH_OK || raw == nullptr) {
        *why = "the " + l.type + " key does not decode (cut short?)";
        return nullptr;
    }
    KeyPtr key(raw);
    if (ssh_key_type(key.get()) != type) {
        *why = "the key is not of the type the line names";
        return nullptr;
    }
    return key;
}

}  // namespace

bool known_hosts_field_matches(const std::string& field, const std::string& host_port) {
    const std::string name = lower(host_port);
    if (field.rfind("|1|", 0) == 0) return hashed_field_matches(field, name);
    return match_pattern_list(lower(field), name, true);
}

KnownHostsCheck check_known_hosts(std::istream& text, const std::string& host_port,
                                  ssh_key server_key) {
    KnownHostsCheck out;
    int first_changed = 0, first_other = 0;
    std::string raw;
    for (int n = 1; std::getline(text, raw); ++n) {
        const size_t start = raw.find_first_not_of(" \t\r");
        if (start == std::string::npos || raw[start] == '#') continue;
        const Line l = split(raw.substr(start));
        if (l.marker == "@cert-authority") continue;  // certificates are not used by mlt
        // A revoked key counts for every host; any other line only when it names this one,
        // so the keys of the other hosts' lines are never decoded.
        const bool revoked = l.marker == "@revoked";
        if (!revoked && !known_hosts_field_matches(l.hosts, host_port)) continue;
        std::string why;
        KeyPtr key = read_key(l, &why);
        if (revoked) {
            if (key && ssh_key_cmp(key.get(), server_key, SSH_KEY_CMP_PUBLIC) == 0 &&
                out.revoked_line == 0)
                out.revoked_line = n;
            continue;
        }
        if (!l.marker.empty()) why = "unknown marker '" + l.marker.substr(0, 40) + "'";
        if (!l.marker.empty() || !key) {
            out.unreadable.push_back({n, why});
            continue;
        }
        if (ssh_key_cmp(key.get(), server_key, SSH_KEY_CMP_PUBLIC) == 0) {
            if (out.match != KnownHostsMatch::known) out.line = n;
            out.match = KnownHostsMatch::known;
        } else if (ssh_key_type(key.get()) == ssh_key_type(server_key)) {
            if (first_changed == 0) first_changed = n;
        } else if (first_other == 0) {
            first_other = n;
        }
    }
    if (out.match == KnownHostsMatch::known) return out;
    if (first_changed != 0) {
        out.match = KnownHostsMatch::changed;
        out.line = first_changed;
    } else if (first_other != 0) {
        out.match = KnownHostsMatch::other;
        out.line = first_other;
    }
    return out;
}

}  // namespace mlt::ssh_detail
