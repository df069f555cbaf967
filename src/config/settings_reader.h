#pragma once

// Reading one settings file into SshSettings. Private to src/config/.

#include <string>
#include <vector>

#include "mlt/config/settings.h"

namespace mlt::settings_detail {

// Parses `text` (the contents of `file`) and applies its `ssh:` section and top-level
// `model_paths` on top of `settings` with each key's merge rule. Throws mlt::Error (config)
// naming file:line:column for malformed YAML, a wrong type or a broken path rule; unknown
// or repeated keys are appended to `warnings` (when not null).
void apply_settings_file(const std::string& file, const std::string& text, SshSettings& settings,
                         std::vector<SettingsWarning>* warnings);

// Levenshtein distance, for "did you mean" suggestions.
size_t edit_distance(std::string_view a, std::string_view b);

}  // namespace mlt::settings_detail
