// Private key loading and user authentication.

#include "auth.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "mlt/util/terminal.h"
#include "mlt/util/text.h"

namespace mlt::ssh_detail {

namespace {

Error key_error(std::string what, std::string hint) {
    return Error(ErrorKind::key, std::move(what), std::move(hint));
}

// Marks that libssh wanted a passphrase, and declines to give one: used to tell an
// encrypted key from a broken file before anybody is asked anything.
int probe_callback(const char*, char*, size_t, int, int, void* userdata) {
    *static_cast<bool*>(userdata) = true;
    return -1;
}

// What to do when a passphrase or password could not be asked (no terminal), as far as
// SSH_ASKPASS goes: set it, or it is set and gave nothing.
std::string no_prompt_hint() {
    const char* askpass = std::getenv("SSH_ASKPASS");
    if (!askpass || !*askpass) return "run in a terminal, or set SSH_ASKPASS, or use ssh-agent";
    const char* require = std::getenv("SSH_ASKPASS_REQUIRE");
    if (require && std::strcmp(require, "never") == 0)
        return "SSH_ASKPASS_REQUIRE=never keeps SSH_ASKPASS from being asked; run in a terminal, "
               "or use ssh-agent";
    return "SSH_ASKPASS (" + printable(askpass, 80) +
           ") gave no answer; check that it runs and prints the secret, or run in a terminal, or "
           "use ssh-agent";
}

}  // namespace

KeyPtr import_unless_encrypted(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0)
        throw key_error("key file " + path + " not found: " + std::strerror(errno),
                        "check -i / key_filename, or create one with 'mlt ssh-keygen NAME'");
    if (!S_ISREG(st.st_mode))
        throw key_error("key file " + path + " is not a regular file", "point -i at a private key");
    // Before the mode check: a public key is 0644 as ssh-keygen writes it, and chmod would
    // not help.
    const std::string pub = ".pub";
    if (path.size() > pub.size() && path.compare(path.size() - pub.size(), pub.size(), pub) == 0)
        throw key_error("key file " + path + " is a public key",
                        "give the private key, the same path without .pub: -i " +
                            path.substr(0, path.size() - pub.size()));
    // OpenSSH refuses such keys ("UNPROTECTED PRIVATE KEY FILE"); so do we.
    if (st.st_uid == ::getuid() && (st.st_mode & 077) != 0)
        throw key_error("key file " + path + " is readable by others (mode " +
                            std::to_string((st.st_mode >> 6) & 7) +
                            std::to_string((st.st_mode >> 3) & 7) + std::to_string(st.st_mode & 7) +
                            ")",
                        "run: chmod 600 " + path);
    if (::access(path.c_str(), R_OK) != 0)
        throw key_error("key file " + path + " is not readable: " + std::strerror(errno),
                        "check its owner and mode");

    ssh_key raw = nullptr;
    bool wants_passphrase = false;
    if (ssh_pki_import_privkey_file(path.c_str(), nullptr, probe_callback, &wants_passphrase,
                                    &raw) == SSH_OK)
        return KeyPtr(raw);
    if (!wants_passphrase)
        throw key_error("key file " + path + " is not a private key libssh can read",
                        "use an OpenSSH or PEM private key (not the .pub file)");
    return nullptr;
}

KeyPtr load_private_key(const std::string& path, const KeySecrets& secrets) {
    if (KeyPtr plain = import_unless_encrypted(path)) return plain;
    ssh_key raw = nullptr;
    const auto decrypt = [&](const std::string& secret) {
        return ssh_pki_import_privkey_file(path.c_str(), secret.c_str(), nullptr, nullptr, &raw) ==
               SSH_OK;
    };
    if (secrets.passphrase) {
        if (decrypt(*secrets.passphrase)) return KeyPtr(raw);
        throw key_error(
            "the passphrase of the settings (ssh.connection.passphrase) does not "
            "decrypt key " +
                path,
            "fix it, or remove it to be asked for the passphrase");
    }
    // paramiko decrypts keys with the password when no passphrase is given; MLTK settings
    // may rely on that.
    if (secrets.password && decrypt(*secrets.password)) {
        spdlog::debug("key {} decrypted with the password", path);
        return KeyPtr(raw);
    }

    // A tty gets three tries as with ssh; askpass answers the same every time, so one.
    const bool askpass_only = !have_terminal();
    const int tries = askpass_only ? 1 : 3;
    for (int attempt = 0; attempt < tries; ++attempt) {
        auto passphrase = prompt_secret("Enter passphrase for key '" + path + "': ");
        if (!passphrase)
            throw key_error("key file " + path + " is encrypted and no passphrase could be asked",
                            no_prompt_hint());
        const bool ok = decrypt(*passphrase);
        wipe(*passphrase);
        if (ok) return KeyPtr(raw);
    }
    throw key_error("wrong passphrase for key " + path, "try again, or use ssh-agent");
}

namespace {

// The answer of an auth call, waiting through libssh's call timeouts while the link answers
// (SSH_AUTH_AGAIN means the timeout passed before the server replied).
template <typename Call>
int auth_call(ssh_session s, Liveness& live, const std::string& display, Call call) {
    int rc;
    while ((rc = call()) == SSH_AUTH_AGAIN) {
        if (!ssh_is_connected(s)) break;
        live.check(s, display);
    }
    // A link that dropped meanwhile is a lost link (try again later), not a refusal.
    if (!ssh_is_connected(s))
        throw Error(ErrorKind::disconnected, "lost the connection to " + display +
                                                 " while authenticating: " + last_error(s));
    return rc;
}

// OpenSSH's and libssh's default identities, in their order.
constexpr const char* kDefaultKeys[] = {"id_ed25519", "id_ecdsa", "id_rsa"};

}  // namespace

Authenticator::Authenticator(KeyPtr explicit_key, std::string key_path, AuthOptions options,
                             std::string ssh_dir)
    : explicit_key_(std::move(explicit_key)),
      key_path_(std::move(key_path)),
      options_(std::move(options)),
      ssh_dir_(std::move(ssh_dir)) {}

Authenticator::~Authenticator() {
    if (options_.password) wipe(*options_.password);
    if (options_.key_secrets.password) wipe(*options_.key_secrets.password);
    if (options_.key_secrets.passphrase) wipe(*options_.key_secrets.passphrase);
}

bool Authenticator::try_key(ssh_session s, Liveness& live, const KeyPtr& key) {
    const int rc =
        auth_call(s, live, display_, [&] { return ssh_userauth_publickey(s, nullptr, key.get()); });
    if (rc == SSH_AUTH_ERROR)
        throw Error(ErrorKind::disconnected,
                    "authentication to " + display_ + " failed: " + last_error(s),
                    "check the connection; run with -v for details");
    return rc == SSH_AUTH_SUCCESS;
}

bool Authenticator::try_agent(ssh_session s, Liveness& live) {
    if (!options_.allow_agent) return false;
    const char* sock = std::getenv("SSH_AUTH_SOCK");
    if (!sock || !*sock) return false;
    return auth_call(s, live, display_, [&] { return ssh_userauth_agent(s, nullptr); }) ==
           SSH_AUTH_SUCCESS;
}

bool Authenticator::try_default_keys(ssh_session s, Liveness& live,
                                     std::vector<std::string>& tried) {
    if (!options_.look_for_keys) return false;
    for (const char* name : kDefaultKeys) {
        const std::string path = ssh_dir_ + "/" + name;
        struct stat st {};
        if (::stat(path.c_str(), &st) != 0) continue;
        // Offer the public half first, so that only a key the server takes is decrypted
        // (and its passphrase asked for), as ssh and libssh do.
        ssh_key raw_pub = nullptr;
        if (ssh_pki_import_pubkey_file((path + ".pub").c_str(), &raw_pub) == SSH_OK) {
            KeyPtr pub(raw_pub);
            const int rc = auth_call(s, live, display_, [&] {
                return ssh_userauth_try_publickey(s, nullptr, pub.get());
            });
            if (rc != SSH_AUTH_SUCCESS) continue;
        }
        tried.push_back("publickey (" + path + ")");
        KeyPtr key = load_private_key(path, options_.key_secrets);
        if (try_key(s, live, key)) {
            used_key_ = std::move(key);
            used_key_path_ = path;
            return true;
        }
    }
    return false;
}

bool Authenticator::try_password(ssh_session s, Liveness& live, bool may_ask) {
    if (!options_.password && may_ask)
        options_.password = prompt_secret(display_ + "'s password: ");
    if (!options_.password) return false;
    return auth_call(s, live, display_, [&] {
               return ssh_userauth_password(s, nullptr, options_.password->c_str());
           }) == SSH_AUTH_SUCCESS;
}

bool Authenticator::try_kbdint(ssh_session s, Liveness& live, bool may_ask) {
    int rc = auth_call(s, live, display_, [&] { return ssh_userauth_kbdint(s, nullptr, nullptr); });
    while (rc == SSH_AUTH_INFO) {
        const int prompts = ssh_userauth_kbdint_getnprompts(s);
        for (int i = 0; i < prompts; ++i) {
            char echo = 0;
            const char* prompt = ssh_userauth_kbdint_getprompt(s, static_cast<unsigned>(i), &echo);
            std::optional<std::string> answer;
            // The usual single hidden prompt is the password: --password (or the one asked
            // once) answers it; anything else is asked, and cannot be replayed later.
            if (prompts == 1 && !echo && !options_.password && may_ask)
                options_.password = prompt_secret(prompt ? prompt : "Password: ");
            if (prompts == 1 && !echo)
                answer = options_.password;
            else if (may_ask)
                answer = prompt_secret(prompt ? prompt : "Response: ");
            if (!answer) return false;
            ssh_userauth_kbdint_setanswer(s, static_cast<unsigned>(i), answer->c_str());
            wipe(*answer);  // a copy: the kept password is options_.password itself
        }
        rc = auth_call(s, live, display_, [&] { return ssh_userauth_kbdint(s, nullptr, nullptr); });
    }
    return rc == SSH_AUTH_SUCCESS;
}

Authenticator::Method Authenticator::try_first_time(ssh_session s, Liveness& live, bool key_only,
                                                    int methods, std::vector<std::string>& tried,
                                                    bool key_tried) {
    if (methods & SSH_AUTH_METHOD_PUBLICKEY) {
        if (explicit_key_) {
            // A key refused before the methods were asked (key_tried) is not tried again.
            if (!key_tried) {
                tried.push_back("publickey (" + key_path_ + ")");
                if (try_key(s, live, explicit_key_)) return Method::key;
            }
        } else if (options_.allow_agent || options_.look_for_keys) {
            tried.push_back(options_.allow_agent && options_.look_for_keys
                                ? "publickey (agent and default keys)"
                            : options_.allow_agent ? "publickey (agent)"
                                                   : "publickey (default keys)");
            if (try_agent(s, live)) return Method::agent;
            if (try_default_keys(s, live, tried)) return Method::key;
        }
    }
    if (!key_only && (methods & SSH_AUTH_METHOD_PASSWORD)) {
        tried.push_back("password");
        if (try_password(s, live, true)) return Method::password;
    }
    if (!key_only && (methods & SSH_AUTH_METHOD_INTERACTIVE)) {
        tried.push_back("keyboard-interactive");
        if (try_kbdint(s, live, true)) return Method::kbdint;
    }
    return Method::unknown;
}

Error Authenticator::first_time_failure(const std::string& display, bool key_only, int methods,
                                        const std::vector<std::string>& tried) const {
    // After a changed host key was accepted (StrictHostKeyChecking no), as OpenSSH: a man in
    // the middle must not learn a password.
    const bool withheld =
        key_only && (methods & (SSH_AUTH_METHOD_PASSWORD | SSH_AUTH_METHOD_INTERACTIVE));
    std::string list;
    for (const auto& t : tried) list += (list.empty() ? "" : ", ") + t;
    if (list.empty()) list = "nothing the server offers";
    if (withheld) list += "; not password or keyboard-interactive, because the host key changed";
    // A password the server would take, but none given and none could be asked.
    const bool unasked = !key_only && !options_.password && !have_terminal() &&
                         (methods & (SSH_AUTH_METHOD_PASSWORD | SSH_AUTH_METHOD_INTERACTIVE));
    return Error(ErrorKind::auth, "authentication to " + display + " failed; tried: " + list,
                 explicit_key_
                     ? "check that " + key_path_ + ".pub is in ~/.ssh/authorized_keys on the remote"
                 : withheld ? "use a key (-i KEY), or remove the host's old key from "
                              "known_hosts if the new one is right"
                 : unasked  ? "pass a key with -i KEY, or --password; no password could "
                              "be asked: " +
                                 no_prompt_hint()
                           : "pass a key with -i KEY, or --password");
}

bool Authenticator::try_known(ssh_session s, Liveness& live, bool key_only) {
    switch (method_) {
        case Method::unknown:  // the first time, with a key given
            return try_key(s, live, explicit_key_);
        case Method::key:
            return try_key(s, live, explicit_key_ ? explicit_key_ : used_key_);
        case Method::agent:
            return try_agent(s, live);
        case Method::password:
            return !key_only && try_password(s, live, false);
        case Method::kbdint:
            return !key_only && try_kbdint(s, live, false);
    }
    return false;
}

void Authenticator::authenticate(ssh_session s, Liveness& live, const std::string& display,
                                 bool key_only) {
    // Written by the first authentication only (alone, Connector::open): later ones run side
    // by side and only read what it learned.
    if (method_ == Method::unknown) display_ = display;
    // The way that worked before (a reconnect, without asking anything), or the key given,
    // goes first: the round trip that asks the server for its methods ("none") comes only
    // when it fails.
    const bool key_first = method_ == Method::unknown && explicit_key_;
    if ((key_first || method_ != Method::unknown) && try_known(s, live, key_only)) {
        if (key_first) method_ = Method::key;
        return;
    }
    int rc = auth_call(s, live, display, [&] { return ssh_userauth_none(s, nullptr); });
    if (rc == SSH_AUTH_SUCCESS) return;
    if (rc == SSH_AUTH_ERROR)
        throw Error(ErrorKind::disconnected,
                    "authentication to " + display + " failed: " + last_error(s),
                    "check the connection; run with -v for details");
    if (method_ != Method::unknown)
        throw Error(ErrorKind::auth,
                    "authentication to " + display +
                        " failed on reconnecting, although it worked "
                        "before in this run",
                    "the remote's keys or password changed; run again");
    std::vector<std::string> tried;
    if (key_first) tried.push_back("publickey (" + key_path_ + ")");
    const int methods = ssh_userauth_list(s, nullptr);
    method_ = try_first_time(s, live, key_only, methods, tried, key_first);
    if (method_ != Method::unknown) return;
    throw first_time_failure(display, key_only, methods, tried);
}

std::string Authenticator::method_words() const {
    switch (method_) {
        case Method::key:
            return "publickey (" + (explicit_key_ ? key_path_ : used_key_path_) + ")";
        case Method::agent:
            return "ssh-agent";
        case Method::password:
            return "password";
        case Method::kbdint:
            return "keyboard-interactive";
        case Method::unknown:
            break;
    }
    return "none";
}

}  // namespace mlt::ssh_detail
