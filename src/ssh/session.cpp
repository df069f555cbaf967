#include "mlt/ssh/session.h"

#include <pwd.h>
#include <spdlog/spdlog.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include "internal.h"
#include "mlt/config/ssh_config.h"
#include "mlt/util/paths.h"
#include "mlt/util/terminal.h"

namespace mlt {

using namespace ssh_detail;

namespace {

Error connect_error(std::string what, std::string hint = {}) {
    return Error(ErrorKind::connect, exit_code::kConnection, std::move(what), std::move(hint));
}

// Reads back a string option; empty when libssh has none.
std::string get_option(ssh_session s, ssh_options_e which) {
    char* value = nullptr;
    if (ssh_options_get(s, which, &value) != SSH_OK || value == nullptr) return {};
    CString owned(value);
    return owned.get();
}

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

void set_option(ssh_session s, ssh_options_e which, const void* value, const char* name) {
    if (ssh_options_set(s, which, value) != SSH_OK)
        throw config_error(std::string("cannot set ssh option ") + name + ": " + last_error(s));
}

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

std::string last_error(ssh_session s) {
    const char* e = s ? ssh_get_error(s) : nullptr;
    return (e && *e) ? e : "unknown libssh error";
}

}  // namespace ssh_detail

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Session::Session(Session&&) noexcept = default;
Session& Session::operator=(Session&&) noexcept = default;
Session::~Session() = default;

const std::string& Session::display_name() const {
    return impl_->display;
}

namespace {

// A connect spec after the ssh config was layered in: the same for every session opened
// from one spec.
struct Resolved {
    std::string hostname, user, identity, known_hosts, host_port, display;
    int port = 22;
    HostKeyChecking checking = HostKeyChecking::accept_new;
    int alive_interval_s = 10;
    int alive_count_max = 2;
};

// An -o / ssh config number, or `fallback`.
int config_number(const ConnectSpec& spec, const std::optional<int>& given, const char* keyword,
                  int fallback) {
    if (given) return *given;
    if (spec.config_path.empty()) return fallback;
    auto word = ssh_config_lookup(spec.config_path, spec.host, keyword);
    if (!word) return fallback;
    try {
        size_t used = 0;
        const int v = std::stoi(*word, &used);
        if (used == word->size() && v >= 0) return v;
    } catch (const std::exception&) {
        // reported below
    }
    throw config_error(std::string(keyword) + " " + *word + " in " + spec.config_path +
                           " is not a number of 0 or more",
                       "fix the ssh config");
}

// Sets up a fresh session from `spec` (host, ssh config, then mlt's overrides) and returns
// what it resolved to. Order matters: host first, then the config, then our overrides,
// because parsing the config overwrites the port and known_hosts set before it.
Resolved configure(ssh_session raw, const ConnectSpec& spec) {
    Resolved r;
    set_option(raw, SSH_OPTIONS_HOST, spec.host.c_str(), "host");
    const std::string ssh_dir = home_dir() + "/.ssh";
    set_option(raw, SSH_OPTIONS_SSH_DIR, ssh_dir.c_str(), "ssh dir");
    const std::string default_identity = get_option(raw, SSH_OPTIONS_IDENTITY);
    if (!spec.config_path.empty() && file_exists(spec.config_path)) {
        if (ssh_options_parse_config(raw, spec.config_path.c_str()) != SSH_OK)
            throw config_error(
                "cannot parse ssh config " + spec.config_path + ": " + last_error(raw),
                "fix the file or point config_path elsewhere");
    }

    // What the config entry supplied, to layer it between command line and settings.
    r.hostname = get_option(raw, SSH_OPTIONS_HOST);
    std::string config_user = get_option(raw, SSH_OPTIONS_USER);
    std::string config_identity = get_option(raw, SSH_OPTIONS_IDENTITY);
    if (config_identity == default_identity) config_identity.clear();
    unsigned int config_port = 0;
    ssh_options_get_port(raw, &config_port);
    if (config_port == 22) config_port = 0;  // libssh reports 22 when nothing set it
    std::string config_known_hosts = get_option(raw, SSH_OPTIONS_KNOWNHOSTS);

    r.user = !spec.user.empty()            ? spec.user
             : !config_user.empty()        ? config_user
             : !spec.fallback_user.empty() ? spec.fallback_user
                                           : local_user_name();
    r.port = spec.port            ? spec.port
             : config_port        ? static_cast<int>(config_port)
             : spec.fallback_port ? spec.fallback_port
                                  : 22;
    r.identity = !spec.identity_file.empty()            ? expand_user(spec.identity_file)
                 : !config_identity.empty()             ? expand_config_path(config_identity)
                 : !spec.fallback_identity_file.empty() ? expand_user(spec.fallback_identity_file)
                                                        : std::string();
    r.known_hosts = !spec.known_hosts_path.empty() ? expand_user(spec.known_hosts_path)
                    : !config_known_hosts.empty()  ? expand_config_path(config_known_hosts)
                                                   : ssh_dir + "/known_hosts";

    // libssh reads StrictHostKeyChecking but cannot report it back (and ignores accept-new).
    r.checking = spec.fallback_host_key_checking;
    if (spec.host_key_checking) {
        r.checking = *spec.host_key_checking;
    } else if (!spec.config_path.empty()) {
        if (auto word = ssh_config_lookup(spec.config_path, spec.host, "StrictHostKeyChecking")) {
            auto mode = parse_host_key_checking(*word);
            if (!mode)
                throw config_error("StrictHostKeyChecking " + *word + " in " + spec.config_path +
                                       " is not supported",
                                   "use yes, accept-new or no");
            r.checking = *mode;
        }
    }
    // libssh ignores these two: mlt sends the keepalives itself (Liveness).
    r.alive_interval_s = config_number(spec, spec.alive_interval_s, "ServerAliveInterval", 10);
    r.alive_count_max = config_number(spec, spec.alive_count_max, "ServerAliveCountMax", 2);

    set_option(raw, SSH_OPTIONS_USER, r.user.c_str(), "user");
    set_option(raw, SSH_OPTIONS_PORT, &r.port, "port");
    set_option(raw, SSH_OPTIONS_KNOWNHOSTS, r.known_hosts.c_str(), "known hosts");
    // We check host keys ourselves; this keeps a config's `StrictHostKeyChecking no` from
    // silently turning an unknown key into an accepted one inside libssh.
    int strict = 1;
    set_option(raw, SSH_OPTIONS_STRICTHOSTKEYCHECK, &strict, "strict host key checking");
    // Ciphers: -o, then the ssh config's (already parsed into the session), then mlt's order.
    std::string ciphers = spec.ciphers;
    const bool config_has_ciphers =
        !spec.config_path.empty() &&
        ssh_config_lookup(spec.config_path, spec.host, "Ciphers").has_value();
    if (ciphers.empty() && !config_has_ciphers) ciphers = preferred_ciphers();
    if (!ciphers.empty()) {
        if (ssh_options_set(raw, SSH_OPTIONS_CIPHERS_C_S, ciphers.c_str()) != SSH_OK ||
            ssh_options_set(raw, SSH_OPTIONS_CIPHERS_S_C, ciphers.c_str()) != SSH_OK)
            throw config_error("unsupported Ciphers list '" + ciphers + "': " + last_error(raw),
                               "name ciphers that libssh knows, e.g. aes128-gcm@openssh.com");
    }
    int nodelay = 1;
    set_option(raw, SSH_OPTIONS_NODELAY, &nodelay, "nodelay");
    long timeout = spec.connect_timeout_s > 0 ? spec.connect_timeout_s : 15;
    set_option(raw, SSH_OPTIONS_TIMEOUT, &timeout, "timeout");
    if (spdlog::should_log(spdlog::level::trace)) {
        int verbosity = SSH_LOG_PROTOCOL;
        ssh_options_set(raw, SSH_OPTIONS_LOG_VERBOSITY, &verbosity);
    }
    r.host_port = r.port == 22 ? r.hostname : "[" + r.hostname + "]:" + std::to_string(r.port);
    r.display = r.user + "@" + r.hostname + ":" + std::to_string(r.port);
    return r;
}

}  // namespace

struct Connector::Impl {
    ConnectSpec spec;
    Resolved resolved;
    std::unique_ptr<Authenticator> auth;
    std::string fingerprint;  // of the first session's host key
};

Connector::Connector(const ConnectSpec& spec) : impl_(std::make_unique<Impl>()) {
    impl_->spec = spec;
    SessionPtr probe(ssh_new());
    if (!probe)
        throw Error(ErrorKind::internal, exit_code::kConnection, "cannot create an ssh session");
    impl_->resolved = configure(probe.get(), spec);
    // The key is checked (and its passphrase asked) before any network traffic.
    KeyPtr key;
    if (!impl_->resolved.identity.empty()) key = load_private_key(impl_->resolved.identity);
    impl_->auth = std::make_unique<Authenticator>(std::move(key), impl_->resolved.identity,
                                                  spec.password, home_dir() + "/.ssh");
}

Connector::~Connector() {
    if (impl_ && impl_->spec.password) wipe(*impl_->spec.password);
}

const std::string& Connector::display_name() const {
    return impl_->resolved.display;
}

Session Connector::open() {
    auto impl = std::make_unique<Session::Impl>();
    impl->session.reset(ssh_new());
    if (!impl->session)
        throw Error(ErrorKind::internal, exit_code::kConnection, "cannot create an ssh session");
    ssh_session raw = impl->session.get();
    // libssh keeps these pointers: they live in the Impl, beside the session.
    ssh_set_counters(raw, &impl->live.tx, &impl->live.rx);
    const Resolved r = configure(raw, impl_->spec);
    impl->display = r.display;
    impl->live.interval_s = r.alive_interval_s;
    impl->live.count_max = r.alive_count_max;
    spdlog::debug("connecting to {} (host {}, config {}, known_hosts {}, key {})", r.display,
                  impl_->spec.host, impl_->spec.config_path.empty() ? "-" : impl_->spec.config_path,
                  r.known_hosts, r.identity.empty() ? "auto" : r.identity);

    if (ssh_connect(raw) != SSH_OK)
        throw connect_error("cannot connect to " + r.hostname + " port " + std::to_string(r.port) +
                                ": " + last_error(raw),
                            "check the host and port, and that sshd runs there");
    verify_host_key(raw, r.checking, r.known_hosts, r.host_port);
    const std::string fingerprint = server_fingerprint(raw, nullptr);
    if (!impl_->fingerprint.empty() && fingerprint != impl_->fingerprint)
        throw Error(ErrorKind::host_key, exit_code::kHostKey,
                    "host key of " + r.host_port +
                        " changed between two connections of this run (" + impl_->fingerprint +
                        ", now " + fingerprint + ")",
                    "someone may be in the middle; check the host before you go on");
    impl_->fingerprint = fingerprint;
    impl->fingerprint = fingerprint;
    // From here on every blocking call gives control back within kCallTimeoutS, so a silent
    // link is noticed by the keepalives instead of blocking for the connect timeout.
    long call_timeout = kCallTimeoutS;
    set_option(raw, SSH_OPTIONS_TIMEOUT, &call_timeout, "timeout");
    impl->live.last_rx = std::chrono::steady_clock::now();
    impl_->auth->authenticate(raw, impl->live, r.display);
    spdlog::debug("authenticated to {} (cipher {} out, {} in)", r.display,
                  ssh_get_cipher_out(raw) ? ssh_get_cipher_out(raw) : "?",
                  ssh_get_cipher_in(raw) ? ssh_get_cipher_in(raw) : "?");
    return Session(std::move(impl));
}

Session Session::open(const ConnectSpec& spec) {
    Connector connector(spec);
    return connector.open();
}

}  // namespace mlt
