// Reading one settings file: its top level (`ssh:` and MLTK's `model_paths`), the keys of
// `ssh:`, and applying what it sets on top of the lower layers.
#include "settings_reader.h"

#include <yaml-cpp/yaml.h>

#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "mlt/util/error.h"
#include "settings_table.h"
#include "settings_values.h"
#include "settings_yaml.h"

namespace mlt::settings_detail {

namespace {

// No ssh settings, but top-level keys that are ssh settings: an `ssh:` block that lost its
// indentation (`ssh:` then `remote_dir: x` at column 0) would otherwise yield nothing silently.
void warn_stray_ssh_keys(const YamlGuard& yaml, const YAML::Node& root) {
    std::vector<std::string> names;
    std::optional<YAML::Node> first;
    for (const auto& it : root) {
        const std::string name = it.first.Scalar();
        if (name == "model_paths" || name == "ssh") continue;
        if (!find_field(ssh_fields(), name) && !find_field(connection_fields(), name)) continue;
        names.push_back(name);
        if (!first) first.emplace(it.first);
    }
    if (!first) return;
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    yaml.warn(*first, "no ssh settings here, but top-level " + list +
                          " (ignored there): indent the settings below `ssh:`");
}

void read_section(const YamlGuard& yaml, const ValueReader& values, const YAML::Node& section,
                  SettingsLayer& layer) {
    for (const auto& [key, value] : yaml.entries(section, "ssh")) {
        const FieldDecl* field = find_field(ssh_fields(), key.Scalar());
        if (!field) {
            yaml.warn_unknown(key, "ssh", ssh_fields());
            continue;
        }
        // `key:` with no value reads as "not set here", like an absent key.
        if (value.IsNull()) continue;
        Value read_value = values.read(*field, value, "ssh." + key.Scalar());
        layer.values.emplace_back(field, std::move(read_value));
    }
}

}  // namespace

SettingsLayer read_settings_file(const std::string& file, const std::string& text,
                                 std::vector<SettingsWarning>* warnings) {
    YamlGuard yaml(file, warnings);
    const ValueReader values(yaml);
    SettingsLayer layer;
    const YAML::Node root = yaml.load(text);
    if (root.IsNull()) return layer;
    if (!root.IsMap())
        throw config_error(
            yaml.where(root) + ": a settings file must be a mapping, got " + describe(root),
            "write `ssh:` and the settings indented below it");

    // Other top-level keys belong to MLTK. Of a repeated key YAML loaders keep the last.
    std::optional<YAML::Node> top_model_paths;
    std::optional<YAML::Node> section;
    for (const auto& it : root) {
        const std::string name = it.first.Scalar();
        if (name != "model_paths" && name != "ssh") continue;
        std::optional<YAML::Node>& slot = name == "ssh" ? section : top_model_paths;
        if (slot) yaml.warn(it.first, "duplicate setting " + name + " (the later one wins)");
        // emplace rebinds; assigning to an engaged YAML::Node would overwrite the tree node.
        slot.emplace(it.second);
    }
    // MLTK keeps model_paths at the top level; it comes before ssh.model_paths in the list.
    if (top_model_paths && !top_model_paths->IsNull()) {
        const FieldDecl& field = *find_field(ssh_fields(), "model_paths");
        layer.values.emplace_back(&field, values.read(field, *top_model_paths, "model_paths"));
    }
    if (!section || section->IsNull()) {
        warn_stray_ssh_keys(yaml, root);
        return layer;
    }
    if (!section->IsMap())
        throw config_error(
            yaml.where(*section) + ": ssh must be a mapping of settings, got " + describe(*section),
            "write the settings indented below `ssh:`, e.g. `  remote_dir: ~/work`");
    read_section(yaml, values, *section, layer);
    return layer;
}

std::set<std::string> keys_of(const SettingsLayer& layer) {
    std::set<std::string> keys;
    for (const auto& [field, value] : layer.values) keys.emplace(field->name);
    return keys;
}

void apply_layer(SettingsLayer&& layer, SshSettings& settings) {
    for (auto& [field, value] : layer.values) field->apply(std::move(value), settings);
}

}  // namespace mlt::settings_detail
