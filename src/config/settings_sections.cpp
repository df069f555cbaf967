// Reading the nested sections of `ssh:`: connection (one mapping or one per node), nodes and
// transfer, and watch with its stop_when and on_failure rules.
#include <algorithm>
#include <cmath>
#include <optional>
#include <regex>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "mlt/config/stop_rule_spec.h"
#include "mlt/util/error.h"
#include "settings_values.h"

namespace mlt::settings_detail {

std::vector<ConnectionSettings> ValueReader::read_connections(const FieldDecl& field,
                                                              const YAML::Node& node,
                                                              const std::string& key) const {
    if (node.IsMap()) return std::vector<ConnectionSettings>{read_connection(node, key)};
    if (!node.IsSequence()) yaml_.type_error(node, key, field);
    std::vector<ConnectionSettings> out;
    for (size_t i = 0; i < node.size(); ++i) {
        std::string item = key + "[" + std::to_string(i) + "]";
        if (!node[i].IsMap()) yaml_.type_error(node[i], item, field);
        out.push_back(read_connection(node[i], item));
    }
    return out;
}

ConnectionSettings ValueReader::read_connection(const YAML::Node& node,
                                                const std::string& key) const {
    ConnectionSettings out;
    for (const auto& [k, v] : yaml_.entries(node, key)) {
        const std::string& name = k.Scalar();
        const FieldDecl* field = find_field(connection_fields(), name);
        if (!field) {
            const auto& ignored = ignored_connection_keys();
            if (std::find(ignored.begin(), ignored.end(), name) != ignored.end())
                yaml_.warn(
                    k, key + "." + name + " is a paramiko option that mlt does not use (ignored)");
            else
                yaml_.warn_unknown(k, key, connection_fields());
            continue;
        }
        if (v.IsNull()) continue;
        // A password or passphrase never reaches a message: string keys take any scalar, and
        // describe() names only the shape of a non-scalar.
        Value value = read(*field, v, key + "." + name);
        if (name == "port") {
            out.port = std::get<int>(value);
        } else if (name == "timeout") {
            out.timeout_s = static_cast<int>(std::ceil(std::get<double>(value)));
        } else if (name == "look_for_keys") {
            out.look_for_keys = std::get<bool>(value);
        } else if (name == "allow_agent") {
            out.allow_agent = std::get<bool>(value);
        } else {
            // An empty string is "not set", as MLTK's `key_filename: ''`.
            std::string text = std::get<std::string>(std::move(value));
            if (text.empty()) continue;
            if (name == "hostname")
                out.hostname = std::move(text);
            else if (name == "username")
                out.username = std::move(text);
            else if (name == "key_filename")
                out.key_filename = std::move(text);
            else if (name == "password")
                out.password = std::move(text);
            else
                out.passphrase = std::move(text);
        }
    }
    return out;
}

NodesValue ValueReader::read_nodes(const YAML::Node& node, const std::string& key,
                                   const std::vector<FieldDecl>& fields) const {
    NodesValue out;
    each_known(node, key, fields,
               [&](const std::string& name, const FieldDecl& field, const YAML::Node& v) {
                   if (v.IsNull()) return;
                   Value value = read(field, v, key + "." + name);
                   if (name == "master_port")
                       out.master_port = std::get<int>(value);
                   else if (name == "hosts")
                       out.hosts = std::get<std::vector<std::string>>(std::move(value));
                   else if (name == "connections")
                       out.connections = std::get<std::string>(std::move(value));
                   else if (name == "min_rate")
                       out.min_rate = std::get<int>(value);
                   else if (name == "stall_seconds")
                       out.stall_seconds = std::get<int>(value);
                   else if (name == "count")
                       out.count = std::get<int>(value);
                   else
                       out.master_addr = std::get<std::string>(value);
               });
    return out;
}

WatchValue ValueReader::read_watch(const YAML::Node& node, const std::string& key) const {
    WatchValue out;
    each_known(node, key, watch_fields(),
               [&](const std::string& name, const FieldDecl& field, const YAML::Node& v) {
                   if (v.IsNull()) return;
                   Value value = read(field, v, key + "." + name);
                   if (name == "every")
                       out.every = std::get<int>(value);
                   else if (name == "idle_gpu_minutes")
                       out.idle_gpu_minutes = std::get<double>(value);
                   else if (name == "stop_idle")
                       out.stop_idle = std::get<bool>(value);
                   else if (name == "silent_minutes")
                       out.silent_minutes = std::get<double>(value);
                   else if (name == "stop_silent")
                       out.stop_silent = std::get<bool>(value);
                   else if (name == "on_failure")
                       out.on_failure = std::get<std::vector<FailureRule>>(std::move(value));
                   else if (name == "on_failure_defaults")
                       out.on_failure_defaults = std::get<bool>(value);
                   else
                       out.stop_when = std::get<std::vector<StopRule>>(std::move(value));
               });
    return out;
}

namespace {

FailureAction parse_failure_action(const std::string& word) {
    if (word == "exclude_host") return FailureAction::exclude_host;
    if (word == "restart") return FailureAction::restart;
    return FailureAction::no_restart;  // the choice allows nothing else
}

// A rule that cannot be used, as a settings error: placed at the offending character of its
// regex (the node `regex`) when the scalar shows it as it is, else at the scalar, with the
// character's number.
[[noreturn]] void throw_rule_error(const YamlGuard& yaml, const YAML::Node& regex,
                                   const std::string& item, const RuleError& error) {
    std::string where = yaml.where(regex), why = error.why;
    if (error.offset) {
        if (auto at = yaml.where_in(regex, *error.offset))
            where = *at;
        else
            why += " (at character " + std::to_string(*error.offset + 1) + " of the regex)";
    }
    throw config_error(where + ": " + item + " is no usable rule: " + why,
                       "fix the rule; see docs/usage.md, \"Watching a run\"");
}

}  // namespace

// Each rule is checked here, before anything remote: a regex that does not compile, or that
// the host cannot evaluate, is a settings error with its place.
std::vector<StopRule> ValueReader::read_rules(const FieldDecl& field, const YAML::Node& node,
                                              const std::string& key) const {
    if (!node.IsSequence()) yaml_.type_error(node, key, field);
    std::vector<StopRule> out;
    for (size_t i = 0; i < node.size(); ++i) {
        const std::string item = key + "[" + std::to_string(i) + "]";
        StopRule rule;
        std::optional<YAML::Node> metric;
        if (node[i].IsMap())
            rule = read_plateau(node[i], item, metric);
        else if (node[i].IsScalar() && !node[i].Scalar().empty())
            rule.regex = node[i].Scalar();
        else
            yaml_.type_error(node[i], item, field);
        if (auto error = rule_error(rule))
            throw_rule_error(yaml_, metric ? *metric : node[i], item, *error);
        out.push_back(std::move(rule));
    }
    return out;
}

std::vector<FailureRule> ValueReader::read_failure_rules(const FieldDecl& field,
                                                         const YAML::Node& node,
                                                         const std::string& key) const {
    if (!node.IsSequence()) yaml_.type_error(node, key, field);
    std::vector<FailureRule> out;
    for (size_t i = 0; i < node.size(); ++i) {
        const std::string item = key + "[" + std::to_string(i) + "]";
        if (!node[i].IsMap()) yaml_.type_error(node[i], item, field);
        FailureRule rule;
        std::optional<YAML::Node> match;
        bool then = false;
        each_known(node[i], item, failure_rule_fields(),
                   [&](const std::string& name, const FieldDecl& f, const YAML::Node& v) {
                       const Value value = read(f, v, item + "." + name);
                       if (name == "match") {
                           rule.regex = std::get<std::string>(value);
                           match.emplace(v);
                       } else {
                           rule.then = parse_failure_action(std::get<std::string>(value));
                           then = true;
                       }
                   });
        if (!match || !then)
            throw config_error(
                yaml_.where(node[i]) + ": " + item + " needs both `match` and `then`",
                "e.g. {match: 'CUDA out of memory', then: no_restart}");
        try {
            std::regex(rule.regex, std::regex::ECMAScript);
        } catch (const std::regex_error& e) {
            throw config_error(
                yaml_.where(*match) + ": " + item + ".match is not a valid regex: " + e.what(),
                "fix the rule; see docs/usage.md, \"When an attempt fails\"");
        }
        out.push_back(std::move(rule));
    }
    return out;
}

StopRule ValueReader::read_plateau(const YAML::Node& node, const std::string& key,
                                   std::optional<YAML::Node>& metric) const {
    StopRule rule;
    rule.plateau = true;
    each_known(node, key, plateau_fields(),
               [&](const std::string& name, const FieldDecl& field, const YAML::Node& v) {
                   const Value value = read(field, v, key + "." + name);
                   if (name == "metric") {
                       rule.regex = std::get<std::string>(value);
                       metric.emplace(v);  // rebinds: assigning would overwrite the tree's node
                   } else if (name == "mode") {
                       rule.maximize = std::get<std::string>(value) == "max";
                   } else {
                       rule.patience = std::get<int>(value);
                   }
               });
    if (rule.regex.empty())
        throw config_error(yaml_.where(node) + ": " + key + " has no metric",
                           "give the metric's regex, e.g. {metric: 'val_loss[=:] *([0-9.eE+-]+)', "
                           "mode: min, patience: 5}");
    return rule;
}

}  // namespace mlt::settings_detail
