#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "mlt/config/settings.h"

namespace mlt {

// How load_settings treats the model spec beyond SettingsSources.
struct SpecOptions {
    // false: the spec's literals only, whatever `spec_loader` says (no Python runs).
    bool may_run_python = true;
    std::string python = "python3";  // the interpreter of the MLTK loader, looked up in PATH
    bool test = false;               // MLTK's test mode (a `-test` model), for the MLTK loader
    // How long the MLTK loader may take (`spec_loader`, docs/settings.md); then the spec's
    // process group is killed and the load fails.
    std::chrono::milliseconds load_timeout{std::chrono::seconds(60)};
    // A spec that fails to load through MLTK is read for its literals, with a warning, instead
    // of being an error: for the commands that act on a job already there (status, logs,
    // stop, download, train --resume), which must work whatever the local environment is now.
    bool literals_when_load_fails = false;
};

// load_settings(sources, warnings) with these options: the spec's SshMixin values come from
// MLTK's own loader when `spec_loader` (user settings < sidecar) is auto and python3 can import
// mltk, or is mltk; else from its literals. Throws mlt::Error (config, exit 2) when the spec
// fails to load through MLTK, besides load_settings' errors.
SshSettings load_settings(const SettingsSources& sources, const SpecOptions& options,
                          std::vector<SettingsWarning>* warnings);

}  // namespace mlt
