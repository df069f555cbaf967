#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "mlt/config/settings.h"

namespace mlt {

class SpecLoadAhead;

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
    // A load through MLTK already under way (start_spec_load_ahead): its outcome is taken
    // when it loads this spec the same way, instead of running python3 again.
    std::shared_ptr<SpecLoadAhead> ahead;
};

// Starts loading the spec of `sources` through MLTK (python3) on a thread of its own, which
// only waits on that child, when load_settings(sources, options) would load it so
// (spec_loader auto or mltk, Python allowed): `train` connects meanwhile. nullptr when it
// would not, or when a settings file does not read (load_settings says why later). A load
// never taken is stopped (its process group killed) when the last owner lets it go.
std::shared_ptr<SpecLoadAhead> start_spec_load_ahead(const SettingsSources& sources,
                                                     const SpecOptions& options);

// load_settings(sources, warnings) with these options: the spec's SshMixin values come from
// MLTK's own loader when `spec_loader` (user settings < sidecar) is auto and python3 can import
// mltk, or is mltk; else from its literals. Throws mlt::Error (config, exit 2) when the spec
// fails to load through MLTK, besides load_settings' errors.
SshSettings load_settings(const SettingsSources& sources, const SpecOptions& options,
                          std::vector<SettingsWarning>* warnings);

}  // namespace mlt
