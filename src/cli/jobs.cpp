// `mlt jobs [--json] [--all]`
#include <memory>

#include "mlt/cli/commands.h"
#include "mlt/train/local/history.h"

namespace mlt::cli {

void add_jobs_command(CLI::App& app, Action& action) {
    auto* cmd = app.add_subcommand("jobs", "List the runs recorded on this machine (newest last)");
    cmd->footer("Examples:\n  mlt jobs\n  mlt jobs --json --all | jq '.[] | .model'");
    auto json = std::make_shared<bool>(false);
    auto all = std::make_shared<bool>(false);
    cmd->add_flag("--json", *json, "Print JSON instead of a table");
    cmd->add_flag("--all", *all, "All runs, not only the last 20");
    cmd->callback([&action, json, all] { action = [json, all] { return run_jobs(*json, *all); }; });
}

}  // namespace mlt::cli
