#pragma once

// Reading one settings file into SshSettings. Private to src/config/.

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "mlt/config/settings.h"
#include "settings_table.h"

namespace mlt::settings_detail {

// What one settings file sets, read but not yet merged: each key with a non-null value, in
// file order (a top-level `model_paths` first, under that name).
struct SettingsLayer {
    std::vector<std::pair<const FieldDecl*, Value>> values;
};

// Parses `text` (the contents of `file`): its `ssh:` section and top-level `model_paths`.
// Throws mlt::Error (config) naming file:line:column for malformed YAML, a wrong type or a
// broken path rule; unknown or repeated keys are appended to `warnings` (when not null).
SettingsLayer read_settings_file(const std::string& file, const std::string& text,
                                 std::vector<SettingsWarning>* warnings);

// The `ssh:` keys `layer` sets.
std::set<std::string> keys_of(const SettingsLayer& layer);

// Applies `layer` on top of `settings` with each key's merge rule.
void apply_layer(SettingsLayer&& layer, SshSettings& settings);

}  // namespace mlt::settings_detail
