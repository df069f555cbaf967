// Connector and Session::open: a connect spec resolved once, then each session connected,
// its host key checked and its user authenticated.
#include "mlt/ssh/session.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <optional>

#include "auth.h"
#include "channel_io.h"
#include "configure.h"
#include "host_keys.h"
#include "mlt/ssh/counts.h"
#include "mlt/util/paths.h"
#include "mlt/util/terminal.h"
#include "proxy.h"
#include "session_impl.h"

namespace mlt {

using namespace ssh_detail;

namespace {

Error connect_error(std::string what, std::string hint = {}) {
    return Error(ErrorKind::connect, std::move(what), std::move(hint));
}

// A private file (0600) that receives a ProxyJump's `ssh` stderr while it connects; removed
// on destruction (the running ssh keeps writing to its open descriptor, into nothing).
class StderrFile {
  public:
    StderrFile() {
        const char* tmp = std::getenv("TMPDIR");
        path_ = std::string(tmp && *tmp ? tmp : "/tmp") + "/mlt-proxy-XXXXXX";
        const int fd = ::mkstemp(path_.data());
        if (fd < 0)
            throw io_error("cannot create a temporary file in " + path_.substr(0, path_.rfind('/')),
                           "check TMPDIR");
        ::close(fd);
    }
    ~StderrFile() { ::unlink(path_.c_str()); }
    StderrFile(const StderrFile&) = delete;
    StderrFile& operator=(const StderrFile&) = delete;
    const std::string& path() const { return path_; }
    std::string text() const {
        try {
            return read_file(path_);
        } catch (const Error&) {
            return {};  // nothing to tell: the caller falls back to libssh's error
        }
    }

  private:
    std::string path_;
};

// Asks for the authentication service on its own (libssh's first authentication call would
// ask for it anyway, so it costs no round trip): the server answers at once, which makes
// its answer a clean first measure of the link's round trip, taken before any decision that
// depends on it. The first authentication call otherwise waits for two round trips, and the
// first channel open's answer can wait for a delayed ACK (41 ms over loopback). A failed
// request is left to the authentication calls, which report it.
void measure_round_trip(ssh_session s, Liveness& live, const std::string& display) {
    const auto asked = std::chrono::steady_clock::now();
    int rc;
    while ((rc = ssh_service_request(s, "ssh-userauth")) == SSH_AGAIN && ssh_is_connected(s))
        live.check(s, display);
    if (rc != SSH_OK) return;
    live.saw_reply(asked);
    spdlog::trace("round trip to {}: {:.1f} ms (the authentication service's answer)", display,
                  live.fastest_reply_s * 1e3);
}

// LoginFacts::host_key of a verdict.
const char* verdict_word(HostKeyVerdict verdict) {
    switch (verdict) {
        case HostKeyVerdict::known:
            return "known";
        case HostKeyVerdict::recorded:
            return "recorded";
        case HostKeyVerdict::unverified:
            return "unverified";
        case HostKeyVerdict::changed:
            break;
    }
    return "changed";
}

}  // namespace

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Session::Session(Session&&) noexcept = default;
Session& Session::operator=(Session&&) noexcept = default;
Session::~Session() = default;

const std::string& Session::display_name() const {
    return impl_->display;
}

double Session::round_trip_s() const {
    return impl_->live.fastest_reply_s;
}

double Session::login_cost_s() const {
    return impl_->login_cost_s;
}

struct Connector::Impl {
    ConnectSpec spec;
    Resolved resolved;
    std::unique_ptr<Authenticator> auth;
    std::string fingerprint;  // of the first session's host key
    // The first open may ask (a password, a passphrase, an unknown host key) and records what
    // worked: it runs alone. Once one succeeded, opens only read that and run side by side.
    std::mutex first_open;
    std::atomic<bool> opened{false};
    // The channel listener one of its sessions started (listener.cpp).
    std::shared_ptr<SharedListener> listener = std::make_shared<SharedListener>();
};

Connector::Connector(const ConnectSpec& spec) : impl_(std::make_unique<Impl>()) {
    impl_->spec = spec;
    SessionPtr probe(ssh_new());
    if (!probe) throw Error(ErrorKind::internal, "cannot create an ssh session");
    impl_->resolved = configure(probe.get(), spec);
    for (const auto& w : impl_->resolved.config_warnings) spdlog::warn("{}", w);
    for (const auto& u : impl_->resolved.unused_config)
        spdlog::debug("ssh config: {} is not used by mlt", u);
    if (!impl_->resolved.proxy_command.empty()) {
        spdlog::debug("connecting through {}: {}", impl_->resolved.proxy_origin,
                      impl_->resolved.proxy_command);
        // libssh write()s to a proxy's socket (no MSG_NOSIGNAL): main() ignores SIGPIPE, so
        // a proxy that ended gives the connect error, not a silent exit 141.
    }
    AuthOptions options;
    options.password = spec.password;
    options.key_secrets.password = spec.password;
    options.key_secrets.passphrase = spec.passphrase;
    options.look_for_keys = spec.look_for_keys;
    options.allow_agent = spec.allow_agent;
    // The key is checked (and its passphrase asked) before any network traffic.
    KeyPtr key;
    if (!impl_->resolved.identity.empty())
        key = load_private_key(impl_->resolved.identity, options.key_secrets);
    impl_->auth = std::make_unique<Authenticator>(std::move(key), impl_->resolved.identity,
                                                  std::move(options), home_dir() + "/.ssh");
}

Connector::~Connector() {
    if (!impl_) return;
    if (impl_->spec.password) wipe(*impl_->spec.password);
    if (impl_->spec.passphrase) wipe(*impl_->spec.passphrase);
}

const LoginFacts& Session::login_facts() const {
    return impl_->login;
}

const std::string& Connector::display_name() const {
    return impl_->resolved.display;
}

Session Connector::open() {
    std::unique_lock<std::mutex> alone(impl_->first_open, std::defer_lock);
    if (!impl_->opened.load()) alone.lock();
    auto impl = std::make_unique<Session::Impl>();
    impl->shell.shared_listener = impl_->listener;
    impl->session.reset(ssh_new());
    if (!impl->session) throw Error(ErrorKind::internal, "cannot create an ssh session");
    ssh_session raw = impl->session.get();
    // libssh keeps these pointers: they live in the Impl, beside the session.
    ssh_set_counters(raw, &impl->live.tx, &impl->live.rx);
    const Resolved r = configure(raw, impl_->spec);
    impl->display = r.display;
    impl->data_floor = impl_->spec.data_floor;
    impl->live.interval_s = r.alive_interval_s;
    impl->live.count_max = r.alive_count_max;
    spdlog::debug(
        "connecting to {} (host {}, config {}, known_hosts {}, key {}, connect timeout {} s)",
        r.display, impl_->spec.host,
        impl_->spec.config_path.empty() ? "-" : impl_->spec.config_path, r.known_hosts,
        r.identity.empty() ? "auto" : r.identity, r.connect_timeout_s);

    std::optional<StderrFile> proxy_stderr;
    if (!r.proxy_command.empty()) {
        if (r.proxy_is_jump) proxy_stderr.emplace();
        const std::string command =
            libssh_proxy_command(r.proxy_command, proxy_stderr ? proxy_stderr->path() : "");
        if (ssh_options_set(raw, SSH_OPTIONS_PROXYCOMMAND, command.c_str()) != SSH_OK)
            throw config_error("libssh refused the " + r.proxy_origin + " (" + command +
                               "): " + last_error(raw));
    }
    if (ssh_connect(raw) != SSH_OK) {
        if (!r.proxy_command.empty())
            throw proxy_failure(r, proxy_stderr ? proxy_stderr->text() : "", last_error(raw));
        throw connect_error("cannot connect to " + r.hostname + " port " + std::to_string(r.port) +
                                ": " + last_error(raw),
                            "check the host and port, and that sshd runs there");
    }
    ssh_detail::count_connection();
    if (proxy_stderr) {
        const std::string said = proxy_stderr->text();
        if (!said.empty()) spdlog::debug("ssh for the jump said: {}", said);
    }
    // A reconnect must reach the server of the first connection, whatever known_hosts says
    // (checked first, so that nothing is recorded for another key).
    std::string key_type;
    const std::string fingerprint = server_fingerprint(raw, &key_type);
    const bool first = impl_->fingerprint.empty();
    if (!first && fingerprint != impl_->fingerprint)
        throw Error(ErrorKind::host_key,
                    "host key of " + r.host_port +
                        " changed between two connections of this run (" + impl_->fingerprint +
                        ", now " + fingerprint + ")",
                    "someone may be in the middle; check the host before you go on");
    const HostKeyVerdict verdict = verify_host_key(raw, r, first);
    if (first) impl_->fingerprint = fingerprint;
    impl->fingerprint = fingerprint;
    // From here on every blocking call gives control back within kCallTimeoutS, so a silent
    // link is noticed by the keepalives instead of blocking for the connect timeout.
    long call_timeout = kCallTimeoutS;
    if (ssh_options_set(raw, SSH_OPTIONS_TIMEOUT, &call_timeout) != SSH_OK)
        throw Error(ErrorKind::internal, "cannot set the ssh call timeout: " + last_error(raw));
    impl->live.last_rx = std::chrono::steady_clock::now();
    measure_round_trip(raw, impl->live, r.display);
    impl_->auth->authenticate(raw, impl->live, r.display, verdict == HostKeyVerdict::changed);
    impl_->opened = true;
    impl->login = {verdict_word(verdict), key_type, fingerprint, r.known_hosts,
                   impl_->auth->method_words()};
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
