#pragma once
// Private keys and user authentication (auth.cpp). Private to src/ssh/.

#include <optional>
#include <string>
#include <vector>

#include "handles.h"
#include "liveness.h"
#include "mlt/util/error.h"

namespace mlt::ssh_detail {

// The secrets that may decrypt a key file before anybody is asked (ConnectSpec).
struct KeySecrets {
    std::optional<std::string> passphrase;  // the only one tried when set: no prompt
    std::optional<std::string> password;    // tried silently first, as paramiko does
};

// The checks of load_private_key before any decryption: throws the same Errors (key, exit 2)
// for a file that is missing, not regular, a public key, too open, unreadable or no private
// key; returns the key when it is not encrypted, else nullptr. Never asks anything.
KeyPtr import_unless_encrypted(const std::string& path);

// Loads a private key file; when it is encrypted, tries `secrets`, else asks for the
// passphrase. Throws Error (key, exit 2) when the file is missing, unreadable, too open, or
// the passphrase is wrong (never naming it).
KeyPtr load_private_key(const std::string& path, const KeySecrets& secrets = {});

// How an Authenticator may authenticate (ConnectSpec).
struct AuthOptions {
    std::optional<std::string> password;
    KeySecrets key_secrets;
    bool look_for_keys = true;  // try ~/.ssh/id_* when there is no explicit key
    bool allow_agent = true;    // try ssh-agent when there is no explicit key
};

// Authenticates sessions to one host, the first time with, in order: the explicit key (if
// any), the agent and the default keys (when no explicit key, as `options` allow), password
// and keyboard-interactive, asking for what is needed. It keeps what worked (a decrypted key,
// the password), so later sessions (reconnects) authenticate the same way without asking.
// Secrets are wiped on destruction. Nothing is handed to libssh that it keeps (no callbacks).
class Authenticator {
  public:
    Authenticator(KeyPtr explicit_key, std::string key_path, AuthOptions options,
                  std::string ssh_dir);
    ~Authenticator();
    Authenticator(const Authenticator&) = delete;
    Authenticator& operator=(const Authenticator&) = delete;

    // `key_only`: password and keyboard-interactive are not used (the host key changed and was
    // accepted anyway). Throws Error (auth, exit 255) listing the methods tried,
    // (disconnected) when the link fails during authentication.
    void authenticate(ssh_session s, Liveness& live, const std::string& display, bool key_only);
    // The way that worked, for people: "publickey (FILE)", "ssh-agent", "password",
    // "keyboard-interactive"; "none" before (or when the server asked for nothing).
    std::string method_words() const;

  private:
    enum class Method { unknown, key, agent, password, kbdint };
    bool try_key(ssh_session s, Liveness& live, const KeyPtr& key);
    bool try_agent(ssh_session s, Liveness& live);
    bool try_default_keys(ssh_session s, Liveness& live, std::vector<std::string>& tried);
    bool try_password(ssh_session s, Liveness& live, bool may_ask);
    bool try_kbdint(ssh_session s, Liveness& live, bool may_ask);
    // The first authentication: every method the server offers (`methods`) and the options
    // allow, in order (the key given only when not `key_tried` already); the one that
    // worked, else Method::unknown. Adds each tried to `tried`.
    Method try_first_time(ssh_session s, Liveness& live, bool key_only, int methods,
                          std::vector<std::string>& tried, bool key_tried);
    // The way that worked before (a reconnect), or the key given the first time.
    bool try_known(ssh_session s, Liveness& live, bool key_only);
    // The error for a first authentication in which nothing of `tried` worked.
    Error first_time_failure(const std::string& display, bool key_only, int methods,
                             const std::vector<std::string>& tried) const;

    KeyPtr explicit_key_;
    std::string key_path_;
    AuthOptions options_;
    std::string ssh_dir_;
    Method method_ = Method::unknown;  // what worked the first time
    KeyPtr used_key_;                  // a default key that worked, decrypted
    std::string used_key_path_;
    std::string display_;
};

}  // namespace mlt::ssh_detail
