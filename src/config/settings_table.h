#pragma once

// The declaration table of the `ssh:` settings (settings are declared once): one row per key drives
// parsing, error messages, merging and docs/settings.md. The rows are in
// settings_table_<section>.cpp. Private to src/config/.

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "mlt/config/settings.h"

namespace mlt::settings_detail {

// The shape a key accepts in YAML.
enum class SettingType {
    string,             // a scalar, kept as written
    boolean,            // true/false (also yes/no/on/off)
    integer,            // decimal, within [min, max]
    number,             // decimal or float, >= min
    string_list,        // a list of scalars
    environment,        // a list of NAME=VALUE strings, or a mapping NAME: VALUE
    connection,         // a mapping of connection_fields(), or a list of them
    nodes,              // a mapping of nodes_fields()
    transfer,           // a mapping of transfer_fields()
    watch,              // a mapping of watch_fields()
    stop_rules,         // a list of rules: a regex, or {metric, mode, patience}
    failure_rules,      // a list of {match, then}
    checkpoints,        // a mapping of checkpoints_fields(), with keep_best inside
    keep_best,          // a mapping of keep_best_fields()
    provider,           // a mapping of provider_fields()
    host_key_checking,  // yes | accept-new | no
    choice,             // one of the words in FieldDecl::choices, kept as a string
    notify_targets,     // a list of mappings of notify_target_fields()
};

// `nodes:` as read from one file; keys that are absent leave the lower layer's value.
struct NodesValue {
    std::optional<std::string> master_addr;
    std::optional<int> master_port;
    std::optional<std::vector<std::string>> hosts;
    std::optional<int> count;
    std::optional<std::string> connections;  // `transfer:` (the same reader)
    std::optional<int> min_rate;             // `transfer:`
    std::optional<int> stall_seconds;        // `transfer:`
};

// `watch:` as read from one file.
struct WatchValue {
    std::optional<int> every;
    std::optional<double> idle_gpu_minutes;
    std::optional<bool> stop_idle;
    std::optional<double> silent_minutes;
    std::optional<bool> stop_silent;
    std::optional<std::vector<StopRule>> stop_when;
    std::optional<std::vector<FailureRule>> on_failure;
    std::optional<bool> on_failure_defaults;
};

using EnvironmentList = std::vector<std::pair<std::string, std::string>>;

// One key's value as read from one file, before it is applied to SshSettings.
using Value =
    std::variant<std::string, bool, int, double, std::vector<std::string>, EnvironmentList,
                 std::vector<ConnectionSettings>, NodesValue, HostKeyChecking, WatchValue,
                 std::vector<StopRule>, std::vector<NotifyTarget>, std::vector<FailureRule>,
                 CheckpointSettings, ProviderSettings>;

// Applies one file's value on top of the lower layers (the key's merge rule).
using ApplyFn = void (*)(Value&& value, SshSettings& settings);

// One declared key. Nested keys (connection.*, nodes.*) have no apply function.
struct FieldDecl {
    std::string_view name;
    SettingType type = SettingType::string;
    std::string_view default_text;              // as shown in the docs (Markdown)
    std::string_view example;                   // YAML flow text: error hints and the docs example
    std::string_view doc;                       // one line
    double min = 0;                             // integer/number lower bound
    double max = 0;                             // integer/number upper bound (each has one)
    bool non_empty = false;                     // string may not be ""
    std::optional<TransferDirection> transfer;  // list entries follow MLTK's path rules
    std::vector<std::string_view> choices;      // choice: the accepted words
    ApplyFn apply = nullptr;
};

// The keys of `ssh:`, in documentation order.
const std::vector<FieldDecl>& ssh_fields();

// The keys of one `connection` mapping.
const std::vector<FieldDecl>& connection_fields();

// paramiko's other SSHClient.connect arguments: accepted in `connection` for MLTK's settings
// files and ignored with a warning.
const std::vector<std::string_view>& ignored_connection_keys();

// The keys of the `nodes` mapping.
const std::vector<FieldDecl>& nodes_fields();
const std::vector<FieldDecl>& transfer_fields();
const std::vector<FieldDecl>& watch_fields();
// The keys of a plateau rule in watch.stop_when.
const std::vector<FieldDecl>& plateau_fields();
// The keys of one rule in watch.on_failure.
const std::vector<FieldDecl>& failure_rule_fields();
// The keys of `checkpoints` and of its keep_best.
const std::vector<FieldDecl>& checkpoints_fields();
const std::vector<FieldDecl>& keep_best_fields();
// The keys of `provider`.
const std::vector<FieldDecl>& provider_fields();
// The keys of one `notify` target.
const std::vector<FieldDecl>& notify_target_fields();

// Short type name for the docs table, e.g. "integer (1..65535)".
std::string type_name(const FieldDecl& field);

// What an error says the key must be, e.g. "an integer from 1 to 65535".
std::string type_description(const FieldDecl& field);

// The row of `name` in `fields`, or nullptr.
const FieldDecl* find_field(const std::vector<FieldDecl>& fields, std::string_view name);

// Whether `name` is a valid shell variable name: [A-Za-z_][A-Za-z0-9_]*.
bool is_shell_name(std::string_view name);

}  // namespace mlt::settings_detail
