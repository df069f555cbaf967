// The rows of one `connection` mapping (MLTK's paramiko arguments), and the paramiko keys
// mlt accepts and ignores.
#include "settings_rows.h"

namespace mlt::settings_detail {

using namespace rows;

const std::vector<FieldDecl>& connection_fields() {
    static const std::vector<FieldDecl> kFields = {
        text("hostname", "none", "gpu.example.com", "host name, address or `~/.ssh/config` alias",
             nullptr),
        integer("port", "`22`", "22", "SSH port", 1, 65535, nullptr),
        text("username", "local user", "root", "login name", nullptr),
        text("key_filename", "agent / default keys", "~/.ssh/id_gpu", "private key file", nullptr),
        text("password", "asked when needed", "\"s3cret\"",
             "password for password or keyboard-interactive authentication, as `--password` "
             "(which wins); also tried as the passphrase of an encrypted key; never logged",
             nullptr),
        text("passphrase", "asked when needed", "\"key s3cret\"",
             "passphrase of an encrypted key file; when it does not decrypt the key, mlt stops "
             "(exit 2); never logged",
             nullptr),
        number("timeout", "`15`", "30",
               "seconds to wait for the connection and the SSH greeting (rounded up); "
               "`-o ConnectTimeout` and the ssh config's `ConnectTimeout` win",
               1, 86400, nullptr),
        flag("look_for_keys", "`true`", "false",
             "`false`: do not try the default keys `~/.ssh/id_ed25519`, `id_ecdsa`, `id_rsa`",
             nullptr),
        flag("allow_agent", "`true`", "false", "`false`: do not use ssh-agent ($SSH_AUTH_SOCK)",
             nullptr),
    };
    return kFields;
}

const std::vector<std::string_view>& ignored_connection_keys() {
    // The other keyword arguments of paramiko's SSHClient.connect: MLTK passes `connection`
    // to it as it is, so MLTK settings may hold them.
    static const std::vector<std::string_view> kKeys = {
        "compress",
        "sock",
        "gss_auth",
        "gss_kex",
        "gss_deleg_creds",
        "gss_host",
        "gss_trust_dns",
        "banner_timeout",
        "auth_timeout",
        "channel_timeout",
        "disabled_algorithms",
        "pkey",
        "transport_factory",
        "auth_strategy",
    };
    return kKeys;
}

}  // namespace mlt::settings_detail
