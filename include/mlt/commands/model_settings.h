#pragma once
// How every job command reads a model and its settings (defaults < user settings < the
// spec's SshMixin literals < its sidecar), and the spec's load through MLTK.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mlt/commands/model.h"
#include "mlt/commands/targets.h"
#include "mlt/config/settings.h"
#include "mlt/config/spec_options.h"

namespace mlt {

// Loads user settings, plus the SshMixin literals of `spec_path` and its sidecar
// `<stem>.ssh.yaml` when given, and prints their warnings, or appends them to `warnings` when given
// (for a caller that loads the same file twice and must print each warning once). Throws mlt::Error
// (config, exit 2) on bad settings.
SshSettings load_settings_for_command(const std::string& spec_path,
                                      std::vector<SettingsWarning>* warnings = nullptr);

// Prints settings warnings as load_settings_for_command does.
void print_settings_warnings(const std::vector<SettingsWarning>& warnings);

// Overwrites the passwords and passphrases of `settings` (once they were copied into the
// targets, which wipe theirs after use).
void wipe_settings_secrets(SshSettings& settings);

// A model and its settings, as every job command reads them.
struct ModelSettings {
    ModelRef model;  // empty for status of all models; spec fields empty when not here
    SshSettings settings;
    std::vector<Target> targets;  // one per node
};

// The one way train, status, logs, stop and download read a model's settings: MODEL is
// resolved (resolve_model); then defaults < user settings < the spec's SshMixin literals <
// its sidecar `<stem>.ssh.yaml`, and the targets from the command line over those. An empty
// MODEL: the user settings only. `spec_optional`: a bare NAME whose spec is not found here
// is enough (one note on stderr says that the user settings and the command line are used).
// Prints settings warnings once; wipes the settings' secrets (the targets keep theirs).
// Throws mlt::Error (exit 2) as resolve_model, load_settings and resolve_targets do.
// `ahead`: the spec's load through MLTK started by start_spec_load_ahead, taken here. A target
// the settings' provider rents (no host given) is pointed at the model's rented machine
// (locate_rented), unless `may_rent` (a new run rents it later).
ModelSettings resolve_model_settings(const SshCommandLine& cli, const std::string& model, bool test,
                                     bool spec_optional,
                                     std::shared_ptr<SpecLoadAhead> ahead = nullptr,
                                     bool may_rent = false);

// What `train` connects with before python3 has loaded the spec: resolve_model_settings
// without running Python (the spec's literals). The spec adds only SshMixin values, none of
// which the connection uses. Nothing when the model, its spec, a settings file or a target
// does not read (resolve_model_settings then says why). Its warnings are logged as that
// call's are: train reads it with the log off, as resolve_model_settings says it all later.
std::optional<ModelSettings> resolve_settings_quietly(const SshCommandLine& cli,
                                                      const std::string& model, bool test,
                                                      bool spec_optional);

// The load of `model`'s spec through MLTK (python3) started on a thread of its own, as
// resolve_model_settings would run it; nullptr when it would run no Python.
std::shared_ptr<SpecLoadAhead> start_spec_load_ahead(const ModelRef& model);

}  // namespace mlt
