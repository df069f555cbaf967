#pragma once

// The YAML guard of the settings reader: a settings file parsed safely (one document, no NUL,
// a bounded depth), mappings read as PyYAML reads them (merge keys, the last of a repeated key
// kept), unknown keys warned about, and every message placed at file:line:column. Private to
// src/config/.

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "mlt/config/settings.h"
#include "settings_table.h"

namespace mlt::settings_detail {

// The pairs of a mapping, in the order they count.
using Entries = std::vector<std::pair<YAML::Node, YAML::Node>>;

// What the user wrote, for "got ..." in messages: its shape, or a scalar's (shortened) text.
std::string describe(const YAML::Node& node);

// The hint of a message about `field`: how to write it.
std::string hint_for(const FieldDecl& field);

// `s` in lower case (ASCII).
std::string lower(std::string s);

// One settings file as YAML. Every message starts with file:line:column (1-based) of the
// offending node; warnings go to `warnings` (when not null).
class YamlGuard {
  public:
    YamlGuard(std::string file, std::vector<SettingsWarning>* warnings)
        : file_(std::move(file)), warnings_(warnings) {}

    // Parses `text` (and keeps it, for where_in()); a second document is ignored with a
    // warning. Throws mlt::Error (config) for malformed YAML, a NUL anywhere, or nesting deeper
    // than a fixed limit.
    YAML::Node load(const std::string& text);

    // Where `mark` / `node` is: "file:line:column", or the file alone when it has no place.
    std::string where(const YAML::Mark& mark) const;
    std::string where(const YAML::Node& node) const { return where(node.Mark()); }

    // Where byte `offset` of the scalar `node`'s value stands: "file:line:column" when the
    // scalar is plain or single-quoted and its text is the value's up to that byte, on one
    // line; nothing otherwise (double-quoted, a block, an escape or a line break before it).
    std::optional<std::string> where_in(const YAML::Node& node, std::size_t offset) const;

    // Adds a warning placed at `node`.
    void warn(const YAML::Node& node, std::string message) const;

    // Throws mlt::Error (config): `key` (at `node`) is not what `field` accepts.
    [[noreturn]] void type_error(const YAML::Node& node, const std::string& key,
                                 const FieldDecl& field) const;

    // The pairs of the mapping `map` (named `prefix` in messages) in file order, the pairs of
    // merge keys (<<) first. Of a repeated key only the last is kept, and the earlier one gets
    // a warning. Throws mlt::Error (config) for a key that is no name or a bad merge key.
    Entries entries(const YAML::Node& map, const std::string& prefix, int depth = 0) const;

    // Warns that `key` of `prefix` is unknown (ignored), naming the closest of `fields` (or
    // the nested section it belongs to) when it looks like a slip.
    void warn_unknown(const YAML::Node& key, const std::string& prefix,
                      const std::vector<FieldDecl>& fields) const;

  private:
    void reject_nul(const YAML::Node& node, int depth = 0) const;
    void merged(const YAML::Node& value, const std::string& prefix, Entries& out, int depth) const;
    void check_depth(const YAML::Node& node, int depth) const;

    std::string file_;
    std::vector<SettingsWarning>* warnings_;
    std::string text_;
};

}  // namespace mlt::settings_detail
