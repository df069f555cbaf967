// Setting up a libssh session from a ConnectSpec: the ssh config entry of the host as typed,
// read here the way OpenSSH reads it, between mlt's command line and settings layers.
//
// Why not leave the config to libssh: libssh matches `Host` patterns against the name given
// as SSH_OPTIONS_HOST, and that option only takes valid host names, so an alias such as
// `vast_ai` can never reach its own `Host` block there (ssh_options_set fails with no error
// text); its `Match originalhost` sees the HostName, an unknown `Match` criterion fails the
// connect, and a ProxyJump it cannot parse too. So mlt's reader is the only one: libssh is
// given the HostName and every option mlt reads from the entry, and never parses the file.

#include "configure.h"

#include <pwd.h>
#include <spdlog/spdlog.h>
#include <strings.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include "mlt/config/host_spec.h"
#include "mlt/config/ssh_config.h"
#include "mlt/util/paths.h"
#include "mlt/util/text.h"
#include "proxy.h"

namespace mlt {

namespace {

bool cpu_has_aes() {
#if defined(__x86_64__) || defined(__i386__)
    return __builtin_cpu_supports("aes") && __builtin_cpu_supports("pclmul");
#elif defined(__aarch64__) && defined(HWCAP_AES) && defined(HWCAP_PMULL)
    const unsigned long caps = getauxval(AT_HWCAP);
    return (caps & HWCAP_AES) && (caps & HWCAP_PMULL);
#else
    return false;
#endif
}

}  // namespace

std::string preferred_ciphers() {
    if (!cpu_has_aes()) return {};
    // OpenSSH's default set (no CBC), reordered: the server still picks from this list.
    return "aes128-gcm@openssh.com,aes256-gcm@openssh.com,chacha20-poly1305@openssh.com,"
           "aes128-ctr,aes192-ctr,aes256-ctr";
}

namespace ssh_detail {

namespace {

// Expands `~` and OpenSSH's `%d` (home) in a path from the ssh config. libssh expands `~`
// from the password database, not $HOME, which would escape a test's temporary home.
std::string expand_config_path(const std::string& path) {
    if (path.rfind("%d/", 0) == 0) return home_dir() + path.substr(2);
    return expand_user(path);
}

std::string local_user_name() {
    if (const passwd* pw = getpwuid(getuid()); pw && pw->pw_name) return pw->pw_name;
    if (const char* u = std::getenv("USER"); u && *u) return u;
    throw config_error("cannot find the local user name", "give the user as -h USER@HOST");
}

bool file_exists(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0;
}

// Sets an option whose value mlt chose itself (a failure is a bug, not the user's input);
// `shown_value` names it in the message.
void set_option(ssh_session s, ssh_options_e which, const void* value, const char* name,
                const std::string& shown_value) {
    if (ssh_options_set(s, which, value) != SSH_OK)
        throw config_error(std::string("cannot set ssh option ") + name + " to '" + shown_value +
                           "': " + last_error(s));
}

// A name for messages: whole unless absurdly long.
std::string shown(const std::string& name) {
    return name.size() <= 64 ? name : name.substr(0, 60) + "...";
}

// Gives libssh the name to connect to. libssh takes IPv6 addresses in brackets only, and
// refuses anything that is not a host name (with no error text): such a name gets an mlt
// message that says which name, from where, and what to do.
void set_host(ssh_session raw, const std::string& hostname, const ConnectSpec& spec,
              const SshConfigEntry& entry, bool have_config) {
    std::optional<std::string> problem = host_name_problem(hostname);
    if (!problem) {
        const bool ipv6 = hostname.find(':') != std::string::npos;
        const std::string given = ipv6 ? "[" + hostname + "]" : hostname;
        if (ssh_options_set(raw, SSH_OPTIONS_HOST, given.c_str()) == SSH_OK) return;
        const char* e = ssh_get_error(raw);
        problem = std::string("libssh refused it") + (e && *e ? std::string(": ") + e : "");
    }
    if (const SshConfigValue* line = entry.first("HostName"))
        throw config_error("HostName " + shown(hostname) + " for host " + shown(spec.host) +
                               " at " + line->where() + " is not a valid host name: " + *problem,
                           "write the server's DNS name or IP address there");
    std::string what =
        shown(spec.host) + " (" + spec.host_origin + ") is not a valid host name: " + *problem;
    std::string hint;
    if (spec.config_path.empty()) {
        hint = "give the server's DNS name or IP address";
    } else {
        what += have_config ? "; " + spec.config_path + " has no HostName for it"
                            : "; there is no ssh config " + spec.config_path + " to resolve it";
        hint = "if it is an alias, put `Host " + shown(spec.host) +
               "` with `HostName <address>` into " + spec.config_path +
               "; else give the server's DNS name or IP address";
    }
    throw config_error(what, hint);
}

// An ssh config number within [lo, hi], or a config error naming the line.
int config_number(const SshConfigValue& v, const char* keyword, int lo, int hi) {
    const std::string& word = v.args.front();
    if (const auto n = parse_decimal(word, lo, hi)) return static_cast<int>(*n);
    throw config_error(std::string(keyword) + " " + word + " at " + v.where() +
                           " is not a number from " + std::to_string(lo) + " to " +
                           std::to_string(hi),
                       "fix the ssh config");
}

// Config keywords libssh honours that are handed on as they are written.
struct Forwarded {
    const char* keyword;
    ssh_options_e option;
    ssh_options_e also;  // the other direction, or the same option again
};
constexpr Forwarded kForwarded[] = {
    {"KexAlgorithms", SSH_OPTIONS_KEY_EXCHANGE, SSH_OPTIONS_KEY_EXCHANGE},
    {"HostKeyAlgorithms", SSH_OPTIONS_HOSTKEYS, SSH_OPTIONS_HOSTKEYS},
    {"MACs", SSH_OPTIONS_HMAC_C_S, SSH_OPTIONS_HMAC_S_C},
    {"PubkeyAcceptedAlgorithms", SSH_OPTIONS_PUBLICKEY_ACCEPTED_TYPES,
     SSH_OPTIONS_PUBLICKEY_ACCEPTED_TYPES},
    {"PubkeyAcceptedKeyTypes", SSH_OPTIONS_PUBLICKEY_ACCEPTED_TYPES,
     SSH_OPTIONS_PUBLICKEY_ACCEPTED_TYPES},
    {"BindAddress", SSH_OPTIONS_BINDADDR, SSH_OPTIONS_BINDADDR},
    {"GlobalKnownHostsFile", SSH_OPTIONS_GLOBAL_KNOWNHOSTS, SSH_OPTIONS_GLOBAL_KNOWNHOSTS},
};

// Config keywords that are yes/no switches of libssh.
struct Switch {
    const char* keyword;
    ssh_options_e option;
};
constexpr Switch kSwitches[] = {
    {"PubkeyAuthentication", SSH_OPTIONS_PUBKEY_AUTH},
    {"PasswordAuthentication", SSH_OPTIONS_PASSWORD_AUTH},
    {"KbdInteractiveAuthentication", SSH_OPTIONS_KBDINT_AUTH},
    {"GSSAPIAuthentication", SSH_OPTIONS_GSSAPI_AUTH},
};

// The keywords mlt reads itself (besides kForwarded and kSwitches); any other one is named
// with -v.
constexpr const char* kRead[] = {"HostName",
                                 "Port",
                                 "User",
                                 "IdentityFile",
                                 "UserKnownHostsFile",
                                 "StrictHostKeyChecking",
                                 "ConnectTimeout",
                                 "Ciphers",
                                 "ServerAliveInterval",
                                 "ServerAliveCountMax",
                                 "ProxyCommand",
                                 "ProxyJump",
                                 "Compression",
                                 "IdentityAgent"};

bool is_read_keyword(const std::string& keyword) {
    const auto same = [&](const char* k) { return ::strcasecmp(k, keyword.c_str()) == 0; };
    for (const char* k : kRead)
        if (same(k)) return true;
    for (const Forwarded& f : kForwarded)
        if (same(f.keyword)) return true;
    for (const Switch& w : kSwitches)
        if (same(w.keyword)) return true;
    return false;
}

void set_config_option(ssh_session raw, const SshConfigValue& v, const char* keyword,
                       ssh_options_e option, const void* value, const std::string& shown_value) {
    if (ssh_options_set(raw, option, value) != SSH_OK)
        throw config_error(std::string(keyword) + " " + shown(shown_value) + " at " + v.where() +
                               " is refused by libssh: " + last_error(raw),
                           "fix or remove that line of the ssh config");
}

void set_config_option(ssh_session raw, const SshConfigValue& v, const char* keyword,
                       ssh_options_e option, const std::string& value) {
    set_config_option(raw, v, keyword, option, value.c_str(), value);
}

// The alias entry's values of the keywords libssh reads but mlt does not otherwise handle.
void forward_config(ssh_session raw, const SshConfigEntry& entry) {
    for (const Forwarded& f : kForwarded) {
        if (const SshConfigValue* v = entry.first(f.keyword)) {
            set_config_option(raw, *v, f.keyword, f.option, v->args.front());
            if (f.also != f.option) set_config_option(raw, *v, f.keyword, f.also, v->args.front());
        }
    }
    for (const Switch& w : kSwitches) {
        if (const SshConfigValue* v = entry.first(w.keyword)) {
            int on = ::strcasecmp(v->args.front().c_str(), "no") != 0;
            set_config_option(raw, *v, w.keyword, w.option, &on, v->args.front());
        }
    }
    if (const SshConfigValue* v = entry.first("Compression")) {
        const bool on = v->args.front() == "yes";
        set_config_option(raw, *v, "Compression", SSH_OPTIONS_COMPRESSION, on ? "yes" : "no");
    }
    if (const SshConfigValue* v = entry.first("IdentityAgent")) {
        const std::string& agent = v->args.front();
        // "SSH_AUTH_SOCK" (the default) and "none" are OpenSSH words, not paths.
        if (agent != "SSH_AUTH_SOCK" && agent != "none")
            set_config_option(raw, *v, "IdentityAgent", SSH_OPTIONS_IDENTITY_AGENT,
                              expand_config_path(agent));
    }
}

// The proxy of `r` from -o, else from the entry (ProxyCommand and ProxyJump exclude each
// other: the first one in the file wins); "none" means a direct connection.
void resolve_proxy(Resolved& r, const ConnectSpec& spec, const SshConfigEntry& entry) {
    std::string keyword = spec.proxy_keyword;
    std::string value = spec.proxy_value;
    std::string origin = "-o " + keyword + "=" + shown(value);
    if (keyword.empty()) {
        const SshConfigValue* command = entry.first("ProxyCommand");
        const SshConfigValue* jump = entry.first("ProxyJump");
        const SshConfigValue* v =
            command && (!jump || command->order < jump->order) ? command : jump;
        if (!v) return;
        keyword = v == command ? "ProxyCommand" : "ProxyJump";
        value = v == command ? v->raw : v->args.front();
        origin = keyword + " at " + v->where();
    }
    if (value == "none") return;
    const ProxyTokens tokens{r.hostname, r.port, r.user, spec.host};
    r.proxy_origin = origin;
    r.proxy_is_jump = keyword == "ProxyJump";
    r.proxy_command =
        r.proxy_is_jump ? proxy_jump_command(value, origin, tokens, spec.config_path, &r.jump_host)
                        : expand_proxy_tokens(value, tokens, origin);
}

// User, port, identity and known_hosts of `r`: the command line, then the ssh config, then
// the settings, then OpenSSH's defaults.
void resolve_endpoint(Resolved& r, const ConnectSpec& spec, const SshConfigEntry& entry,
                      const std::string& ssh_dir) {
    const auto config_user = entry.value("User").value_or("");
    r.user = !spec.user.empty()            ? spec.user
             : !config_user.empty()        ? config_user
             : !spec.fallback_user.empty() ? spec.fallback_user
                                           : local_user_name();
    int config_port = 0;
    if (const SshConfigValue* v = entry.first("Port"))
        config_port = config_number(*v, "Port", 1, 65535);
    r.port = spec.port            ? spec.port
             : config_port        ? config_port
             : spec.fallback_port ? spec.fallback_port
                                  : 22;
    const auto config_identity = entry.value("IdentityFile").value_or("");
    r.identity = !spec.identity_file.empty()            ? expand_user(spec.identity_file)
                 : !config_identity.empty()             ? expand_config_path(config_identity)
                 : !spec.fallback_identity_file.empty() ? expand_user(spec.fallback_identity_file)
                                                        : std::string();
    const auto config_known_hosts = entry.value("UserKnownHostsFile").value_or("");
    r.known_hosts = !spec.known_hosts_path.empty() ? expand_user(spec.known_hosts_path)
                    : !config_known_hosts.empty()  ? expand_config_path(config_known_hosts)
                                                   : ssh_dir + "/known_hosts";
}

void resolve_host_key_checking(Resolved& r, const ConnectSpec& spec, const SshConfigEntry& entry) {
    // libssh reads StrictHostKeyChecking but cannot report it back (and ignores accept-new).
    r.checking = spec.fallback_host_key_checking;
    if (spec.host_key_checking) {
        r.checking = *spec.host_key_checking;
    } else if (const SshConfigValue* v = entry.first("StrictHostKeyChecking")) {
        auto mode = parse_host_key_checking(v->args.front());
        if (!mode)
            throw config_error("StrictHostKeyChecking " + v->args.front() + " at " + v->where() +
                                   " is not supported",
                               "use yes, accept-new or no");
        r.checking = *mode;
    }
}

void resolve_liveness(Resolved& r, const ConnectSpec& spec, const SshConfigEntry& entry) {
    // libssh ignores these two: mlt sends the keepalives itself (Liveness).
    const auto config_or = [&](const std::optional<int>& given, const char* keyword, int lo,
                               int hi) -> std::optional<int> {
        if (given) return given;
        if (const SshConfigValue* v = entry.first(keyword))
            return config_number(*v, keyword, lo, hi);
        return std::nullopt;
    };
    r.alive_interval_s =
        config_or(spec.alive_interval_s, "ServerAliveInterval", 0, 86400).value_or(10);
    r.alive_count_max = config_or(spec.alive_count_max, "ServerAliveCountMax", 0, 1000).value_or(2);
    const int fallback_timeout =
        spec.fallback_connect_timeout_s > 0 ? spec.fallback_connect_timeout_s : 15;
    r.connect_timeout_s =
        config_or(spec.connect_timeout_s, "ConnectTimeout", 1, 86400).value_or(fallback_timeout);
}

void set_ciphers(ssh_session raw, const ConnectSpec& spec, const SshConfigEntry& entry) {
    // Ciphers: -o, then the ssh config's, then mlt's order.
    std::string ciphers = spec.ciphers;
    std::string ciphers_from = "-o Ciphers";
    if (ciphers.empty()) {
        if (const SshConfigValue* v = entry.first("Ciphers")) {
            ciphers = v->args.front();
            ciphers_from = "Ciphers at " + v->where();
        } else {
            ciphers = preferred_ciphers();
        }
    }
    if (!ciphers.empty()) {
        if (ssh_options_set(raw, SSH_OPTIONS_CIPHERS_C_S, ciphers.c_str()) != SSH_OK ||
            ssh_options_set(raw, SSH_OPTIONS_CIPHERS_S_C, ciphers.c_str()) != SSH_OK)
            throw config_error("unsupported Ciphers list '" + ciphers + "' (" + ciphers_from +
                                   "): " + last_error(raw),
                               "name ciphers that libssh knows, e.g. aes128-gcm@openssh.com");
    }
}

}  // namespace

Resolved configure(ssh_session raw, const ConnectSpec& spec) {
    Resolved r;
    const bool have_config = !spec.config_path.empty() && file_exists(spec.config_path);
    const SshConfigEntry entry = have_config
                                     ? read_ssh_config(spec.config_path, spec.host, spec.user)
                                     : SshConfigEntry(spec.host);
    r.hostname = entry.hostname();
    set_host(raw, r.hostname, spec, entry, have_config);
    const std::string ssh_dir = home_dir() + "/.ssh";
    set_option(raw, SSH_OPTIONS_SSH_DIR, ssh_dir.c_str(), "ssh dir", ssh_dir);
    if (spdlog::should_log(spdlog::level::trace)) {
        int verbosity = SSH_LOG_PROTOCOL;
        ssh_options_set(raw, SSH_OPTIONS_LOG_VERBOSITY, &verbosity);
    }
    // libssh would otherwise read ~/.ssh/config and /etc/ssh/ssh_config at ssh_connect.
    int process_config = 0;
    set_option(raw, SSH_OPTIONS_PROCESS_CONFIG, &process_config, "process config", "0");
    r.config_warnings = entry.warnings();
    for (const auto& [keyword, v] : entry.keywords())
        if (!is_read_keyword(keyword)) r.unused_config.push_back(v->where() + " " + keyword);

    resolve_endpoint(r, spec, entry, ssh_dir);
    resolve_host_key_checking(r, spec, entry);
    resolve_liveness(r, spec, entry);

    set_option(raw, SSH_OPTIONS_USER, r.user.c_str(), "user", r.user);
    set_option(raw, SSH_OPTIONS_PORT, &r.port, "port", std::to_string(r.port));
    set_option(raw, SSH_OPTIONS_KNOWNHOSTS, r.known_hosts.c_str(), "known hosts", r.known_hosts);
    // We check host keys ourselves; this keeps a config's `StrictHostKeyChecking no` from
    // silently turning an unknown key into an accepted one inside libssh.
    int strict = 1;
    set_option(raw, SSH_OPTIONS_STRICTHOSTKEYCHECK, &strict, "strict host key checking", "1");
    forward_config(raw, entry);
    resolve_proxy(r, spec, entry);
    set_ciphers(raw, spec, entry);
    int nodelay = 1;
    set_option(raw, SSH_OPTIONS_NODELAY, &nodelay, "nodelay", "1");
    long timeout = r.connect_timeout_s;
    set_option(raw, SSH_OPTIONS_TIMEOUT, &timeout, "timeout", std::to_string(timeout));
    r.host_port = r.port == 22 ? r.hostname : "[" + r.hostname + "]:" + std::to_string(r.port);
    r.display = r.user + "@" + r.hostname + ":" + std::to_string(r.port);
    return r;
}

}  // namespace ssh_detail

}  // namespace mlt
