#pragma once

// Loading a model spec through the local MLTK (`mltk.core.load_mltk_model`) in a child
// process, to read its SshMixin values as `mltk ssh train` does. Private to src/config/.

#include <chrono>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "mlt/config/settings.h"

namespace mlt::settings_detail {

// How to load one spec.
struct SpecLoad {
    std::string spec_path;
    std::string python = "python3";  // looked up in PATH
    bool require_mltk = false;       // spec_loader: mltk (else auto)
    bool test = false;               // MLTK's test mode (a `-test` model)
    std::chrono::milliseconds timeout{std::chrono::seconds(60)};
};

// The spec's `ssh_*` values as MLTK's loader sets them, as a YAML document
// `{"ssh": {...}}` (keys in `skip` left out; unknown `ssh_*` properties warned about), or
// nothing when `python` cannot run or import `mltk` and it is not required. Everything the
// spec prints is logged at debug level (shown with -v). Throws mlt::Error (config) when the
// spec fails to load (its error, its last lines of output logged first), does not load
// within the timeout (its process group is killed), or MLTK is required but missing.
std::optional<std::string> mltk_spec_yaml(const SpecLoad& load, const std::set<std::string>& skip,
                                          std::vector<SettingsWarning>* warnings);

}  // namespace mlt::settings_detail
