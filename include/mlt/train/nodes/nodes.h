#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "mlt/ssh/connection.h"
#include "mlt/train/recovery/failover.h"
#include "mlt/train/run/target.h"
#include "mlt/train/run/train_plan.h"
#include "mlt/util/reporter.h"

namespace mlt {

// Where the nodes of a run meet: rank 0's address as the others reach it, a port on it, and
// every node's address.
struct Rendezvous {
    std::vector<std::string> addrs;  // by rank
    std::string master_addr;
    int master_port = 0;
};

// The variables every node's job gets for the rendezvous, in export order: mlt's own
// (MLT_NODE_RANK, MLT_NUM_NODES, MLT_NODE_ADDRS: the addresses, space-separated), torchrun's
// (NODE_RANK, NNODES, MASTER_ADDR, MASTER_PORT), SkyPilot's and dstack's (their IP lists
// newline-separated, as theirs are).
std::vector<std::pair<std::string, std::string>> node_environment(int rank,
                                                                  const Rendezvous& rendezvous);

// True for 127.0.0.0/8, ::1 and `localhost`.
bool is_loopback_host(const std::string& host);

// Before anything starts, in about 10 s: a listener on rank 0 at MASTER_PORT (python3 there;
// without it the check is skipped with a warning), and every other node connects to
// MASTER_ADDR:MASTER_PORT (bash's /dev/tcp, else python3). Throws mlt::Error naming the
// node, the address and what to check when one cannot; (remote) when the port is taken.
void preflight(std::vector<std::unique_ptr<Connection>>& links, const Rendezvous& rendezvous);

// One node of a multi-node run: how to reach it, and its run's plan as for a single node.
struct NodeSpec {
    Target target;
    TrainPlan plan;
};

// A multi-node run: its nodes by rank, and the rendezvous the settings fix (nodes.master_addr,
// nodes.master_port; empty and 0: found on rank 0).
struct NodesSpec {
    std::vector<NodeSpec> nodes;
    std::string master_addr;
    int master_port = 0;
    // Where a lost node's rank goes (fallback_hosts, provision_cmd); none: the gang stops.
    std::optional<HostPoolSpec> standby;
    // Gang restarts in place (every node's host answering) a run may make: max_restarts.
    int max_restarts = 0;
    // The `train --resume` and `stop` lines with `hosts` as the -h list (a node moved); none:
    // the nodes' own lines stay.
    std::function<std::pair<std::string, std::string>(const std::vector<std::string>& hosts)> lines;
    // A new run's id, chosen before (its rented machines are labelled with it); empty: the
    // gang picks one.
    std::string run_id;
};

// Checks the nodes before any remote action (two the same host and remote dir: exit 2),
// connects to every node, finds the rendezvous, then runs one TrainRun per node side by side
// (one thread each, the output of each prefixed "[rank N] "): uploads in parallel, the
// training started on every node only once every node is set up, a failing node stopping
// the others. Returns the first failing node's exit code, else 0 (docs/multi-node.md).
int run_train_nodes(NodesSpec spec);

// One node's part of a multi-node command, in its own thread: `body`'s exit code, or an
// Error's code after one line `error: WHAT (HINT)` to the node's `out`. `out` passes on the
// node's last, unfinished line first.
// `kind`, when given, gets the Error's kind.
int node_outcome(PrefixReporter& out, const std::function<int()>& body,
                 std::optional<ErrorKind>* kind = nullptr);

}  // namespace mlt
