// Reading one setting's value by its declared type: scalars, numbers in range, lists with
// MLTK's path rules, and the environment.
#include "settings_values.h"

#include <string>
#include <utility>
#include <vector>

#include "mlt/util/error.h"
#include "mlt/util/text.h"

namespace mlt::settings_detail {

Value ValueReader::read(const FieldDecl& field, const YAML::Node& node,
                        const std::string& key) const {
    switch (field.type) {
        case SettingType::string:
            return read_scalar(field, node, key);
        case SettingType::boolean: {
            std::string s = lower(read_scalar(field, node, key));
            if (s == "true" || s == "yes" || s == "on") return true;
            if (s == "false" || s == "no" || s == "off") return false;
            yaml_.type_error(node, key, field);
        }
        case SettingType::integer:
            return read_integer(field, node, key);
        case SettingType::number:
            return read_number(field, node, key);
        case SettingType::string_list:
            return read_list(field, node, key);
        case SettingType::environment:
            return read_environment(field, node, key);
        case SettingType::connection:
            return read_connections(field, node, key);
        case SettingType::nodes:
        case SettingType::transfer: {
            if (!node.IsMap()) yaml_.type_error(node, key, field);
            return read_nodes(
                node, key, field.type == SettingType::nodes ? nodes_fields() : transfer_fields());
        }
        case SettingType::watch:
            if (!node.IsMap()) yaml_.type_error(node, key, field);
            return read_watch(node, key);
        case SettingType::stop_rules:
            return read_rules(field, node, key);
        case SettingType::failure_rules:
            return read_failure_rules(field, node, key);
        case SettingType::checkpoints:
            if (!node.IsMap()) yaml_.type_error(node, key, field);
            return read_checkpoints(node, key);
        case SettingType::provider:
            if (!node.IsMap()) yaml_.type_error(node, key, field);
            return read_provider(node, key);
        case SettingType::keep_best:
            yaml_.type_error(node, key, field);  // read inside read_checkpoints
        case SettingType::host_key_checking: {
            // YAML 1.1 readers turn unquoted yes/no into booleans; both spellings mean the
            // OpenSSH words here.
            if (auto mode = parse_host_key_checking(read_scalar(field, node, key))) return *mode;
            yaml_.type_error(node, key, field);
        }
        case SettingType::choice: {
            std::string word = read_scalar(field, node, key);
            for (auto c : field.choices)
                if (word == c) return word;
            yaml_.type_error(node, key, field);
        }
        case SettingType::notify_targets:
            return read_notify(field, node, key);
    }
    yaml_.type_error(node, key, field);
}

std::string ValueReader::read_scalar(const FieldDecl& field, const YAML::Node& node,
                                     const std::string& key) const {
    if (!node.IsScalar()) yaml_.type_error(node, key, field);
    if (field.non_empty && node.Scalar().empty()) yaml_.type_error(node, key, field);
    return node.Scalar();
}

int ValueReader::read_integer(const FieldDecl& field, const YAML::Node& node,
                              const std::string& key) const {
    const std::string s = read_scalar(field, node, key);
    // Decimal only: YAML would read 0x8fb as hex and 010 as octal.
    const auto value =
        parse_decimal(s, static_cast<long long>(field.min), static_cast<long long>(field.max));
    if (!value) yaml_.type_error(node, key, field);
    return static_cast<int>(*value);
}

double ValueReader::read_number(const FieldDecl& field, const YAML::Node& node,
                                const std::string& key) const {
    const std::string s = read_scalar(field, node, key);
    // YAML's `+1` is a number too; hex, "inf" and "nan" are no sane setting (parse_real).
    const auto value = parse_real(s.rfind('+', 0) == 0 ? s.substr(1) : s, field.min, field.max);
    if (!value) yaml_.type_error(node, key, field);
    return *value;
}

std::vector<std::string> ValueReader::read_list(const FieldDecl& field, const YAML::Node& node,
                                                const std::string& key) const {
    if (!node.IsSequence()) yaml_.type_error(node, key, field);
    std::vector<std::string> out;
    for (const auto& item : node) {
        if (!item.IsScalar())
            throw config_error(
                yaml_.where(item) + ": " + key + " entries must be strings, got " + describe(item),
                hint_for(field));
        if (field.transfer) {
            try {
                parse_transfer_spec(item.Scalar(), *field.transfer);
            } catch (const Error& e) {
                throw config_error(yaml_.where(item) + ": " + e.what(), e.hint());
            }
        }
        out.push_back(item.Scalar());
    }
    return out;
}

// MLT_* are the job wrapper's own variables (MLT_LOG_DIR says where the logs to pull are):
// the settings may not replace them. True (after a warning) for such a name.
bool ValueReader::reserved_name(const YAML::Node& node, const std::string& key,
                                const std::string& name) const {
    if (name.rfind("MLT_", 0) != 0) return false;
    yaml_.warn(node,
               key + " sets " + name + ", one of mlt's own MLT_ variables (ignored; mlt sets it)");
    return true;
}

EnvironmentList ValueReader::read_environment(const FieldDecl& field, const YAML::Node& node,
                                              const std::string& key) const {
    const std::string name_hint =
        "a variable name is letters, digits and '_' and does not start with a digit";
    EnvironmentList out;
    if (node.IsSequence()) {
        for (const auto& item : node) {
            if (!item.IsScalar())
                throw config_error(yaml_.where(item) + ": " + key +
                                       " entries must be NAME=VALUE strings, got " + describe(item),
                                   hint_for(field));
            // As MLTK reads it: a bare NAME is NAME= (empty), and a value wrapped in matching
            // quotes loses them (`TEST="a b"` exports `a b`).
            const std::string& s = item.Scalar();
            size_t eq = s.find('=');
            std::string name = s.substr(0, eq);
            if (!is_shell_name(name))
                throw config_error(yaml_.where(item) + ": " + key + " entry '" + s + "': '" + name +
                                       "' is not a valid variable name",
                                   name_hint);
            if (reserved_name(item, key, name)) continue;
            std::string value = eq == std::string::npos ? std::string() : s.substr(eq + 1);
            if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') &&
                value.back() == value.front())
                value = value.substr(1, value.size() - 2);
            out.emplace_back(name, value);
        }
        return out;
    }
    if (!node.IsMap()) yaml_.type_error(node, key, field);
    for (const auto& [k, v] : yaml_.entries(node, key)) {
        const std::string& name = k.Scalar();
        if (!is_shell_name(name))
            throw config_error(
                yaml_.where(k) + ": " + key + ": '" + name + "' is not a valid variable name",
                name_hint);
        if (reserved_name(k, key, name)) continue;
        // Numbers and booleans are kept as written: `DEBUG: 1` exports DEBUG=1.
        if (v.IsNull())
            out.emplace_back(name, "");
        else if (v.IsScalar())
            out.emplace_back(name, v.Scalar());
        else
            throw config_error(yaml_.where(v) + ": " + key + "." + name +
                                   " must be a string, number or bool, got " + describe(v),
                               "write it like `" + name + ": value`");
    }
    return out;
}

}  // namespace mlt::settings_detail
