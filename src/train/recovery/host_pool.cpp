// HostPool: the standby hosts a run continues on when its host is lost (fallback_hosts, then
// provision_cmd), each with a connection and a job of its own.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>

#include "mlt/train/recovery/failover.h"
#include "mlt/util/error.h"
#include "mlt/util/process.h"
#include "mlt/util/text.h"

namespace mlt {

namespace {

constexpr std::string_view kPriceKey = "price_per_hour=";
constexpr std::string_view kMasterAddrKey = "master_addr=";

// A price as price_per_hour takes it (the settings' bounds).
std::optional<double> parse_price(std::string_view text) {
    return parse_real(text, 0, 1000000);
}

std::vector<std::string_view> words_of(std::string_view text) {
    std::vector<std::string_view> words;
    size_t i = 0;
    while (i < text.size()) {
        while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
        size_t j = i;
        while (j < text.size() && text[j] != ' ' && text[j] != '\t') ++j;
        if (j > i) words.push_back(text.substr(i, j - i));
        i = j;
    }
    return words;
}

}  // namespace

StandbyHost parse_standby_host(std::string_view text, const std::string& where) {
    const auto words = words_of(text);
    const std::string quoted = "'" + std::string(text) + "'";
    if (words.empty() || words.size() > 3)
        throw usage_error(where + ": " + quoted + " is not a host spec",
                          "write [user@]host[:port][/remote_dir], optionally followed by "
                          "price_per_hour=USD and master_addr=ADDR");
    StandbyHost host;
    host.text = std::string(words[0]);
    try {
        host.spec = parse_host_spec(words[0]);
    } catch (const Error& e) {
        throw usage_error(where + ": " + e.what(), e.hint());
    }
    for (size_t i = 1; i < words.size(); ++i) {
        const std::string_view w = words[i];
        if (w.rfind(kPriceKey, 0) == 0 && !host.price_per_hour) {
            host.price_per_hour = parse_price(w.substr(kPriceKey.size()));
            if (host.price_per_hour) continue;
        } else if (w.rfind(kMasterAddrKey, 0) == 0 && host.master_addr.empty() &&
                   w.size() > kMasterAddrKey.size()) {
            host.master_addr = std::string(w.substr(kMasterAddrKey.size()));
            continue;
        }
        throw usage_error(where + ": '" + std::string(w) + "' after the host " + host.text +
                              " is not price_per_hour=USD or master_addr=ADDR (each once)",
                          "e.g. \"" + host.text + " price_per_hour=0.35\"");
    }
    return host;
}

HostPool::HostPool(HostPoolSpec spec, ForwardingConnection& connection)
    : spec_(std::move(spec)), connection_(connection) {}

HostPool::~HostPool() = default;

std::optional<NextHost> HostPool::next(Reporter& reporter) {
    while (auto host = candidate(reporter)) {
        Connection* const before = connection_.pointed();
        auto next = at(*host, reporter);
        if (!next) continue;
        // Known by its name only once connected (an alias of ~/.ssh/config, a default user).
        const auto bad = std::find_if(spec_.excluded.begin(), spec_.excluded.end(),
                                      [&](const auto& e) { return e.first == next->name; });
        if (bad == spec_.excluded.end()) return next;
        if (before) connection_.point_at(*before);  // the run's host stays the one it was
        if (!host->rented_id.empty() && spec_.give_back) spec_.give_back(*host);
        reporter.alert("standby host " + host->text + " is not taken: " + bad->second +
                       (provisions_ > 0 && next_fallback_ >= spec_.fallback_hosts.size()
                            ? " (provision_cmd gave it: it may still bill; release it)"
                            : ""));
    }
    return std::nullopt;
}

void HostPool::exclude(const std::string& host) {
    spec_.excluded.emplace_back(host, "this run left it (watch.on_failure exclude_host)");
}

std::optional<NextHost> HostPool::at(const StandbyHost& host, Reporter& reporter) {
    Target t = spec_.base;
    t.connect.host = host.spec.host;
    t.connect.host_origin = "standby host " + host.text;
    t.connect.user = host.spec.user;
    t.connect.port = host.spec.port;
    t.connect.proxy_keyword.clear();  // the first host's ProxyCommand is not this one's
    t.connect.proxy_value.clear();
    if (!host.known_hosts.empty()) {
        t.connect.known_hosts_path = host.known_hosts;
        t.connect.host_key_checking = HostKeyChecking::accept_new;
    }
    t.remote_dir = host.spec.remote_dir.empty() ? spec_.remote_dir : host.spec.remote_dir;
    auto connection = std::make_unique<SessionConnection>(t.connect);
    try {
        connection->remote();  // connects, checks the host key, logs in
    } catch (const Error& e) {
        if (is_signal(e.kind())) throw;
        reporter.alert("standby host " + host.text + " cannot be used: " + e.what());
        if (!host.rented_id.empty() && spec_.give_back) spec_.give_back(host);
        return std::nullopt;
    }
    auto job = std::make_unique<ShellJob>(*connection, t.remote_dir, spec_.model, spec_.compression,
                                          spec_.transfer_connections);
    connection_.point_at(*connection);
    NextHost next;
    next.name = connection->name();
    next.remote_dir = t.remote_dir;
    next.price_per_hour = host.price_per_hour;
    next.target = t;
    next.master_addr = host.master_addr;
    next.rented_id = host.rented_id;
    std::tie(next.resume_line, next.stop_line) =
        spec_.lines(host.known_hosts.empty() ? host.text : std::string());
    next.job = job.get();
    connections_.push_back(std::move(connection));
    jobs_.push_back(std::move(job));
    return next;
}

bool HostPool::has_more() const {
    return next_fallback_ < spec_.fallback_hosts.size() ||
           (!trim(spec_.provision_cmd).empty() && provisions_ < kMaxProvisions) ||
           (spec_.rent && rentals_ < kMaxProvisions);
}

std::optional<StandbyHost> HostPool::candidate(Reporter& reporter) {
    if (next_fallback_ < spec_.fallback_hosts.size()) return spec_.fallback_hosts[next_fallback_++];
    if (!spec_.provision_cmd.empty() && provisions_ < kMaxProvisions) {
        ++provisions_;
        try {
            return provision(reporter);
        } catch (const Error& e) {
            if (is_signal(e.kind())) throw;
            reporter.alert(std::string(e.what()));
            if (!spec_.rent) return std::nullopt;
        }
    }
    if (!spec_.rent) {
        if (!spec_.provision_cmd.empty())
            reporter.alert("provision_cmd already ran " + std::to_string(kMaxProvisions) +
                           " times in this run; not asking for another host");
        return std::nullopt;
    }
    if (rentals_ >= kMaxProvisions) {
        reporter.alert("this run rented " + std::to_string(kMaxProvisions) +
                       " machines for a failover already; not renting another");
        return std::nullopt;
    }
    ++rentals_;
    try {
        return spec_.rent(reporter);
    } catch (const Error& e) {
        if (is_signal(e.kind())) throw;
        reporter.alert("no machine rented to continue on: " + std::string(e.what()));
        return std::nullopt;
    }
}

// Runs provision_cmd (sh -c, in its own process group, bounded); its last non-empty output
// line is the host.
StandbyHost HostPool::provision(Reporter& reporter) {
    reporter.notice("running provision_cmd for a new host: " + spec_.provision_cmd);
    std::string last;
    const ChildResult r =
        run_child({"sh", "-c", spec_.provision_cmd}, std::chrono::seconds(kProvisionTimeoutS),
                  [&](const std::string& line) {
                      spdlog::debug("provision_cmd: {}", line);
                      if (!trim(line).empty()) last = trim(line);
                  });
    const std::string what = "provision_cmd (" + spec_.provision_cmd + ")";
    if (!r.started || r.timed_out || r.exit_code != 0)
        throw Error(
            ErrorKind::remote,
            what +
                (r.timed_out ? " did not end within " + std::to_string(kProvisionTimeoutS) + " s"
                             : " failed with exit status " + std::to_string(r.exit_code)) +
                "; no host to continue on",
            "run it by hand to see why (-v shows its output)");
    if (last.empty())
        throw Error(ErrorKind::remote, what + " printed no host; no host to continue on",
                    "it must print one host spec ([user@]host[:port][/remote_dir]) as its last "
                    "line");
    StandbyHost host = parse_standby_host(last, "the last line of provision_cmd's output");
    reporter.notice("provision_cmd gave the host " + host.text);
    return host;
}

}  // namespace mlt
