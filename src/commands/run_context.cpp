// RunContext and the plan of a run: what every job command reads of a model, its nodes
// and the lines that pick a run up again.
#include "run_context.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <thread>
#include <tuple>
#include <utility>

#include "mlt/commands/model.h"
#include "mlt/commands/train_arguments.h"
#include "mlt/job/job.h"
#include "mlt/ssh/session.h"
#include "mlt/train/local/local_state.h"
#include "mlt/train/nodes/nodes.h"
#include "mlt/train/recovery/failover.h"
#include "mlt/train/recovery/on_failure.h"
#include "mlt/train/run/train_run.h"
#include "mlt/transfer/ranges.h"
#include "mlt/transfer/sync.h"
#include "mlt/transfer/transfer.h"
#include "mlt/transfer/workspace.h"
#include "mlt/util/console_filter.h"
#include "mlt/util/error.h"
#include "mlt/util/interrupt.h"
#include "mlt/util/paths.h"
#include "mlt/util/reporter.h"
#include "mlt/util/shell.h"
#include "mlt/util/text.h"

namespace fs = std::filesystem;

namespace mlt {

namespace command_detail {

namespace {

std::string local_owner() {
    char host[256] = "localhost";
    ::gethostname(host, sizeof host - 1);
    const char* user = std::getenv("USER");
    return std::string(user ? user : "user") + "@" + host + " pid " + std::to_string(::getpid());
}

// `mlt ssh <connection options> COMMAND MODEL [extra]`, quoted for the user's shell: the
// command that picks a run up again or stops it. Settings-only values stay in the settings;
// a password is never echoed.
std::string command_line(const SshCommandLine& cli, const std::string& command,
                         const std::string& model, const std::vector<std::string>& extra) {
    std::vector<std::string> words{"mlt", "ssh"};
    for (const auto& h : cli.hosts) words.insert(words.end(), {"-h", h});
    if (cli.port) words.insert(words.end(), {"-p", std::to_string(cli.port)});
    if (!cli.identity_file.empty()) words.insert(words.end(), {"-i", cli.identity_file});
    for (const auto& o : cli.ssh_options) words.insert(words.end(), {"-o", o});
    if (!cli.ssh_config.empty()) words.insert(words.end(), {"-F", cli.ssh_config});
    words.insert(words.end(), {command, model});
    words.insert(words.end(), extra.begin(), extra.end());
    return shell_join(words);
}

}  // namespace

// The `train MODEL --resume` and `stop MODEL` lines for `cli`'s hosts: MODEL as typed, so a
// spec path still finds its spec; --test keeps the test model.
std::pair<std::string, std::string> resume_and_stop_lines(const SshCommandLine& cli,
                                                          const std::string& model_arg, bool test) {
    std::vector<std::string> test_flag;
    if (test) test_flag.push_back("--test");
    std::vector<std::string> resume = test_flag;
    resume.push_back("--resume");
    return {command_line(cli, "train", model_arg, resume),
            command_line(cli, "stop", model_arg, test_flag)};
}

// remote_log_dir for one node: placeholders are plain text substitutions, the result is one
// path. Empty: the job finds the log dir on the remote (the remote MLTK's).
std::string node_log_dir(const std::string& setting, const std::string& model,
                         const std::string& remote_dir) {
    std::string log_dir = setting;
    for (const auto& [key, value] : std::vector<std::pair<std::string, std::string>>{
             {"{model}", model}, {"{remote_dir}", remote_dir}})
        for (size_t at; (at = log_dir.find(key)) != std::string::npos;)
            log_dir.replace(at, key.size(), value);
    return log_dir;
}

// `several`: train, logs and stop take several nodes; download works on one.
RunContext context_of(ModelSettings m, const SshCommandLine& cli, bool several) {
    RunContext c;
    c.model = std::move(m.model);
    c.settings = std::move(m.settings);
    if (m.targets.size() != 1 && !several && !cli.hosts.empty())
        throw usage_error("download works on one node, and -h is given " +
                              std::to_string(m.targets.size()) + " times",
                          "give the -h of the node to download from");
    if (m.targets.size() != 1 && !several)
        throw usage_error("the settings' ssh.connection lists " + std::to_string(m.targets.size()) +
                              " connections; download works on one node",
                          "pick the host with -h");
    c.target = m.targets.front();
    c.targets = m.targets;
    const std::string& name = c.model.name;
    c.archive = name + ".mltk.zip";
    c.remote_log_dir = node_log_dir(c.settings.remote_log_dir, name, c.target.remote_dir);
    c.local_logs = local_log_dir(name);
    // MLTK's name for the console log of `mltk ssh train`.
    c.local_console = c.local_logs + "/" + kConsoleLogPrefix + name + ".log";
    std::error_code ec;
    c.local_dir = c.model.spec_dir.empty() ? fs::current_path(ec).string() : c.model.spec_dir;
    c.local_archive = c.local_dir + "/" + c.archive;
    return c;
}

RunContext prepare(const SshCommandLine& cli, const std::string& model_arg, bool test,
                   bool spec_optional, bool several, std::shared_ptr<SpecLoadAhead> ahead,
                   bool may_rent) {
    return context_of(
        resolve_model_settings(cli, model_arg, test, spec_optional, std::move(ahead), may_rent),
        cli, several);
}

// What collection and the run engine need to know of a model's files (no uploads, no job).
TrainPlan plan_for(const RunContext& c, const SshCommandLine& cli, const std::string& model_arg,
                   bool test) {
    TrainPlan p;
    p.model = c.model.name;
    p.remote_dir = c.target.remote_dir;
    p.remote_log_dir = c.remote_log_dir;
    p.archive = c.archive;
    p.spec_dir = c.local_dir;
    p.spec_here = !c.model.spec_path.empty();
    p.local_logs = c.local_logs;
    p.local_console = c.local_console;
    p.local_archive = c.local_archive;
    p.local_state_dir = local_state_dir(c.model.name);
    p.environment = c.settings.environment;
    p.create_venv = effective_create_venv(c.settings);
    p.mltk_train = is_mltk_train_cmd(c.settings.train_cmd);
    p.download_files = c.settings.download_files;
    p.shutdown_cmds = c.settings.shutdown_cmds;
    p.compression = c.settings.compression;
    p.reconnect_timeout_s = c.settings.reconnect_timeout;
    p.max_restarts = c.settings.max_restarts;
    p.price_per_hour = c.settings.price_per_hour;
    p.sync_every_s = c.settings.sync_every;
    p.transfer_connections = c.settings.transfer_connections;
    p.stop_when = c.settings.stop_when;
    p.on_failure = failure_rules_in_effect(c.settings);
    p.checkpoints = c.settings.checkpoints;
    p.notify = c.settings.notify;
    p.notify_cmd = c.settings.notify_cmd;
    p.notify_from = c.settings.notify_from;
    p.watch_every_s = c.settings.watch_every;
    p.idle_gpu_minutes = c.settings.idle_gpu_minutes;
    p.stop_idle = c.settings.stop_idle;
    p.silent_minutes = c.settings.silent_minutes;
    p.stop_silent = c.settings.stop_silent;
    p.unattended_shutdown_minutes = c.settings.unattended_shutdown_minutes;
    p.owner = local_owner();
    std::tie(p.resume_line, p.stop_line) = resume_and_stop_lines(cli, model_arg, test);
    return p;
}

}  // namespace command_detail

}  // namespace mlt
