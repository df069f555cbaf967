// The settings table's shared parts: the row builders, the `ssh:` keys assembled from their
// groups, the lookups, and the type texts of messages and docs. The rows themselves are in
// settings_table_<section>.cpp.
#include "settings_table.h"

#include "settings_rows.h"

namespace mlt::settings_detail {

namespace {

// One of `words` as "`a`, `b` or `c`" (quote = "`") or "a, b or c".
std::string word_list(const std::vector<std::string_view>& words, const char* quote) {
    std::string out;
    for (size_t i = 0; i < words.size(); ++i) {
        if (i > 0) out += i + 1 == words.size() ? " or " : ", ";
        out += quote + std::string(words[i]) + quote;
    }
    return out;
}

std::string bound_text(double value) {
    auto whole = static_cast<long long>(value);
    if (static_cast<double>(whole) == value) return std::to_string(whole);
    std::string s = std::to_string(value);
    while (!s.empty() && s.back() == '0') s.pop_back();
    return s;
}

}  // namespace

namespace rows {

FieldDecl make(std::string_view name, SettingType type, std::string_view def,
               std::string_view example, std::string_view doc, ApplyFn apply) {
    FieldDecl f;
    f.name = name;
    f.type = type;
    f.default_text = def;
    f.example = example;
    f.doc = doc;
    f.apply = apply;
    return f;
}

FieldDecl choice(std::string_view name, std::vector<std::string_view> choices, std::string_view def,
                 std::string_view example, std::string_view doc, ApplyFn apply) {
    FieldDecl f = make(name, SettingType::choice, def, example, doc, apply);
    f.choices = std::move(choices);
    return f;
}

FieldDecl text(std::string_view name, std::string_view def, std::string_view example,
               std::string_view doc, ApplyFn apply, bool non_empty) {
    FieldDecl f = make(name, SettingType::string, def, example, doc, apply);
    f.non_empty = non_empty;
    return f;
}

FieldDecl flag(std::string_view name, std::string_view def, std::string_view example,
               std::string_view doc, ApplyFn apply) {
    return make(name, SettingType::boolean, def, example, doc, apply);
}

FieldDecl integer(std::string_view name, std::string_view def, std::string_view example,
                  std::string_view doc, double min, double max, ApplyFn apply) {
    FieldDecl f = make(name, SettingType::integer, def, example, doc, apply);
    f.min = min;
    f.max = max;
    return f;
}

FieldDecl number(std::string_view name, std::string_view def, std::string_view example,
                 std::string_view doc, double min, double max, ApplyFn apply) {
    FieldDecl f = make(name, SettingType::number, def, example, doc, apply);
    f.min = min;
    f.max = max;
    return f;
}

FieldDecl list(std::string_view name, std::string_view example, std::string_view doc, ApplyFn apply,
               std::optional<TransferDirection> transfer) {
    FieldDecl f = make(name, SettingType::string_list, "`[]`", example, doc, apply);
    f.transfer = transfer;
    return f;
}

FieldDecl special(std::string_view name, SettingType type, std::string_view def,
                  std::string_view example, std::string_view doc, ApplyFn apply) {
    return make(name, type, def, example, doc, apply);
}

}  // namespace rows

const std::vector<FieldDecl>& ssh_fields() {
    static const std::vector<FieldDecl> kFields = [] {
        std::vector<FieldDecl> fields = remote_setup_fields();
        for (auto group : {training_fields(), notify_fields(), link_and_transfer_fields()})
            fields.insert(fields.end(), group.begin(), group.end());
        return fields;
    }();
    return kFields;
}

std::string type_name(const FieldDecl& field) {
    switch (field.type) {
        case SettingType::string:
            return "string";
        case SettingType::boolean:
            return "bool";
        case SettingType::integer:
            return "integer (" + bound_text(field.min) + ".." + bound_text(field.max) + ")";
        case SettingType::number:
            return "number (" + bound_text(field.min) + ".." + bound_text(field.max) + ")";
        case SettingType::string_list:
            return "list of strings";
        case SettingType::environment:
            return "list of `NAME=VALUE` or mapping";
        case SettingType::connection:
            return "mapping or list of mappings";
        case SettingType::nodes:
        case SettingType::transfer:
        case SettingType::watch:
            return "mapping";
        case SettingType::stop_rules:
            return "list of regexes or plateau mappings";
        case SettingType::failure_rules:
            return "list of mappings";
        case SettingType::checkpoints:
        case SettingType::keep_best:
        case SettingType::provider:
            return "mapping";
        case SettingType::host_key_checking:
            return "`yes`, `accept-new` or `no`";
        case SettingType::choice:
            return word_list(field.choices, "`");
        case SettingType::notify_targets:
            return "list of mappings";
    }
    return "";
}

std::string type_description(const FieldDecl& field) {
    switch (field.type) {
        case SettingType::string:
            return field.non_empty ? "a non-empty string" : "a string";
        case SettingType::boolean:
            return "true or false";
        case SettingType::integer:
            return "an integer from " + bound_text(field.min) + " to " + bound_text(field.max);
        case SettingType::number:
            return "a number from " + bound_text(field.min) + " to " + bound_text(field.max);
        case SettingType::string_list:
            return "a list of strings";
        case SettingType::environment:
            return "a list of NAME=VALUE strings or a mapping of NAME: VALUE";
        case SettingType::connection:
            return "a mapping (hostname, port, username, key_filename) or a list of such mappings";
        case SettingType::nodes:
            return "a mapping (hosts, master_addr, master_port)";
        case SettingType::transfer:
            return "a mapping (connections, min_rate, stall_seconds)";
        case SettingType::watch:
            return "a mapping (every, idle_gpu_minutes, stop_idle, silent_minutes, stop_silent, "
                   "stop_when, on_failure, on_failure_defaults)";
        case SettingType::stop_rules:
            return "a list of rules, each a regex or a mapping (metric, mode, patience)";
        case SettingType::failure_rules:
            return "a list of rules, each a mapping (match, then)";
        case SettingType::checkpoints:
            return "a mapping (pattern, keep_last, keep_best, settle_seconds, marker)";
        case SettingType::keep_best:
            return "a mapping (metric, mode, n, file)";
        case SettingType::provider:
            return "a mapping (name, offer, max_price, image, disk_gb, teardown)";
        case SettingType::host_key_checking:
            return "one of yes, accept-new, no";
        case SettingType::choice:
            return "one of " + word_list(field.choices, "");
        case SettingType::notify_targets:
            return "a list of targets, each a mapping (url, format)";
    }
    return "";
}

const FieldDecl* find_field(const std::vector<FieldDecl>& fields, std::string_view name) {
    for (const auto& f : fields) {
        if (f.name == name) return &f;
    }
    return nullptr;
}

bool is_shell_name(std::string_view name) {
    if (name.empty()) return false;
    for (size_t i = 0; i < name.size(); ++i) {
        char c = name[i];
        bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
        bool digit = c >= '0' && c <= '9';
        if (!letter && !(digit && i > 0)) return false;
    }
    return true;
}

}  // namespace mlt::settings_detail
