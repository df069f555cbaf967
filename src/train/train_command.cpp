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
#include <thread>
#include <tuple>
#include <utility>

#include "mlt/job/job.h"
#include "mlt/ssh/session.h"
#include "mlt/train/failover.h"
#include "mlt/train/local_state.h"
#include "mlt/train/model.h"
#include "mlt/train/nodes.h"
#include "mlt/train/train_arguments.h"
#include "mlt/train/train_run.h"
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

namespace {

// Everything one command needs to know about the model and where its files go.
struct RunContext {
    ModelRef model;
    SshSettings settings;
    Target target;                // the node this context is for (rank 0 at first)
    std::vector<Target> targets;  // every node: -h given more than once, or the settings'
    std::string remote_log_dir;
    std::string archive;  // relative to the remote dir
    std::string local_logs;
    std::string local_console;
    std::string local_archive;
    std::string local_dir;  // where the archive and download_files land: the spec's dir
};

// `spec_optional`: a bare model NAME whose spec is not here is enough (resolve_model_settings);
// the archive and download_files then land in the current directory.
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
    c.local_console = c.local_logs + "/mltk_ssh_train_" + name + ".log";
    std::error_code ec;
    c.local_dir = c.model.spec_dir.empty() ? fs::current_path(ec).string() : c.model.spec_dir;
    c.local_archive = c.local_dir + "/" + c.archive;
    return c;
}

RunContext prepare(const SshCommandLine& cli, const std::string& model_arg, bool test,
                   bool spec_optional, bool several = false,
                   std::shared_ptr<SpecLoadAhead> ahead = nullptr) {
    return context_of(resolve_model_settings(cli, model_arg, test, spec_optional, std::move(ahead)),
                      cli, several);
}

// --clean removes remote_log_dir: refused (exit 2, before any remote action) when the
// settings name something that holds more than the model's logs.
void check_clean_target(const RunContext& c) {
    // Lexically normal, without a trailing slash, so that equal places compare equal.
    const auto normal = [](const std::string& path) {
        std::string n = fs::path(path).lexically_normal().string();
        while (n.size() > 1 && n.back() == '/') n.pop_back();
        return n;
    };
    const std::string l = normal(remote_path_in(c.target.remote_dir, c.remote_log_dir));
    const std::string r = normal(c.target.remote_dir);
    bool bad = l.empty() || l == "/" || l == "." || l == "~" || l == "$HOME" || l == "${HOME}" ||
               l == ".." || l.rfind("../", 0) == 0 || l == r || r.rfind(l + "/", 0) == 0;
    for (const auto& part : fs::path(l)) bad = bad || part == ".mlt";
    if (bad)
        throw config_error("remote_log_dir '" + c.settings.remote_log_dir + "' is " + l +
                               " on the remote: --clean would remove more than the logs of " +
                               c.model.name,
                           "point remote_log_dir at a directory of this model's own, e.g. "
                           "\"~/.mltk/models/{model}\", or leave it unset");
}

// The same for the local log dir (<MLTK_CACHE_DIR>/models/<model>): never `/`, the home
// directory, a dir holding the spec, the workspace or the current dir, or mlt's own state.
void check_local_clean_target(const RunContext& c, const std::string& workspace) {
    std::error_code ec;
    const auto real = [&](const std::string& path) {
        return fs::weakly_canonical(fs::absolute(path, ec), ec).lexically_normal();
    };
    const fs::path logs = real(c.local_logs);
    const auto holds = [&](const std::string& path) {
        if (path.empty()) return false;
        const fs::path inner = real(path);
        const auto rel = inner.lexically_relative(logs);
        return !rel.empty() && *rel.begin() != "..";
    };
    const bool bad = logs == logs.root_path() || holds(home_dir()) || holds(c.model.spec_dir) ||
                     holds(workspace) || holds(fs::current_path(ec).string()) ||
                     holds(mltk_dir() + "/ssh") || fs::exists(logs / ".mlt", ec) ||
                     fs::exists(logs / ".git", ec);
    if (bad)
        throw config_error("the local log dir " + c.local_logs + " holds more than the logs of " +
                               c.model.name + ": --clean would remove it",
                           "set MLTK_CACHE_DIR to a directory of its own, or train without "
                           "--clean");
}

// What the globs left out (workspace rules) is named in `skipped`, once for all entries:
// relative to the spec dir, or the directory a `from|to` entry names. The model's sidecar
// settings with a password in them go only where an entry names them: never with a
// workspace, a glob or a directory.
class SidecarFilter {
  public:
    SidecarFilter(const std::string& spec_path, std::vector<std::string>& skipped)
        : sidecar_(model_settings_path_for(spec_path)),
          secret_(!spec_path.empty() && settings_file_holds_secret(sidecar_)),
          skipped_(skipped) {}

    // `items` without the secret sidecar, which is added to the skipped as `shown_base` + path.
    std::vector<UploadItem> operator()(std::vector<UploadItem> items,
                                       const std::string& shown_base) const {
        if (!secret_) return items;
        std::error_code ec;
        for (auto it = items.begin(); it != items.end();) {
            if (!fs::equivalent(it->local_path, sidecar_, ec)) {
                ++it;
                continue;
            }
            skipped_.push_back(shown_base + it->remote_path);
            it = items.erase(it);
        }
        return items;
    }

  private:
    std::string sidecar_;
    bool secret_;
    std::vector<std::string>& skipped_;
};

// Adds the files of the upload_files glob `entry` to `plan`, what it left out to `skipped`.
// A glob may start above the spec dir (`../common/*.py`, as in MLTK): its files go to the
// same place above the remote dir.
void plan_glob_upload(std::map<std::string, std::vector<UploadItem>>& plan, const RunContext& c,
                      const std::string& entry, const TransferSpec& spec,
                      const SidecarFilter& without_sidecar, std::vector<std::string>& skipped) {
    std::string pattern = fs::path(spec.from).lexically_normal().generic_string();
    std::string up;
    while (pattern.rfind("../", 0) == 0) {
        up += "../";
        pattern.erase(0, 3);
    }
    if (pattern.empty() || pattern == ".." || pattern.find("/../") != std::string::npos)
        throw config_error("upload_files: '" + entry + "' names no files below a directory",
                           "write a glob such as '../common/*.py'");
    const std::string local_base = c.model.spec_dir + (up.empty() ? "" : "/" + up);
    std::vector<std::string> left_out;
    auto items = without_sidecar(expand_local_glob(local_base, pattern, &left_out), up);
    for (const auto& path : left_out) skipped.push_back(up + path);
    if (items.empty())
        reporter().warning("upload_files: '" + entry + "' matches no file in " + c.model.spec_dir);
    auto& target = plan[up.empty() ? c.target.remote_dir
                                   : c.target.remote_dir + "/" + up.substr(0, up.size() - 1)];
    target.insert(target.end(), items.begin(), items.end());
}

// Adds the file or directory of the upload_files entry `from|to` (or a plain path) to `plan`,
// what it left out to `skipped`; throws when it does not exist.
void plan_path_upload(std::map<std::string, std::vector<UploadItem>>& plan, const RunContext& c,
                      const std::string& entry, const TransferSpec& spec,
                      const SidecarFilter& without_sidecar, std::vector<std::string>& skipped) {
    // `$VAR` in a local path: the local environment's, as MLTK expands it.
    const std::string from = local_path_in(c.model.spec_dir, expand_env_vars(spec.from));
    const std::string to = remote_path_in(c.target.remote_dir, spec.to);
    const std::string base = fs::path(to).parent_path().string();
    const std::string name = fs::path(to).filename().string();
    if (fs::is_directory(from)) {
        std::vector<std::string> left_out;
        for (auto& item : without_sidecar(expand_local_glob(from, "**", &left_out), from + "/")) {
            item.remote_path = name + "/" + item.remote_path;
            plan[base].push_back(item);
        }
        for (const auto& path : left_out) skipped.push_back(from + "/" + path);
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
void drop_repeated_uploads(std::map<std::string, std::vector<UploadItem>>& plan,
                           const RunContext& c) {
    for (auto& [base, items] : plan) {
        std::set<std::string> seen;
        if (base == c.target.remote_dir) seen.insert(c.archive);
        items.erase(
            std::remove_if(items.begin(), items.end(),
                           [&](const UploadItem& i) { return !seen.insert(i.remote_path).second; }),
            items.end());
    }
}

// The uploads, grouped by remote base directory, all checked locally before any remote
// action: a missing file is an error before anything is sent.
std::map<std::string, std::vector<UploadItem>> plan_uploads(const RunContext& c,
                                                            const std::string& workspace) {
    std::map<std::string, std::vector<UploadItem>> plan;
    auto& in_dir = plan[c.target.remote_dir];
    in_dir.push_back({c.model.spec_path, c.model.spec_file});
    std::vector<std::string> skipped;
    const SidecarFilter without_sidecar(c.model.spec_path, skipped);
    if (!workspace.empty()) {
        auto items = without_sidecar(collect_workspace(workspace), workspace + "/");
        reporter().notice("workspace " + workspace + ": " + std::to_string(items.size()) +
                          " file(s)");
        in_dir.insert(in_dir.end(), items.begin(), items.end());
    }
    for (const auto& entry : c.settings.upload_files) {
        TransferSpec spec = parse_transfer_spec(entry, TransferDirection::upload);
        if (spec.is_glob)
            plan_glob_upload(plan, c, entry, spec, without_sidecar, skipped);
        else
            plan_path_upload(plan, c, entry, spec, without_sidecar, skipped);
    }
    if (!skipped.empty()) {
        reporter().warning("upload_files: not sending " + std::to_string(skipped.size()) +
                           " file(s) that look like secrets or link out of their directory: " +
                           names_in_brief(skipped) + " (to send one, name it as 'from|to')");
    }
    drop_repeated_uploads(plan, c);
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

}  // namespace

std::pair<std::vector<std::string>, std::vector<std::string>> default_venv_packages(
    const std::string& local_mltk_version) {
    // MLTK installs its own version when it can, else the latest.
    const std::vector<std::string> latest{"wheel", "silabs-mltk"};
    if (local_mltk_version.empty()) return {latest, {}};
    return {{"wheel", "silabs-mltk==" + local_mltk_version}, latest};
}

namespace {

// The version of the MLTK installed here, as MLTK pins the remote one to it; empty when
// there is none (or python3 does not answer within 10 s).
std::string read_local_mltk_version() {
    FILE* p =
        ::popen("timeout 10 python3 -c 'import mltk; print(mltk.__version__)' 2>/dev/null", "r");
    if (!p) return {};
    std::string out;
    char buf[128];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    if (::pclose(p) != 0) return {};
    while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
    // A version is digits, dots and letters; anything else is not one.
    const bool ok = !out.empty() && out.find_first_not_of(
                                        "0123456789.abcdefghijklmnopqrstuvwxyz"
                                        "ABCDEFGHIJKLMNOPQRSTUVWXYZ+-_") == std::string::npos;
    return ok ? out : std::string();
}

// read_local_mltk_version, once per process (a train plans twice when python3 loads its spec).
const std::string& local_mltk_version() {
    static const std::string version = read_local_mltk_version();
    return version;
}

WrapperSpec wrapper_for(const RunContext& c, const TrainOptions& o) {
    WrapperSpec w;
    w.model = c.model.name;
    w.spec_file = c.model.spec_file;
    w.log_dir = c.remote_log_dir;
    w.archive = c.archive;
    w.mltk_train = is_mltk_train_cmd(c.settings.train_cmd);
    w.clean = o.clean;
    w.verbose = o.verbose;
    w.environment = c.settings.environment;
    w.create_venv = effective_create_venv(c.settings);
    if (c.settings.venv_packages) {
        w.venv_packages = *c.settings.venv_packages;
    } else if (w.create_venv) {
        std::tie(w.venv_packages, w.venv_fallback_packages) =
            default_venv_packages(local_mltk_version());
    }
    w.startup_cmds = c.settings.startup_cmds;
    // Paths as the job sees them: absolute, set by the wrapper.
    w.train_cmd = fill_placeholders(c.settings.train_cmd, {{"model", shell_quote(c.model.name)},
                                                           {"spec", shell_quote(c.model.spec_file)},
                                                           {"log_dir", "\"$MLT_LOG_DIR\""},
                                                           {"archive", shell_quote(c.archive)},
                                                           {"remote_dir", "\"$MLT_REMOTE_DIR\""}});
    // MLTK's own trainer takes these as flags; any other command reads MLT_CLEAN/MLT_VERBOSE.
    if (w.mltk_train) {
        // Expanded remotely: a restarted attempt must not clean the log dir (its checkpoints).
        if (o.clean) w.train_cmd += " ${MLT_CLEAN:+--clean}";
        if (o.verbose) w.train_cmd += " --verbose";
    }
    w.train_args = o.args;
    // The job records the sha256 of what download_files name, in the collection's order.
    for (const auto& entry : c.settings.download_files) {
        const TransferSpec spec = parse_transfer_spec(entry, TransferDirection::download);
        if (spec.is_glob)
            w.download_regexes.push_back(glob_find_regex(spec.from));
        else
            w.download_pairs.push_back(spec.from);
    }
    return w;
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
    p.watch_every_s = c.settings.watch_every;
    p.idle_gpu_minutes = c.settings.idle_gpu_minutes;
    p.stop_idle = c.settings.stop_idle;
    p.owner = local_owner();
    std::tie(p.resume_line, p.stop_line) = resume_and_stop_lines(cli, model_arg, test);
    return p;
}

}  // namespace

namespace {

// --restore needs something to push and a run that has not set its job up yet.
void check_restore(const TrainOptions& o, const TrainPlan& plan) {
    if (!o.restore) return;
    if (o.clean)
        throw usage_error(
            "--restore with --clean: --clean removes the local log dir that "
            "--restore would push",
            "leave one of them out");
    if (o.resume)
        throw usage_error("--restore with --resume: the run on the remote was set up already",
                          "leave --restore out, or start a new run with it");
    std::error_code ec;
    if (fs::is_empty(plan.local_logs, ec) || ec)
        throw usage_error("--restore: nothing to push: the local log dir " + plan.local_logs +
                              " is empty or missing",
                          "leave --restore out, or bring the logs home first ('download')");
}

// fallback_hosts, parsed (exit 2 for a bad entry).
std::vector<StandbyHost> standby_hosts_of(const RunContext& c) {
    std::vector<StandbyHost> hosts;
    for (size_t i = 0; i < c.settings.fallback_hosts.size(); ++i)
        hosts.push_back(parse_standby_host(c.settings.fallback_hosts[i],
                                           "fallback_hosts entry " + std::to_string(i + 1)));
    return hosts;
}

// The standby hosts of fallback_hosts and provision_cmd, checked before any remote action;
// none when neither is set.
std::unique_ptr<HostPool> host_pool_for(const RunContext& c, const SshCommandLine& cli,
                                        const std::string& model_arg, bool test,
                                        ForwardingConnection& connection, ForwardingJob& job,
                                        int transfer_connections) {
    HostPoolSpec spec;
    spec.transfer_connections = transfer_connections;
    spec.fallback_hosts = standby_hosts_of(c);
    spec.provision_cmd = c.settings.provision_cmd;
    if (spec.fallback_hosts.empty() && trim(spec.provision_cmd).empty()) return nullptr;
    spec.base = c.target;
    spec.remote_dir = c.settings.remote_dir.empty() ? "." : c.settings.remote_dir;
    spec.model = c.model.name;
    spec.compression = c.settings.compression;
    spec.lines = [cli, model_arg, test](const std::string& host) {
        SshCommandLine other = cli;
        other.hosts = {host};
        other.port = 0;  // the standby host's own port
        return resume_and_stop_lines(other, model_arg, test);
    };
    return std::make_unique<HostPool>(std::move(spec), connection, job);
}

}  // namespace

namespace {

// The plan of one node's run: everything checked locally before any remote action.
TrainPlan plan_node(const RunContext& c, const SshCommandLine& cli, const TrainOptions& o,
                    bool test) {
    if (o.clean && !c.remote_log_dir.empty()) check_clean_target(c);
    TrainPlan plan = plan_for(c, cli, o.model, test);
    if (plan.spec_here) {
        std::string workspace = o.workspace.empty() ? std::string() : expand_user(o.workspace);
        if (workspace.empty() && !c.settings.workspace.empty())
            workspace = local_path_in(c.model.spec_dir, c.settings.workspace);
        if (o.clean) check_local_clean_target(c, workspace);
        plan.uploads = plan_uploads(c, workspace);  // local checks before any remote action
        plan.wrapper = wrapper_for(c, o);
    }
    check_restore(o, plan);
    plan.restore = o.restore;
    plan.failover = !o.no_failover;
    plan.clean = o.clean;
    plan.force = o.force;
    plan.resume = o.resume;
    plan.no_wait = o.no_wait;
    plan.raw_console = o.raw_console;
    if (o.reconnect_timeout) plan.reconnect_timeout_s = *o.reconnect_timeout;
    if (o.max_restarts) plan.max_restarts = *o.max_restarts;
    if (o.price) plan.price_per_hour = *o.price;
    plan.budget = {o.max_hours, o.max_cost};
    check_budget_flags(plan.price_per_hour, plan.budget, o.no_wait && !o.resume);
    if (o.sync_every) plan.sync_every_s = *o.sync_every;
    if (o.connections) plan.transfer_connections = *o.connections;
    return plan;
}

// Several nodes: one plan per node, then the gang (nodes.cpp).
int train_nodes(const RunContext& c, const SshCommandLine& cli, const TrainOptions& o, bool test) {
    NodesSpec spec;
    spec.master_addr = c.settings.master_addr;
    spec.master_port = c.settings.master_port;
    for (const Target& t : c.targets) {
        RunContext node = c;
        node.target = t;
        node.remote_log_dir = node_log_dir(c.settings.remote_log_dir, c.model.name, t.remote_dir);
        spec.nodes.push_back({t, plan_node(node, cli, o, test)});
    }
    return run_train_nodes(std::move(spec));
}

// A connection made while python3 loads the spec (MLTK: 0.1 s to seconds): the model's
// local lock taken and the key read first, as without it; nothing remote runs before the
// spec has loaded and the local checks have passed.
struct EarlyConnection {
    std::shared_ptr<SpecLoadAhead> spec;
    std::unique_ptr<LocalModelLock> lock;
    std::unique_ptr<SessionConnection> connection;
    ConnectSpec connect;

    // The connection for `target`: this one when it was made for the same destination
    // (always, as the spec sets none of it), else a new one.
    std::unique_ptr<SessionConnection> take_for(const ConnectSpec& target) {
        const auto key = [](const ConnectSpec& c) {
            return std::tie(c.host, c.user, c.port, c.identity_file, c.config_path, c.fallback_user,
                            c.fallback_port, c.fallback_identity_file);
        };
        if (connection && key(connect) == key(target)) return std::move(connection);
        return std::make_unique<SessionConnection>(target);
    }
};

// Nothing is logged or said while it lives: what is read and checked under it is read and
// checked again (and said) by the planning after the spec's load. No other thread runs yet.
class QuietLog : public Reporter {
  public:
    QuietLog() {
        logger_->set_level(spdlog::level::off);
        set_reporter(this);
    }
    ~QuietLog() override {
        set_reporter(&outer_);
        logger_->set_level(level_);
    }
    QuietLog(const QuietLog&) = delete;
    QuietLog& operator=(const QuietLog&) = delete;
    void emit(Event, std::string_view) override {}

  private:
    Reporter& outer_ = reporter();
    std::shared_ptr<spdlog::logger> logger_ = spdlog::default_logger();
    spdlog::level::level_enum level_ = logger_->level();
};

// Whether the run's local checks pass on `m` (the settings without Python): bad input makes
// no connection at all.
bool passes_local_checks(ModelSettings m, const SshCommandLine& cli, const TrainOptions& o,
                         bool test) {
    try {
        const RunContext c = context_of(std::move(m), cli, true);
        const TrainPlan plan = plan_node(c, cli, o, test);
        check_own_file(plan.local_console);
        check_own_file(plan.local_state_dir + "/console_run");
        standby_hosts_of(c);
        return true;
    } catch (const Error&) {
        return false;
    }
}

EarlyConnection connect_while_spec_loads(const SshCommandLine& cli, const TrainOptions& o,
                                         bool test) {
    EarlyConnection e;
    std::optional<ModelSettings> quick;
    {
        QuietLog quiet;
        quick = resolve_settings_quietly(cli, o.model, test, o.resume);
        // Several nodes connect in their own way (train_nodes).
        if (!quick || quick->targets.size() != 1 || !passes_local_checks(*quick, cli, o, test))
            return e;
    }
    e.spec = start_spec_load_ahead(quick->model);
    if (!e.spec) return e;  // no Python runs: nothing to wait for
    const std::string& name = quick->model.name;
    e.lock = std::make_unique<LocalModelLock>(local_state_dir(name), name);
    e.connect = quick->targets.front().connect;
    e.connection = std::make_unique<SessionConnection>(e.connect);
    e.connection->open_ahead();
    return e;
}

}  // namespace

int run_train(const SshCommandLine& cli, const TrainOptions& o) {
    install_interrupt_handler();
    check_job_flags(o.resume, o.force);
    // MLTK's own suite passes --clean with --resume: accepted, but never silently dropped.
    if (o.resume && o.clean)
        reporter().warning("--clean is ignored with --resume: the run's logs and archive are kept");
    const bool test = wants_test_model(o.args);
    EarlyConnection early = connect_while_spec_loads(cli, o, test);
    // --resume acts on the run the remote holds: a bare NAME is enough unless that run must
    // upload again (TrainRun refuses it then).
    const RunContext c = prepare(cli, o.model, test, o.resume, true, early.spec);
    if (c.targets.size() > 1) return train_nodes(c, cli, o, test);
    TrainPlan plan = plan_node(c, cli, o, test);

    // Before any connection (or, made early, before anything remote): a second mlt on this
    // model's local files is refused, and the key is decrypted (or the password asked) once
    // for the whole run.
    std::unique_ptr<LocalModelLock> local_lock = std::move(early.lock);
    if (!local_lock)
        local_lock = std::make_unique<LocalModelLock>(plan.local_state_dir, plan.model);
    check_own_file(plan.local_console);
    check_own_file(plan.local_state_dir + "/console_run");
    const std::unique_ptr<SessionConnection> owned_connection = early.take_for(c.target.connect);
    SessionConnection& first_connection = *owned_connection;
    ShellJob first_job(first_connection, plan.remote_dir, plan.model, plan.compression,
                       plan.transfer_connections);
    ForwardingConnection connection(first_connection);
    ForwardingJob job(first_job);
    std::unique_ptr<HostPool> standby =
        plan.failover
            ? host_pool_for(c, cli, o.model, test, connection, job, plan.transfer_connections)
            : nullptr;
    TrainRun run(connection, job, std::move(plan), reporter(), real_clock(),
                 installed_run_observer(), standby.get());
    return run.run();  // it ends with its summary and the billing reminder
}

namespace {

// One node's console log to `out`: all of it, then with `follow` what comes until its job
// ends, filtered as train's follow is (all of it with `raw`). A signal ends it with the
// signal's code.
int show_log(const Target& t, const std::string& model, bool follow, bool raw, Reporter& out) {
    Session session = Session::open(t.connect);
    SessionRemote remote(session);
    ConsoleFilter shown(raw);
    const auto print = [&out, &shown](std::string_view d) { out.console(shown.feed(d)); };
    try {
        uint64_t offset = read_log(remote, t.remote_dir, model, Task::job, 0, print);
        if (follow)
            follow_to_end(remote, t.remote_dir, model, Task::job, nullptr, offset,
                          kFollowSegmentSeconds, print);
    } catch (const Error& e) {
        if (!is_signal(e.kind())) throw;
        return e.code();
    }
    return exit_code::kOk;
}

// `logs -f` of several nodes: one follow per node, all at once, their lines merged whole
// and prefixed [rank N]. A node whose log cannot be read says so and the others go on; the
// exit status is the first failure's.
int follow_all_logs(const std::vector<Target>& targets, const std::string& model, bool raw) {
    std::vector<std::unique_ptr<PrefixReporter>> outs;
    for (size_t i = 0; i < targets.size(); ++i)
        outs.push_back(
            std::make_unique<PrefixReporter>(reporter(), "[rank " + std::to_string(i) + "] "));
    std::vector<int> codes(targets.size(), exit_code::kOk);
    std::vector<std::thread> threads;
    for (size_t i = 0; i < targets.size(); ++i)
        threads.push_back(thread_without_signals([&, i] {
            codes[i] = node_outcome(
                *outs[i], [&] { return show_log(targets[i], model, true, raw, *outs[i]); });
        }));
    for (auto& t : threads) t.join();
    for (int code : codes)
        if (code != exit_code::kOk) return code;
    return exit_code::kOk;
}

}  // namespace

int run_logs(const SshCommandLine& cli, const std::string& model, bool test, bool follow, int rank,
             bool raw_console) {
    install_interrupt_handler();
    RunContext c = prepare(cli, model, test, true, true);
    const size_t nodes = c.targets.size();
    if (rank >= 0 && static_cast<size_t>(rank) >= nodes)
        throw usage_error("--rank " + std::to_string(rank) + ": the run has " +
                              std::to_string(nodes) + " node(s) (one per -h)",
                          "give a rank from 0 to " + std::to_string(nodes - 1));
    if (rank >= 0)
        return show_log(c.targets[static_cast<size_t>(rank)], c.model.name, follow, raw_console,
                        reporter());
    if (nodes == 1) return show_log(c.targets[0], c.model.name, follow, raw_console, reporter());
    if (follow) return follow_all_logs(c.targets, c.model.name, raw_console);
    for (size_t i = 0; i < nodes; ++i) {  // node after node, each one's lines together
        PrefixReporter prefixed(reporter(), "[rank " + std::to_string(i) + "] ");
        if (int code = show_log(c.targets[i], c.model.name, false, raw_console, prefixed))
            return code;
    }
    return exit_code::kOk;
}

int run_stop(const SshCommandLine& cli, const std::string& model, bool test) {
    // With one -h per node, every node's job is stopped (its own process group), in turn.
    RunContext c = prepare(cli, model, test, true, true);
    const size_t nodes = c.targets.size();
    for (size_t i = 0; i < nodes; ++i) {
        const Target& t = c.targets[i];
        PrefixReporter prefixed(reporter(), "[rank " + std::to_string(i) + "] ");
        Reporter& out = nodes > 1 ? prefixed : reporter();
        Session session = Session::open(t.connect);
        SessionRemote remote(session);
        switch (stop_and_release(remote, t.remote_dir, c.model.name, 10)) {
            case StopOutcome::stopped:
                out.notice("stopped the job of " + c.model.name);
                break;
            case StopOutcome::finished:
                out.notice("the job of " + c.model.name +
                           " had finished already, and its results were not collected; "
                           "'train " +
                           c.model.name + " --resume' collects them");
                break;
            case StopOutcome::none:
                out.notice("no running job of " + c.model.name + "; lock released");
                break;
        }
    }
    return exit_code::kOk;
}

int run_download(const SshCommandLine& cli, const std::string& model, bool test) {
    RunContext c = prepare(cli, model, test, true);
    const TrainPlan plan = plan_for(c, cli, model, test);
    LocalModelLock local_lock(plan.local_state_dir, plan.model);
    SessionConnection connection(c.target.connect);
    Remote& remote = connection.remote();
    ConnectionLinks links(connection, plan.transfer_connections);
    LocalConsole console(plan.local_console, plan.local_state_dir);
    // Sent with the status on a guess: the run is the one the local copy is of, and it
    // recorded no archive: the read of its console from where the copy ends, and the log
    // dir's listing (a guess that misses costs those bytes, not a round trip).
    const auto [copy_run, copy_size] = console.copy_of();
    if (!copy_run.empty()) {
        read_log_ahead_on_guess(remote, c.target.remote_dir, c.model.name, Task::job, copy_size);
        JobResult guessed;
        guessed.run_id = copy_run;
        collect_results_ahead(remote, plan, guessed, true);
    }
    const JobResult result = read_job_result(remote, c.target.remote_dir, c.model.name);
    if (result.run_id.empty()) {
        // No job dir of a known run (a wrong host or remote dir, or an old mlt's job): the
        // local copy of the last run's console log stays as it is.
        reporter().notice("no run of " + c.model.name + " in " + c.target.remote_dir + " on " +
                          remote.name() + "; the local console log is left as it is");
    } else {
        const uint64_t offset = console.open(result.run_id);
        collect_results_ahead(remote, plan, result, false);  // goes with the console's read
        read_log(remote, c.target.remote_dir, c.model.name, Task::job, offset,
                 [&](std::string_view d) { console.append(d); });
    }
    collect_results(remote, plan, result,
                    checked_compression([&]() -> Remote& { return remote; }, plan.compression),
                    reporter(), &links);
    return exit_code::kOk;
}

}  // namespace mlt
