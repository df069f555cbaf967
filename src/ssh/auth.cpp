// Private key loading and user authentication.

#include <libssh/callbacks.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "internal.h"
#include "mlt/util/terminal.h"

namespace mlt::ssh_detail {

namespace {

Error key_error(std::string what, std::string hint) {
    return Error(ErrorKind::key, exit_code::kUsage, std::move(what), std::move(hint));
}

// libssh's passphrase callback for the agent/default-key path: asks the user.
int passphrase_callback(const char* prompt, char* buf, size_t len, int /*echo*/, int /*verify*/,
                        void* /*userdata*/) {
    auto answer = prompt_secret(prompt ? prompt : "Enter passphrase: ");
    if (!answer || answer->size() + 1 > len) return -1;
    std::memcpy(buf, answer->c_str(), answer->size() + 1);
    wipe(*answer);
    return 0;
}

// Marks that libssh wanted a passphrase, and declines to give one: used to tell an
// encrypted key from a broken file before anybody is asked anything.
int probe_callback(const char*, char*, size_t, int, int, void* userdata) {
    *static_cast<bool*>(userdata) = true;
    return -1;
}

}  // namespace

KeyPtr load_private_key(const std::string& path) {
    struct stat st{};
    if (::stat(path.c_str(), &st) != 0)
        throw key_error("key file " + path + " not found: " + std::strerror(errno),
                        "check -i / key_filename, or create one with 'mlt ssh-keygen NAME'");
    if (!S_ISREG(st.st_mode))
        throw key_error("key file " + path + " is not a regular file", "point -i at a private key");
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

    // A tty gets three tries as with ssh; askpass answers the same every time, so one.
    const bool askpass_only = !have_terminal();
    const int tries = askpass_only ? 1 : 3;
    for (int attempt = 0; attempt < tries; ++attempt) {
        auto passphrase = prompt_secret("Enter passphrase for key '" + path + "': ");
        if (!passphrase)
            throw key_error("key file " + path + " is encrypted and no passphrase could be asked",
                            "run in a terminal, or set SSH_ASKPASS, or use ssh-agent");
        int rc = ssh_pki_import_privkey_file(path.c_str(), passphrase->c_str(), nullptr, nullptr,
                                             &raw);
        wipe(*passphrase);
        if (rc == SSH_OK) return KeyPtr(raw);
    }
    throw key_error("wrong passphrase for key " + path, "try again, or use ssh-agent");
}

void authenticate(ssh_session s, const KeyPtr& explicit_key, const std::string& key_path,
                  const std::optional<std::string>& password, const std::string& display) {
    std::vector<std::string> tried;
    auto done = [&](int rc, const std::string& what) {
        if (rc == SSH_AUTH_SUCCESS) {
            spdlog::debug("authenticated with {}", what);
            return true;
        }
        if (rc == SSH_AUTH_ERROR)
            throw Error(ErrorKind::disconnected, exit_code::kConnection,
                        "authentication to " + display + " failed: " + last_error(s),
                        "check the connection; run with -v for details");
        tried.push_back(what);
        return false;
    };

    int rc = ssh_userauth_none(s, nullptr);
    if (done(rc, "none")) return;
    tried.clear();
    const int methods = ssh_userauth_list(s, nullptr);

    if (methods & SSH_AUTH_METHOD_PUBLICKEY) {
        if (explicit_key) {
            if (done(ssh_userauth_publickey(s, nullptr, explicit_key.get()),
                     "publickey (" + key_path + ")"))
                return;
        } else {
            ssh_callbacks_struct callbacks{};
            callbacks.auth_function = passphrase_callback;
            ssh_callbacks_init(&callbacks);
            ssh_set_callbacks(s, &callbacks);
            rc = ssh_userauth_publickey_auto(s, nullptr, nullptr);
            if (done(rc, "publickey (agent and default keys)")) return;
        }
    }

    if (methods & SSH_AUTH_METHOD_PASSWORD) {
        std::optional<std::string> secret = password;
        if (!secret) secret = prompt_secret(display + "'s password: ");
        if (secret) {
            rc = ssh_userauth_password(s, nullptr, secret->c_str());
            if (!password) wipe(*secret);
            if (done(rc, "password")) return;
        }
    }

    if (methods & SSH_AUTH_METHOD_INTERACTIVE) {
        rc = ssh_userauth_kbdint(s, nullptr, nullptr);
        while (rc == SSH_AUTH_INFO) {
            const int prompts = ssh_userauth_kbdint_getnprompts(s);
            for (int i = 0; i < prompts; ++i) {
                char echo = 0;
                const char* prompt = ssh_userauth_kbdint_getprompt(s, static_cast<unsigned>(i), &echo);
                std::optional<std::string> answer;
                // The usual single hidden prompt is the password: use --password for it.
                if (password && prompts == 1 && !echo) answer = password;
                else answer = prompt_secret(prompt ? prompt : "Response: ");
                if (!answer) {
                    rc = SSH_AUTH_DENIED;
                    break;
                }
                ssh_userauth_kbdint_setanswer(s, static_cast<unsigned>(i), answer->c_str());
                if (!password || answer != password) wipe(*answer);
            }
            if (rc == SSH_AUTH_DENIED) break;
            rc = ssh_userauth_kbdint(s, nullptr, nullptr);
        }
        if (done(rc, "keyboard-interactive")) return;
    }

    std::string list;
    for (const auto& t : tried) list += (list.empty() ? "" : ", ") + t;
    if (list.empty()) list = "nothing the server offers";
    throw Error(ErrorKind::auth, exit_code::kConnection,
                "authentication to " + display + " failed; tried: " + list,
                explicit_key ? "check that " + key_path + ".pub is in ~/.ssh/authorized_keys on the remote"
                             : "pass a key with -i KEY, or --password");
}

}  // namespace mlt::ssh_detail
