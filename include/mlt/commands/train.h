#pragma once
// `mlt ssh ... train`: its options and the whole train flow.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "mlt/commands/targets.h"

namespace mlt {

// The options of `mlt ssh ... train MODEL [ARGS...]`.
struct TrainOptions {
    std::string model;
    std::vector<std::string> args;  // passed through to the training command, in order;
                                    // `--test` among them trains the test model (as MLTK)
    bool clean = false;
    bool force = false;
    bool resume = false;
    bool no_wait = false;
    bool verbose = false;
    bool raw_console = false;  // --raw-console: console bytes pass unfiltered
    std::string workspace;     // --workspace DIR (relative to the cwd); overrides ssh.workspace
    std::optional<int> reconnect_timeout;  // --reconnect-timeout; overrides the setting
    std::optional<int> max_restarts;       // --max-restarts; overrides the setting
    bool restore = false;                  // --restore
    bool no_failover = false;              // --no-failover
    bool rent = false;                     // --rent: a provider's machine, whatever host is given
    std::optional<double> price;           // --price USD per hour; overrides price_per_hour
    double max_hours = 0;                  // --max-hours; 0: no limit
    double max_cost = 0;                   // --max-cost USD; 0: no limit
    std::optional<int> sync_every;         // --sync-every; overrides the setting
    std::optional<int> connections;        // --connections (0: auto); overrides the setting
    bool dry_run = false;                  // --dry-run: the plan shown, nothing remote
};

// The whole train flow for one node (docs/architecture.md); returns the exit code (the
// training's own status when it failed).
int run_train(const SshCommandLine& cli, const TrainOptions& options);

// The packages a new venv gets when venv_packages is not set, as MLTK installs them: wheel
// and silabs-mltk pinned to `local_mltk_version`, then (the second list, tried when the first
// fails) the latest; without a local version, only the latest.
std::pair<std::vector<std::string>, std::vector<std::string>> default_venv_packages(
    const std::string& local_mltk_version);

}  // namespace mlt
