#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mlt/commands/model.h"
#include "mlt/config/settings.h"
#include "mlt/config/spec_options.h"
#include "mlt/ssh/session.h"
#include "mlt/train/run/target.h"

namespace mlt {

// The connection options of `mlt ssh` (before COMMAND; train also takes -h/-p/-i/--password
// after MODEL, as MLTK does).
struct SshCommandLine {
    std::vector<std::string> hosts;        // -h, repeatable
    int port = 0;                          // -p
    std::string identity_file;             // -i
    std::optional<std::string> password;   // --password
    std::vector<std::string> ssh_options;  // -o Key=Value
    std::string ssh_config;                // -F
};

// Combines the command line with the settings into one Target per node (command line over
// settings; the ssh config layer is applied later by Session::open). Throws mlt::Error
// (usage, exit 2) for a bad -h/-o value or when no host is known at all.
std::vector<Target> resolve_targets(const SshCommandLine& cli, const SshSettings& settings);

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
// `ahead`: the spec's load through MLTK started by start_spec_load_ahead, taken here.
ModelSettings resolve_model_settings(const SshCommandLine& cli, const std::string& model, bool test,
                                     bool spec_optional,
                                     std::shared_ptr<SpecLoadAhead> ahead = nullptr);

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

// `mlt ssh ... status [MODEL]`: prints the job table of every node; returns the exit code.
int run_status(const SshCommandLine& cli, const std::string& model);

// `mlt ssh -h H forward LOCAL:REMOTE`: 127.0.0.1:LOCAL here (0: a free port) reaches port
// REMOTE on the host's loopback over the SSH connection, until Ctrl+C (then exit 0).
int run_forward(const SshCommandLine& cli, const std::string& ports);

// `mlt ssh -h H tensorboard MODEL [--port P] [--local-port L]`: start_tensorboard on the
// host, its port forwarded to L here (-1: P) as run_forward does, and on Ctrl+C the remote
// TensorBoard stopped (exit 0).
int run_tensorboard(const SshCommandLine& cli, const std::string& model, bool test, int port,
                    int local_port);

}  // namespace mlt
