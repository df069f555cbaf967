#pragma once
// `mlt ssh ... train MODEL --dry-run`: the plan of a run shown as text, with nothing
// connected to and nothing sent.

#include <string>
#include <vector>

#include "mlt/ssh/destination.h"
#include "mlt/train/recovery/failover.h"
#include "mlt/train/run/target.h"
#include "mlt/train/run/train_plan.h"
#include "mlt/transfer/workspace.h"

namespace mlt {

// One node of a dry run: where it goes, and its run's plan as train works it out.
struct DryRunNode {
    Target target;
    Destination destination;
    TrainPlan plan;
    std::string workspace;              // the directory synced; empty: none
    std::vector<LeftOutFile> left_out;  // what the workspace and upload_files leave out
};

// Everything a dry run shows.
struct DryRun {
    std::vector<DryRunNode> nodes;  // by rank; never empty
    // Parsed as train parses them; empty with --no-failover or several nodes (unused then).
    std::vector<StandbyHost> fallback_hosts;
    std::string provision_cmd;
    std::string master_addr;  // several nodes: the settings' nodes.master_addr/port
    int master_port = 0;
};

// The plan as plain text, one section per heading (a line of its own, its lines indented by
// two spaces): hosts, uploads with sizes and what is left out, the commands, the environment
// (values hidden), limits, rules, sync, failover and notifications (URLs masked). Sizes are
// read from the local files ("?" for one that cannot be read). Never throws for a plan that
// train accepted.
std::string render_dry_run(const DryRun& run);

}  // namespace mlt
