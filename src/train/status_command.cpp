#include <spdlog/spdlog.h>

#include <cstdio>

#include "mlt/job/status.h"
#include "mlt/ssh/remote.h"
#include "mlt/train/ssh_command.h"
#include "mlt/util/error.h"

namespace mlt {

namespace {

// The model name of a MODEL argument: a name, or a spec path whose stem is the name.
std::string model_name_of(const std::string& model) {
    std::string name = model;
    if (auto slash = name.rfind('/'); slash != std::string::npos) name = name.substr(slash + 1);
    if (name.size() > 3 && name.compare(name.size() - 3, 3, ".py") == 0) name.resize(name.size() - 3);
    return name;
}

}  // namespace

SshSettings load_settings_for_command(const std::string& spec_path) {
    SettingsSources sources;
    sources.user_settings_path = default_user_settings_path();
    if (!spec_path.empty()) sources.model_settings_path = model_settings_path_for(spec_path);
    std::vector<SettingsWarning> warnings;
    SshSettings settings = load_settings(sources, &warnings);
    for (const auto& w : warnings)
        spdlog::warn("{}:{}:{}: {}", w.file, w.line, w.column, w.message);
    return settings;
}

int run_status(const SshCommandLine& cli, const std::string& model) {
    const std::string name = model.empty() ? std::string() : model_name_of(model);
    if (!name.empty()) validate_model_name(name);
    const bool is_path = model.find('/') != std::string::npos ||
                         (model.size() > 3 && model.compare(model.size() - 3, 3, ".py") == 0);
    const SshSettings settings = load_settings_for_command(is_path ? model : std::string());
    const std::vector<Target> targets = resolve_targets(cli, settings);
    for (const Target& target : targets) {
        Session session = Session::open(target.connect);
        SessionRemote remote(session);
        auto jobs = query_jobs(remote, target.remote_dir, name);
        if (targets.size() > 1) std::printf("== %s\n", remote.name().c_str());
        std::fputs(format_jobs(jobs, target.remote_dir, remote.name()).c_str(), stdout);
    }
    std::fflush(stdout);
    return exit_code::kOk;
}

}  // namespace mlt
