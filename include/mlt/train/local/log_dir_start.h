#pragma once
// What a model's local log dir held when a run began: a failover or a gang's restart pushes
// the checkpoints that came home in this run, never an earlier run's left beside them.

#include <optional>
#include <set>
#include <string>

namespace mlt {

// Records, once per run, the files of `log_dir` (relative paths, sizes, mtimes) in
// `<state_dir>/log_dir_at_start` for run `run_id`; with `all_are_this_runs` (a run that began
// with --restore: what is there is what it starts from) it records none. A record of this run
// is kept as it is (a retry, a later attempt). A write that fails is only logged (-v): the
// later push then pushes nothing it cannot tell apart.
void record_log_dir_at_start(const std::string& state_dir, const std::string& run_id,
                             const std::string& log_dir, bool all_are_this_runs);

// The files of `log_dir` that run `run_id` found there when it began and that are unchanged
// (size and mtime): an earlier run's. nullopt when nothing was recorded for this run (another
// machine, an older mlt, a record that cannot be read).
std::optional<std::set<std::string>> earlier_log_files(const std::string& state_dir,
                                                       const std::string& run_id,
                                                       const std::string& log_dir);

}  // namespace mlt
