#pragma once
// What nodes.cpp (the rendezvous, the barrier, one pass of the gang's runs) and gang_run.cpp
// (the run from start to end: resumes and restarts) share. Not a public header.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mlt/ssh/connection.h"
#include "mlt/train/nodes/gang.h"
#include "mlt/train/nodes/nodes.h"
#include "mlt/train/run/train_run.h"

namespace mlt {

using Links = std::vector<std::unique_ptr<Connection>>;

// How one pass of the gang's runs went.
struct GangPass {
    std::optional<Gang::Failure> failure;
    bool stopped = false;             // a node's job was stopped because another node failed
    std::vector<Gang::Cause> causes;  // by rank: why each failed (none: it did not)
    std::string limit;                // a limit a node's run reached (its words); empty: none
    bool left = false;                // mlt left a node's run on a signal, as it was
    bool held = false;                // a node held its shutdown_cmds for a restart
    std::vector<int> codes;           // by rank: its run's exit code
};

// Two nodes the same host and dir, a loopback master_addr for nodes elsewhere: exit 2.
void check_nodes(const NodesSpec& spec);

// The rendezvous of the nodes `links` reach (said in one line, and checked: preflight), and
// `placed`: `unplaced` with each node's rendezvous variables and local dirs (nodes/<rank>).
Rendezvous meet_nodes(const NodesSpec& unplaced, NodesSpec& placed, Links& links);

// One pass: a TrainRun per node in `include` (every node when empty), each in a thread, set
// up by `prepare`; with `prefail`, the gang has failed before it begins (a --resume that
// stops what runs on, to restart every node together). `rule`: what may restart the gang after
// this pass (the nodes keep their shutdown_cmds for it).
GangPass run_gang_pass(NodesSpec& spec, Links& links, const std::string& run_id,
                       const std::vector<bool>& include,
                       const std::function<void(TrainRun&)>& prepare,
                       const std::optional<Gang::Failure>& prefail, Gang::RestartRule rule = {});

// Rank 0's logs also go into the log dir itself, as for a single node.
void copy_rank0_logs(const std::string& from, const std::string& to);

// The last `n` lines of a local file.
std::string tail_of_file(const std::string& path, size_t n);

}  // namespace mlt
