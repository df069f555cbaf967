// `mlt ssh ... train|logs|stop|download`: what each command works out locally, then the
// run engine (train_run.cpp) or one job command.
#include "mlt/train/train_command.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "mlt/job/job.h"
#include "mlt/ssh/session.h"
#include "mlt/train/local_state.h"
#include "mlt/train/model.h"
#include "mlt/train/train_run.h"
#include "mlt/transfer/sync.h"
#include "mlt/transfer/transfer.h"
#include "mlt/transfer/workspace.h"
#include "mlt/util/error.h"
#include "mlt/util/interrupt.h"
#include "mlt/util/paths.h"
#include "mlt/util/reporter.h"
#include "mlt/util/shell.h"

namespace fs = std::filesystem;

namespace mlt {

namespace {

// Everything one command needs to know about the model and where its files go.
struct RunContext {
    ModelRef model;
    SshSettings settings;
    Target target;
    std::string remote_log_dir;
    std::string archive;  // relative to the remote dir
    std::string local_logs;
    std::string local_console;
    std::string local_archive;
};

RunContext prepare(const SshCommandLine& cli, const std::string& model_arg) {
    RunContext c;
    // model_paths come from the user settings; the model's own sidecar is read once the
    // spec is found. The user file is read twice then: its warnings are printed by the second
    // reading, or by the first one when the model cannot be found.
    std::vector<SettingsWarning> user_warnings;
    SshSettings user = load_settings_for_command({}, &user_warnings);
    wipe_settings_secrets(user);
    try {
        c.model = resolve_model(model_arg, user.model_paths);
    } catch (...) {
        print_settings_warnings(user_warnings);
        throw;
    }
    c.settings = load_settings_for_command(c.model.spec_path);
    auto targets = resolve_targets(cli, c.settings);
    wipe_settings_secrets(c.settings);
    if (targets.size() != 1)
        throw usage_error("several nodes (-h given " + std::to_string(targets.size()) +
                              " times) are not supported yet",
                          "give one -h");
    c.target = targets.front();
    const std::string& name = c.model.name;
    c.archive = name + ".mltk.zip";
    std::string log_dir = c.settings.remote_log_dir;
    // remote_log_dir placeholders are plain text substitutions: the result is one path.
    for (const auto& [key, value] : std::vector<std::pair<std::string, std::string>>{
             {"{model}", name}, {"{remote_dir}", c.target.remote_dir}})
        for (size_t at; (at = log_dir.find(key)) != std::string::npos;)
            log_dir.replace(at, key.size(), value);
    c.remote_log_dir = log_dir;
    c.local_logs = local_log_dir(name);
    c.local_console = c.local_logs + "/mlt_ssh_train_" + name + ".log";
    c.local_archive = c.model.spec_dir + "/" + c.archive;
    return c;
}

// The uploads, grouped by remote base directory, all checked locally before any remote
// action: a missing file is an error before anything is sent.
std::map<std::string, std::vector<UploadItem>> plan_uploads(const RunContext& c,
                                                            const std::string& workspace) {
    std::map<std::string, std::vector<UploadItem>> plan;
    auto& in_dir = plan[c.target.remote_dir];
    in_dir.push_back({c.model.spec_path, c.model.spec_file});
    if (!workspace.empty()) {
        auto items = collect_workspace(workspace);
        reporter().notice("workspace " + workspace + ": " + std::to_string(items.size()) +
                          " file(s)");
        in_dir.insert(in_dir.end(), items.begin(), items.end());
    }
    for (const auto& entry : c.settings.upload_files) {
        TransferSpec spec = parse_transfer_spec(entry, TransferDirection::upload);
        if (spec.is_glob) {
            auto items = expand_local_glob(c.model.spec_dir, spec.from);
            if (items.empty())
                spdlog::warn("upload_files: '{}' matches no file in {}", entry, c.model.spec_dir);
            in_dir.insert(in_dir.end(), items.begin(), items.end());
            continue;
        }
        const std::string from = local_path_in(c.model.spec_dir, spec.from);
        const std::string to = remote_path_in(c.target.remote_dir, spec.to);
        const std::string base = fs::path(to).parent_path().string();
        const std::string name = fs::path(to).filename().string();
        if (fs::is_directory(from)) {
            for (auto& item : expand_local_glob(from, "**")) {
                item.remote_path = name + "/" + item.remote_path;
                plan[base].push_back(item);
            }
        } else if (fs::is_regular_file(from)) {
            plan[base].push_back({from, name});
        } else {
            throw config_error("upload_files: " + from + " (from '" + entry + "') not found",
                               "fix the path or remove the entry");
        }
    }
    // One remote path, one file: the first source wins (the spec, then the workspace, then
    // upload_files), so a spec inside the workspace is not sent twice.
    // The archive is the run's output: an uploaded copy (a workspace holding the last one
    // that came home) would be taken for this run's result if the training wrote none.
    for (auto& [base, items] : plan) {
        std::set<std::string> seen;
        if (base == c.target.remote_dir) seen.insert(c.archive);
        items.erase(
            std::remove_if(items.begin(), items.end(),
                           [&](const UploadItem& i) { return !seen.insert(i.remote_path).second; }),
            items.end());
    }
    return plan;
}

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

WrapperSpec wrapper_for(const RunContext& c, const TrainOptions& o) {
    WrapperSpec w;
    w.model = c.model.name;
    w.spec_file = c.model.spec_file;
    w.log_dir = c.remote_log_dir;
    w.archive = c.archive;
    w.clean = o.clean;
    w.verbose = o.verbose;
    w.environment = c.settings.environment;
    w.create_venv = c.settings.create_venv;
    w.venv_packages = c.settings.venv_packages;
    w.startup_cmds = c.settings.startup_cmds;
    w.train_cmd = fill_placeholders(c.settings.train_cmd, {{"model", c.model.name},
                                                           {"spec", c.model.spec_file},
                                                           {"log_dir", c.remote_log_dir},
                                                           {"archive", c.archive},
                                                           {"remote_dir", c.target.remote_dir}});
    // MLTK's own trainer takes these as flags; any other command reads MLT_CLEAN/MLT_VERBOSE.
    if (c.settings.train_cmd.rfind("mltk train", 0) == 0) {
        if (o.clean) w.train_cmd += " --clean";
        if (o.verbose) w.train_cmd += " --verbose";
    }
    w.train_args = o.args;
    return w;
}

// What collection and the run engine need to know of a model's files (no uploads, no job).
TrainPlan plan_for(const RunContext& c, const SshCommandLine& cli, const std::string& model_arg) {
    TrainPlan p;
    p.model = c.model.name;
    p.remote_dir = c.target.remote_dir;
    p.remote_log_dir = c.remote_log_dir;
    p.archive = c.archive;
    p.spec_dir = c.model.spec_dir;
    p.local_logs = c.local_logs;
    p.local_console = c.local_console;
    p.local_archive = c.local_archive;
    p.local_state_dir = local_state_dir(c.model.name);
    p.environment = c.settings.environment;
    p.download_files = c.settings.download_files;
    p.shutdown_cmds = c.settings.shutdown_cmds;
    p.compression = c.settings.compression;
    p.reconnect_timeout_s = c.settings.reconnect_timeout;
    p.owner = local_owner();
    p.resume_line = command_line(cli, "train", model_arg, {"--resume"});
    p.stop_line = command_line(cli, "stop", model_arg, {});
    return p;
}

}  // namespace

int run_train(const SshCommandLine& cli, const TrainOptions& o) {
    install_interrupt_handler();
    RunContext c = prepare(cli, o.model);
    std::string workspace = o.workspace.empty() ? std::string() : expand_user(o.workspace);
    if (workspace.empty() && !c.settings.workspace.empty())
        workspace = local_path_in(c.model.spec_dir, c.settings.workspace);
    TrainPlan plan = plan_for(c, cli, o.model);
    plan.uploads = plan_uploads(c, workspace);  // local checks before any remote action
    plan.wrapper = wrapper_for(c, o);
    plan.clean = o.clean;
    plan.force = o.force;
    plan.resume = o.resume;
    plan.no_wait = o.no_wait;
    if (o.reconnect_timeout) plan.reconnect_timeout_s = *o.reconnect_timeout;

    // Before any connection: a second mlt on this model's local files is refused, and the
    // key is decrypted (or the password asked) once for the whole run.
    LocalModelLock local_lock(plan.local_state_dir, plan.model);
    SessionConnection connection(c.target.connect);
    TrainRun run(connection, std::move(plan), reporter(), real_clock());
    return run.run();
}

int run_logs(const SshCommandLine& cli, const std::string& model, bool follow) {
    install_interrupt_handler();
    RunContext c = prepare(cli, model);
    Session session = Session::open(c.target.connect);
    SessionRemote remote(session);
    const auto print = [](std::string_view d) { reporter().console(d); };
    try {
        uint64_t offset = read_log(remote, c.target.remote_dir, c.model.name, Task::job, 0, print);
        if (follow)
            follow_to_end(remote, c.target.remote_dir, c.model.name, Task::job, nullptr, offset,
                          kFollowSegmentSeconds, print);
    } catch (const Error& e) {
        if (e.kind() != ErrorKind::interrupted) throw;
        return e.code();
    }
    return exit_code::kOk;
}

int run_stop(const SshCommandLine& cli, const std::string& model) {
    RunContext c = prepare(cli, model);
    Session session = Session::open(c.target.connect);
    SessionRemote remote(session);
    const bool stopped = stop_job(remote, c.target.remote_dir, c.model.name, 10);
    release_lock(remote, c.target.remote_dir, c.model.name);
    reporter().notice(stopped ? "stopped the job of " + c.model.name
                              : "no running job of " + c.model.name + "; lock released");
    return exit_code::kOk;
}

int run_download(const SshCommandLine& cli, const std::string& model) {
    RunContext c = prepare(cli, model);
    const TrainPlan plan = plan_for(c, cli, model);
    LocalModelLock local_lock(plan.local_state_dir, plan.model);
    Session session = Session::open(c.target.connect);
    SessionRemote remote(session);
    const JobResult result = read_job_result(remote, c.target.remote_dir, c.model.name);
    if (result.run_id.empty()) {
        // No job dir of a known run (a wrong host or remote dir, or an old mlt's job): the
        // local copy of the last run's console log stays as it is.
        reporter().notice("no run of " + c.model.name + " in " + c.target.remote_dir + " on " +
                          remote.name() + "; the local console log is left as it is");
    } else {
        LocalConsole console(plan.local_console, plan.local_state_dir);
        const uint64_t offset = console.open(result.run_id);
        read_log(remote, c.target.remote_dir, c.model.name, Task::job, offset,
                 [&](std::string_view d) { console.append(d); });
    }
    collect_results(remote, plan, result,
                    checked_compression([&]() -> Remote& { return remote; }, plan.compression),
                    reporter());
    return exit_code::kOk;
}

}  // namespace mlt
