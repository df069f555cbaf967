#pragma once

// What the files of the settings table (settings_table*.cpp) share: the builders of a row,
// the merge rules, and the groups of `ssh:` keys. Private to those files.

#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "settings_table.h"

namespace mlt::settings_detail {

namespace rows {

// A row of `type`; the builders below fill what their type needs.
FieldDecl make(std::string_view name, SettingType type, std::string_view def,
               std::string_view example, std::string_view doc, ApplyFn apply);
// A choice among `choices`, kept as the word.
FieldDecl choice(std::string_view name, std::vector<std::string_view> choices, std::string_view def,
                 std::string_view example, std::string_view doc, ApplyFn apply);
// A string (`non_empty`: "" refused), a boolean, an integer or a number within [min, max].
FieldDecl text(std::string_view name, std::string_view def, std::string_view example,
               std::string_view doc, ApplyFn apply, bool non_empty = false);
FieldDecl flag(std::string_view name, std::string_view def, std::string_view example,
               std::string_view doc, ApplyFn apply);
FieldDecl integer(std::string_view name, std::string_view def, std::string_view example,
                  std::string_view doc, double min, double max, ApplyFn apply);
FieldDecl number(std::string_view name, std::string_view def, std::string_view example,
                 std::string_view doc, double min, double max, ApplyFn apply);
// A list of strings (default `[]`); `transfer`: its entries follow MLTK's path rules.
FieldDecl list(std::string_view name, std::string_view example, std::string_view doc, ApplyFn apply,
               std::optional<TransferDirection> transfer = std::nullopt);
// A key of its own type (a mapping, the environment, ...).
FieldDecl special(std::string_view name, SettingType type, std::string_view def,
                  std::string_view example, std::string_view doc, ApplyFn apply);

// Scalars and `connection`: the higher layer replaces the lower one.
template <auto Member>
void assign(Value&& value, SshSettings& settings) {
    using T = std::decay_t<decltype(settings.*Member)>;
    settings.*Member = std::get<T>(std::move(value));
}

// Settings whose unset state means something (create_venv, venv_packages): the higher
// layer replaces the lower one, and "not set anywhere" stays visible.
template <auto Member>
void assign_set(Value&& value, SshSettings& settings) {
    using T = typename std::decay_t<decltype(settings.*Member)>::value_type;
    settings.*Member = std::get<T>(std::move(value));
}

// List settings: the lower layer's entries first, then this layer's.
template <auto Member>
void append(Value&& value, SshSettings& settings) {
    auto& list = std::get<std::vector<std::string>>(value);
    auto& target = settings.*Member;
    target.insert(target.end(), list.begin(), list.end());
}

}  // namespace rows

// The groups of `ssh:` keys, in documentation order (ssh_fields() joins them).
// Where and how the remote side runs (settings_table_run.cpp).
std::vector<FieldDecl> remote_setup_fields();
// What a run transfers and runs, in the order of a run (settings_table_run.cpp).
std::vector<FieldDecl> training_fields();
// The link, syncing, the multi-node and cost settings, the workspace transfer
// (settings_table_link.cpp).
std::vector<FieldDecl> link_and_transfer_fields();
// Notifications: the targets, the local command, the side that sends (settings_table_notify.cpp).
std::vector<FieldDecl> notify_fields();

// How a layer's `nodes`, `transfer` and `watch` apply over the lower layers.
void merge_nodes(Value&& value, SshSettings& settings);
void merge_transfer(Value&& value, SshSettings& settings);
void merge_watch(Value&& value, SshSettings& settings);
void merge_checkpoints(Value&& value, SshSettings& settings);
void merge_provider(Value&& value, SshSettings& settings);
// The row of `provider` in the table (settings_provider.cpp).
FieldDecl provider_row();

}  // namespace mlt::settings_detail
