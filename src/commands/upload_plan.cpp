// The upload plan of a train (the spec, workspace and upload_files, checked locally before
// any remote action), the --clean checks and the job wrapper's spec.
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
#include "mlt/config/local_mltk.h"
#include "mlt/job/job.h"
#include "mlt/ssh/session.h"
#include "mlt/train/local/local_state.h"
#include "mlt/train/nodes/nodes.h"
#include "mlt/train/recovery/failover.h"
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
#include "run_context.h"

namespace fs = std::filesystem;

namespace mlt {

namespace command_detail {

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

namespace {

// What the globs left out (workspace rules) is named in `skipped`, once for all entries:
// relative to the spec dir, or the directory a `from|to` entry names. The model's sidecar
// settings with a password in them go only where an entry names them: never with a
// workspace, a glob or a directory.
class SidecarFilter {
  public:
    SidecarFilter(const std::string& spec_path, std::vector<LeftOutFile>& skipped)
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
            skipped_.push_back({shown_base + it->remote_path,
                                "the model's settings file with a secret in it: sent only "
                                "when an entry names it"});
            it = items.erase(it);
        }
        return items;
    }

  private:
    std::string sidecar_;
    bool secret_;
    std::vector<LeftOutFile>& skipped_;
};

// What expand_local_glob left out of `path`, and why.
LeftOutFile glob_left_out(const std::string& shown_path, const std::string& path) {
    return {shown_path, is_secret_path(path, false)
                            ? "looks like a secret: sent only when an entry names it"
                            : "links out of its directory or to a secret"};
}

// Adds the files of the upload_files glob `entry` to `plan`, what it left out to `skipped`.
// A glob may start above the spec dir (`../common/*.py`, as in MLTK): its files go to the
// same place above the remote dir.
void plan_glob_upload(std::map<std::string, std::vector<UploadItem>>& plan, const RunContext& c,
                      const std::string& entry, const TransferSpec& spec,
                      const SidecarFilter& without_sidecar, std::vector<LeftOutFile>& skipped) {
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
    for (const auto& path : left_out) skipped.push_back(glob_left_out(up + path, path));
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
                      const SidecarFilter& without_sidecar, std::vector<LeftOutFile>& skipped) {
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
        for (const auto& path : left_out) skipped.push_back(glob_left_out(from + "/" + path, path));
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

}  // namespace

// The uploads, grouped by remote base directory, all checked locally before any remote
// action: a missing file is an error before anything is sent.
std::map<std::string, std::vector<UploadItem>> plan_uploads(const RunContext& c,
                                                            const std::string& workspace,
                                                            std::vector<LeftOutFile>* left_out) {
    std::map<std::string, std::vector<UploadItem>> plan;
    auto& in_dir = plan[c.target.remote_dir];
    in_dir.push_back({c.model.spec_path, c.model.spec_file});
    std::vector<LeftOutFile> skipped;
    const SidecarFilter without_sidecar(c.model.spec_path, skipped);
    if (!workspace.empty()) {
        auto items = without_sidecar(collect_workspace(workspace, left_out), workspace + "/");
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
        std::vector<std::string> names;
        for (const auto& s : skipped) names.push_back(s.path);
        reporter().warning("upload_files: not sending " + std::to_string(skipped.size()) +
                           " file(s) that look like secrets or link out of their directory: " +
                           names_in_brief(names) + " (to send one, name it as 'from|to')");
        if (left_out) left_out->insert(left_out->end(), skipped.begin(), skipped.end());
    }
    drop_repeated_uploads(plan, c);
    return plan;
}

}  // namespace command_detail

std::pair<std::vector<std::string>, std::vector<std::string>> default_venv_packages(
    const std::string& local_mltk_version) {
    // MLTK installs its own version when it can, else the latest.
    const std::vector<std::string> latest{"wheel", "silabs-mltk"};
    if (local_mltk_version.empty()) return {latest, {}};
    return {{"wheel", "silabs-mltk==" + local_mltk_version}, latest};
}

namespace command_detail {

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

}  // namespace command_detail

}  // namespace mlt
