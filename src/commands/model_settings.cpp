// How every job command (train, status, logs, stop, download) reads a model's settings.
#include "mlt/commands/model_settings.h"

#include "mlt/config/spec_options.h"
#include "mlt/provider/run_rental.h"
#include "mlt/util/error.h"
#include "mlt/util/reporter.h"
#include "mlt/util/terminal.h"

namespace mlt {

void print_settings_warnings(const std::vector<SettingsWarning>& warnings) {
    for (const auto& w : warnings)
        reporter().warning(w.file + ":" + std::to_string(w.line) + ":" + std::to_string(w.column) +
                           ": " + w.message);
}

namespace {

// The user settings, and the spec's sidecar and the spec itself when there is one.
SettingsSources sources_for(const std::string& spec_path) {
    SettingsSources sources;
    sources.user_settings_path = default_user_settings_path();
    if (!spec_path.empty()) {
        sources.model_settings_path = model_settings_path_for(spec_path);
        sources.spec_path = spec_path;
    }
    return sources;
}

SshSettings load_settings_with(const std::string& spec_path, const SpecOptions& options,
                               std::vector<SettingsWarning>* warnings) {
    std::vector<SettingsWarning> found;
    SshSettings settings = load_settings(sources_for(spec_path), options, &found);
    if (warnings)
        warnings->insert(warnings->end(), found.begin(), found.end());
    else
        print_settings_warnings(found);
    return settings;
}

bool ends_with(const std::string& text, const std::string& tail) {
    return text.size() >= tail.size() &&
           text.compare(text.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace

SshSettings load_settings_for_command(const std::string& spec_path,
                                      std::vector<SettingsWarning>* warnings) {
    return load_settings_with(spec_path, SpecOptions{}, warnings);
}

void wipe_settings_secrets(SshSettings& settings) {
    for (auto& c : settings.connections) {
        if (c.password) wipe(*c.password);
        if (c.passphrase) wipe(*c.passphrase);
    }
}

namespace {

// resolve_model_settings with `options` for the spec (its test mode and fallback set here).
ModelSettings resolve_with(const SshCommandLine& cli, const std::string& model, bool test,
                           bool spec_optional, SpecOptions options) {
    ModelSettings m;
    if (!model.empty()) {
        // model_paths come from the user settings; the model's own sidecar is read once the
        // spec is found. The user file is read twice then: its warnings are printed by the
        // second reading, or by the first one when the model cannot be found.
        std::vector<SettingsWarning> user_warnings;
        SshSettings user = load_settings_for_command({}, &user_warnings);
        wipe_settings_secrets(user);
        try {
            m.model = resolve_model(model, user.model_paths, test, spec_optional);
        } catch (...) {
            print_settings_warnings(user_warnings);
            throw;
        }
        if (m.model.spec_path.empty()) {
            // A job's state lives on the remote: a bare NAME is enough to act on it.
            reporter().alert("note: model spec " + model + " not found here; using settings from " +
                             default_user_settings_path() + " and the command line");
        }
    }
    // MLTK's loader sees the test mode of a `-test` model, as `mltk ssh train` passes it.
    options.test = ends_with(m.model.name, "-test");
    // A job already there must stay reachable (stop above all) whatever the spec does now.
    options.literals_when_load_fails = spec_optional;
    m.settings = load_settings_with(m.model.spec_path, options, nullptr);
    m.targets = resolve_targets(cli, m.settings);
    wipe_settings_secrets(m.settings);
    return m;
}

}  // namespace

ModelSettings resolve_model_settings(const SshCommandLine& cli, const std::string& model, bool test,
                                     bool spec_optional, std::shared_ptr<SpecLoadAhead> ahead,
                                     bool may_rent) {
    SpecOptions options;
    options.ahead = std::move(ahead);
    ModelSettings m = resolve_with(cli, model, test, spec_optional, std::move(options));
    if (!may_rent) locate_rented(m.targets, m.settings.provider, m.model.name, reporter());
    return m;
}

std::optional<ModelSettings> resolve_settings_quietly(const SshCommandLine& cli,
                                                      const std::string& model, bool test,
                                                      bool spec_optional) {
    if (model.empty()) return std::nullopt;
    SpecOptions literals;
    literals.may_run_python = false;
    try {
        ModelSettings m = resolve_with(cli, model, test, spec_optional, std::move(literals));
        if (m.model.spec_path.empty()) return std::nullopt;
        return m;
    } catch (const Error&) {
        return std::nullopt;
    }
}

std::shared_ptr<SpecLoadAhead> start_spec_load_ahead(const ModelRef& model) {
    if (model.spec_path.empty()) return nullptr;
    SpecOptions options;
    options.test = ends_with(model.name, "-test");
    return start_spec_load_ahead(sources_for(model.spec_path), options);
}

}  // namespace mlt
