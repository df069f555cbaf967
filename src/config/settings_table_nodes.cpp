// The rows of the `nodes` and `transfer` mappings, and how a layer's value of each applies.
#include <string>
#include <utility>

#include "settings_rows.h"

namespace mlt::settings_detail {

using namespace rows;

void merge_nodes(Value&& value, SshSettings& settings) {
    auto& nodes = std::get<NodesValue>(value);
    if (nodes.master_addr) settings.master_addr = *nodes.master_addr;
    if (nodes.master_port) settings.master_port = *nodes.master_port;
    if (nodes.hosts) settings.node_hosts = std::move(*nodes.hosts);  // a list replaces
    if (nodes.count) settings.node_count = *nodes.count;
}

void merge_transfer(Value&& value, SshSettings& settings) {
    const auto& transfer = std::get<NodesValue>(value);
    if (transfer.connections)
        settings.transfer_connections =
            *transfer.connections == "auto" ? 0 : std::stoi(*transfer.connections);
    if (transfer.min_rate) settings.transfer_min_rate = *transfer.min_rate;
    if (transfer.stall_seconds) settings.transfer_stall_seconds = *transfer.stall_seconds;
}

const std::vector<FieldDecl>& nodes_fields() {
    static const std::vector<FieldDecl> kFields = {
        list("hosts", "[\"root@10.0.0.5:22/work\", \"root@10.0.0.6:22/work\"]",
             "one host spec per node, `[user@]host[:port][/remote_dir]`, rank 0 first: `train` "
             "runs on all of them when no `-h` is given; each host takes the `connection` entry "
             "at its index for user, key and secrets (a single `connection` mapping serves "
             "every node)",
             nullptr),
        integer("count", "`1`", "2",
                "the nodes `provider:` rents when no host is given: one machine each "
                "(docs/providers.md)",
                1, 64, nullptr),
        text("master_addr", "see the doc", "\"10.0.0.5\"",
             "`MASTER_ADDR` exported to every node: rank 0's address as the others reach it; "
             "empty: 127.0.0.1 when every node is on loopback, else the first address rank 0 "
             "reports (`hostname -I`; a HostName is often an ssh proxy, so it is never used)",
             nullptr),
        integer("master_port", "`0`", "29500",
                "`MASTER_PORT` exported to every node; 0: a free port found on rank 0", 0, 65535,
                nullptr),
    };
    return kFields;
}

const std::vector<FieldDecl>& transfer_fields() {
    static const std::vector<FieldDecl> kFields = {
        choice("connections", {"auto", "1", "2", "3", "4", "5", "6", "7", "8"}, "`auto`", "4",
               "SSH connections (the run's own included) a file of 32 MiB or more moves over, as "
               "ranges side by side (as `--connections`): `auto` opens the channels, streams and "
               "connections that pay for the host's login cost (measured on its first channel; "
               "docs/architecture.md, \"What a channel costs\"), starting with 2 connections "
               "where they pay and doubling them while the rate still gains 10 % and the time "
               "saved exceeds the new logins, up to 8; over a near link (round trip under 16 ms) "
               "at most one per two local cores (1 to 8), and ranges only from 256 MiB; N: N "
               "connections and the fixed counts of channels and streams; a connection the "
               "server refuses (MaxStartups) is no error",
               nullptr),
        integer("min_rate", "`65536`", "16384",
                "the floor under every data stream (a tar stream, a range, a file fetch), in "
                "bytes per second: one that moves fewer than `min_rate` x `stall_seconds` bytes "
                "over the last `stall_seconds` (judged once it has run that long; the streams "
                "side by side on one connection count together, stderr not at all) ends with "
                "an error that says it stalled or trickled, and a connection of several whose "
                "ranges stall gives them to the others; 0: no floor",
                0, 1073741824, nullptr),
        integer("stall_seconds", "`30`", "60", "the window of `min_rate`, in seconds", 1, 86400,
                nullptr),
    };
    return kFields;
}

}  // namespace mlt::settings_detail
