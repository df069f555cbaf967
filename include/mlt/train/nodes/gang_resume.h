#pragma once

#include <optional>
#include <string>
#include <vector>

#include "mlt/job/status.h"

namespace mlt {

// What a --resume of a multi-node run does, from what every node holds (docs/multi-node.md,
// "Resuming").
struct GangResume {
    std::string run_id;
    // Every node holds the run's lock and none lost its job: each is adopted as for a single
    // node (followed, collected), the gang as it was.
    bool adopt_all = false;
    // The nodes adopted first (their lock is held): finished ones are collected, running ones
    // stopped by the gang and collected. With adopt_all, every node.
    std::vector<bool> settle;
    // A rank was lost (its job gone without an exit status, or no job of the run there) or
    // the gang is split (some nodes ended, some run on): after the settling, every node
    // starts again together as attempt `attempt`, from the checkpoints that came home.
    bool restart = false;
    int attempt = 1;
    int lost_rank = -1;  // the first such rank, or -1
    std::string why;     // "rank 1's job was lost", for the messages
};

// Plans the --resume of `model` from each rank's job (none: no job dir there). Throws
// mlt::Error (conflict, exit 3) when the nodes hold different runs, when no node holds one,
// or when every node's job ended and was collected (nothing to resume: the hint names
// --restore).
// With `run_id` (a gang's restart, which knows its run), a node that holds another run of the
// model without its lock (a standby host that ran the model before) holds no job of the run;
// one that holds another run's lock is a conflict.
// With `restart_why` (a watch.on_failure `restart` of a rank's failed training), every node
// starts again together whatever the nodes hold, for that reason.
GangResume plan_gang_resume(const std::vector<std::optional<JobStatus>>& jobs,
                            const std::string& model, const std::string& run_id = {},
                            const std::string& restart_why = {});

}  // namespace mlt
