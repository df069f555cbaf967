#include <spdlog/spdlog.h>

#include <cstdio>

#include "mlt/job/status.h"
#include "mlt/ssh/remote.h"
#include "mlt/train/model.h"
#include "mlt/train/ssh_command.h"
#include "mlt/util/error.h"
#include "mlt/util/terminal.h"

namespace mlt {

void print_settings_warnings(const std::vector<SettingsWarning>& warnings) {
    for (const auto& w : warnings)
        spdlog::warn("{}:{}:{}: {}", w.file, w.line, w.column, w.message);
}

SshSettings load_settings_for_command(const std::string& spec_path,
                                      std::vector<SettingsWarning>* warnings) {
    SettingsSources sources;
    sources.user_settings_path = default_user_settings_path();
    if (!spec_path.empty()) {
        sources.model_settings_path = model_settings_path_for(spec_path);
        sources.spec_path = spec_path;
    }
    std::vector<SettingsWarning> found;
    SshSettings settings = load_settings(sources, &found);
    if (warnings)
        warnings->insert(warnings->end(), found.begin(), found.end());
    else
        print_settings_warnings(found);
    return settings;
}

void wipe_settings_secrets(SshSettings& settings) {
    for (auto& c : settings.connections) {
        if (c.password) wipe(*c.password);
        if (c.passphrase) wipe(*c.passphrase);
    }
}

int run_status(const SshCommandLine& cli, const std::string& model) {
    const std::string name = model.empty() ? std::string() : model_name_of(model);
    if (!name.empty()) validate_model_name(name);
    SshSettings settings = load_settings_for_command(is_spec_path(model) ? model : std::string());
    const std::vector<Target> targets = resolve_targets(cli, settings);
    wipe_settings_secrets(settings);
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
