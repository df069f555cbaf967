#pragma once
// Owners of libssh's C handles, and libssh's error text. Private to src/ssh/: nothing else
// includes libssh.

#include <libssh/libssh.h>

#include <memory>
#include <string>

namespace mlt::ssh_detail {

struct SessionDeleter {
    void operator()(ssh_session s) const {
        if (ssh_is_connected(s)) ssh_disconnect(s);
        ssh_free(s);
    }
};
struct ChannelDeleter {
    void operator()(ssh_channel c) const {
        if (ssh_channel_is_open(c)) ssh_channel_close(c);
        ssh_channel_free(c);
    }
};
struct KeyDeleter {
    void operator()(ssh_key k) const { ssh_key_free(k); }
};
struct CharDeleter {
    void operator()(char* p) const { ssh_string_free_char(p); }
};
struct HashDeleter {
    void operator()(unsigned char* p) const { ssh_clean_pubkey_hash(&p); }
};
struct KnownHostsEntryDeleter {
    void operator()(ssh_knownhosts_entry* e) const { ssh_knownhosts_entry_free(e); }
};

using SessionPtr = std::unique_ptr<ssh_session_struct, SessionDeleter>;
using ChannelPtr = std::unique_ptr<ssh_channel_struct, ChannelDeleter>;
using KeyPtr = std::unique_ptr<ssh_key_struct, KeyDeleter>;
using CString = std::unique_ptr<char, CharDeleter>;
using HashPtr = std::unique_ptr<unsigned char, HashDeleter>;
using KnownHostsEntryPtr = std::unique_ptr<ssh_knownhosts_entry, KnownHostsEntryDeleter>;

// libssh's last error text for a session, never empty.
inline std::string last_error(ssh_session s) {
    const char* e = s ? ssh_get_error(s) : nullptr;
    return (e && *e) ? e : "unknown libssh error";
}

}  // namespace mlt::ssh_detail
