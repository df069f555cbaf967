// The nodes of a command: -h/-p/-i/-o of the command line over the settings, one Target each.
#include "mlt/commands/targets.h"

#include <algorithm>
#include <cctype>

#include "mlt/config/host_spec.h"
#include "mlt/config/ssh_config.h"
#include "mlt/provider/run_rental.h"
#include "mlt/util/error.h"
#include "mlt/util/paths.h"
#include "mlt/util/text.h"

namespace mlt {

namespace {

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

int parse_int_option(const std::string& name, const std::string& value, int lo, int hi) {
    if (const auto v = parse_decimal(value, lo, hi)) return static_cast<int>(*v);
    throw usage_error("-o " + name + "=" + value + ": expected a decimal number from " +
                      std::to_string(lo) + " to " + std::to_string(hi));
}

HostKeyChecking parse_checking(const std::string& value) {
    if (auto mode = parse_host_key_checking(value)) return *mode;
    throw usage_error("-o StrictHostKeyChecking=" + value + ": expected yes, accept-new or no");
}

// Applies OpenSSH-style `-o Key=Value` (or `Key Value`) options to one target.
void apply_ssh_option(const std::string& option, Target& t) {
    auto sep = option.find_first_of("= ");
    if (sep == std::string::npos || sep == 0)
        throw usage_error("-o " + option + ": expected Key=Value",
                          "e.g. -o StrictHostKeyChecking=yes");
    const std::string typed = option.substr(0, sep);  // for messages, as the user wrote it
    const std::string key = lower(typed);
    const std::string value = option.substr(sep + 1);
    if (key == "stricthostkeychecking")
        t.connect.host_key_checking = parse_checking(value);
    else if (key == "userknownhostsfile")
        t.connect.known_hosts_path = value;
    else if (key == "connecttimeout")
        t.connect.connect_timeout_s = parse_int_option(typed, value, 1, 86400);
    else if (key == "port")
        t.connect.port = parse_int_option(typed, value, 1, 65535);
    else if (key == "user")
        t.connect.user = value;
    else if (key == "identityfile")
        t.connect.identity_file = value;
    else if (key == "ciphers")
        t.connect.ciphers = value;
    else if (key == "serveraliveinterval")
        t.connect.alive_interval_s = parse_int_option(typed, value, 0, 86400);
    else if (key == "serveralivecountmax")
        t.connect.alive_count_max = parse_int_option(typed, value, 0, 1000);
    else if (key == "proxycommand" || key == "proxyjump") {
        if (value.empty()) throw usage_error("-o " + typed + "=: no value", "use none for none");
        if (t.connect.proxy_keyword.empty()) {  // as ssh, the first one given wins
            t.connect.proxy_keyword = key == "proxyjump" ? "ProxyJump" : "ProxyCommand";
            t.connect.proxy_value = value;
        }
    } else
        throw usage_error("-o " + option + ": unsupported option",
                          "supported: StrictHostKeyChecking, UserKnownHostsFile, ConnectTimeout, "
                          "Port, User, IdentityFile, Ciphers, ServerAliveInterval, "
                          "ServerAliveCountMax, ProxyCommand, ProxyJump");
}

// The hosts to run on, each with the index of the connection entry whose user, key and
// secrets it takes: -h first, else nodes.hosts, else the hostnames of the connection entries.
// The i-th host pairs with the i-th entry, and a single entry serves every host. From the
// connection entries, one without a hostname is skipped, and the next host still takes its
// own entry's password, never its neighbour's.
struct HostList {
    std::vector<HostSpec> hosts;
    std::vector<size_t> entry;
    std::string origin;
};

HostList collect_hosts(const SshCommandLine& cli, const SshSettings& settings) {
    HostList out;
    const size_t entries = settings.connections.size();
    const auto add = [&](HostSpec spec, size_t index) {
        out.hosts.push_back(std::move(spec));
        out.entry.push_back(entries == 1 ? 0 : index);
    };
    if (!cli.hosts.empty()) {
        out.origin = "from -h";
        for (const auto& h : cli.hosts) add(parse_host_spec(h), out.hosts.size());
    } else if (!settings.node_hosts.empty()) {
        out.origin = "from nodes.hosts";
        for (const auto& h : settings.node_hosts) {
            try {
                add(parse_host_spec(h), out.hosts.size());
            } catch (const Error& e) {
                throw config_error("nodes.hosts: " + std::string(e.what()), e.hint());
            }
        }
    } else {
        out.origin = "from ssh.connection.hostname";
        for (size_t i = 0; i < entries; ++i) {
            if (settings.connections[i].hostname.empty()) continue;
            HostSpec spec;
            spec.host = settings.connections[i].hostname;
            add(spec, i);
        }
    }
    if (out.hosts.empty() && settings.provider.on()) {
        // The run rents its machine (docs/providers.md); a job command finds it.
        out.origin = "rented from " + settings.provider.name;
        HostSpec rented;
        rented.host = std::string(kRentedHost);
        for (int rank = 0; rank < settings.node_count; ++rank) add(rented, 0);
    }
    if (out.hosts.empty())
        throw usage_error("no host given",
                          "use -h [user@]host[:port][/remote_dir], or set ssh.connection.hostname");
    return out;
}

}  // namespace

std::vector<Target> resolve_targets(const SshCommandLine& cli, const SshSettings& settings) {
    if (!cli.ssh_config.empty()) check_ssh_config_file(cli.ssh_config);
    const HostList list = collect_hosts(cli, settings);
    const std::vector<HostSpec>& hosts = list.hosts;
    const std::vector<size_t>& entry = list.entry;

    std::vector<Target> targets;
    for (size_t i = 0; i < hosts.size(); ++i) {
        const HostSpec& h = hosts[i];
        Target t;
        t.connect.host = h.host;
        t.connect.host_origin = list.origin;
        t.connect.user = h.user;
        // As MLTK: -p beats the host's own :port (mlt ssh -h box:22 -p 2200 uses 2200).
        t.connect.port = cli.port ? cli.port : h.port;
        t.connect.identity_file = cli.identity_file;
        t.connect.password = cli.password;
        if (entry[i] < settings.connections.size()) {
            const auto& c = settings.connections[entry[i]];
            t.connect.fallback_user = c.username;
            t.connect.fallback_port = c.port;
            t.connect.fallback_identity_file = c.key_filename;
            if (!t.connect.password) t.connect.password = c.password;
            t.connect.passphrase = c.passphrase;
            t.connect.fallback_connect_timeout_s = c.timeout_s;
            t.connect.look_for_keys = c.look_for_keys.value_or(true);
            t.connect.allow_agent = c.allow_agent.value_or(true);
        }
        t.connect.config_path =
            expand_user(cli.ssh_config.empty() ? settings.config_path : cli.ssh_config);
        t.connect.fallback_host_key_checking = settings.host_key_checking;
        t.connect.data_floor = {static_cast<uint64_t>(settings.transfer_min_rate),
                                static_cast<double>(settings.transfer_stall_seconds)};
        for (const auto& o : cli.ssh_options) apply_ssh_option(o, t);
        t.remote_dir = h.remote_dir.empty() ? settings.remote_dir : h.remote_dir;
        if (t.remote_dir.empty()) t.remote_dir = ".";
        targets.push_back(std::move(t));
    }
    return targets;
}

}  // namespace mlt
