#include "settings_reader.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "mlt/config/stop_rule_spec.h"
#include "mlt/util/error.h"
#include "mlt/util/text.h"
#include "settings_table.h"

namespace mlt::settings_detail {

namespace {

using Entries = std::vector<std::pair<YAML::Node, YAML::Node>>;

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// What the user wrote, for "got ..." in messages.
std::string describe(const YAML::Node& node) {
    switch (node.Type()) {
        case YAML::NodeType::Null:
            return "an empty value";
        case YAML::NodeType::Sequence:
            return "a list";
        case YAML::NodeType::Map:
            return "a mapping";
        case YAML::NodeType::Scalar: {
            std::string s = node.Scalar();
            if (s.size() > 40) s = s.substr(0, 37) + "...";
            return "'" + s + "'";
        }
        case YAML::NodeType::Undefined:
            break;
    }
    return "nothing";
}

std::string hint_for(const FieldDecl& field) {
    return "write it like `" + std::string(field.name) + ": " + std::string(field.example) + "`";
}

// Reads one file. Every message starts with file:line:column (1-based) of the offending node.
class FileReader {
  public:
    FileReader(std::string file, std::vector<SettingsWarning>* warnings)
        : file_(std::move(file)), warnings_(warnings) {}

    void load(const std::string& text, SettingsLayer& layer) const;

  private:
    std::string where(const YAML::Mark& mark) const {
        if (mark.is_null()) return file_;
        return file_ + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
    }
    std::string where(const YAML::Node& node) const { return where(node.Mark()); }

    void warn(const YAML::Node& node, std::string message) const {
        if (!warnings_) return;
        YAML::Mark m = node.Mark();
        warnings_->push_back(SettingsWarning{file_, m.is_null() ? 0 : m.line + 1,
                                             m.is_null() ? 0 : m.column + 1, std::move(message)});
    }

    [[noreturn]] void type_error(const YAML::Node& node, const std::string& key,
                                 const FieldDecl& field) const {
        throw config_error(where(node) + ": " + key + " must be " + type_description(field) +
                               ", got " + describe(node),
                           hint_for(field));
    }

    void reject_nul(const YAML::Node& node, int depth = 0) const;
    void merged(const YAML::Node& value, const std::string& prefix, Entries& out, int depth) const;
    Entries entries(const YAML::Node& map, const std::string& prefix, int depth = 0) const;
    void check_depth(const YAML::Node& node, int depth) const;
    void warn_unknown(const YAML::Node& key, const std::string& prefix,
                      const std::vector<FieldDecl>& fields) const;
    void read_section(const YAML::Node& section, SettingsLayer& layer) const;
    Value read(const FieldDecl& field, const YAML::Node& node, const std::string& key) const;
    std::string read_scalar(const FieldDecl& field, const YAML::Node& node,
                            const std::string& key) const;
    int read_integer(const FieldDecl& field, const YAML::Node& node, const std::string& key) const;
    double read_number(const FieldDecl& field, const YAML::Node& node,
                       const std::string& key) const;
    std::vector<std::string> read_list(const FieldDecl& field, const YAML::Node& node,
                                       const std::string& key) const;
    bool reserved_name(const YAML::Node& node, const std::string& key,
                       const std::string& name) const;
    EnvironmentList read_environment(const FieldDecl& field, const YAML::Node& node,
                                     const std::string& key) const;
    ConnectionSettings read_connection(const YAML::Node& node, const std::string& key) const;
    NodesValue read_nodes(const YAML::Node& node, const std::string& key,
                          const std::vector<FieldDecl>& fields) const;
    WatchValue read_watch(const YAML::Node& node, const std::string& key) const;
    std::vector<StopRule> read_rules(const FieldDecl& field, const YAML::Node& node,
                                     const std::string& key) const;
    StopRule read_plateau(const YAML::Node& node, const std::string& key) const;
    void warn_stray_ssh_keys(const YAML::Node& root) const;

    std::string file_;
    std::vector<SettingsWarning>* warnings_;
};

// The 1-based line where a second YAML document begins (a `---` line after content, or
// content after a `...` line), or 0. Found in the text: yaml-cpp's LoadAll can loop for good
// on a malformed rest (a fuzzer found one), and only the first document is ever read.
int second_document_line(const std::string& text) {
    bool content = false, ended = false;
    int n = 0;
    size_t at = 0;
    while (at <= text.size()) {
        size_t end = text.find('\n', at);
        if (end == std::string::npos) end = text.size();
        const std::string line = text.substr(at, end - at);
        at = end + 1;
        ++n;
        const auto marker = [&](const char* m) {
            return line.rfind(m, 0) == 0 &&
                   (line.size() == 3 || line[3] == ' ' || line[3] == '\t' || line[3] == '\r');
        };
        const size_t first = line.find_first_not_of(" \t\r");
        const bool blank = first == std::string::npos || line[first] == '#';
        if (marker("---")) {
            if (content || ended) return n;
            continue;
        }
        if (marker("...")) {
            ended = true;
            continue;
        }
        if (!blank) {
            if (ended) return n;
            if (line[0] != '%') content = true;  // a directive belongs to the next document
        }
    }
    return 0;
}

void FileReader::load(const std::string& text, SettingsLayer& layer) const {
    YAML::Node root;
    try {
        root = YAML::Load(text);
    } catch (const YAML::Exception& e) {
        throw config_error(where(e.mark) + ": malformed YAML: " + e.msg,
                           "fix the YAML syntax at that place (indent with spaces, quote values "
                           "that contain ': ' or start with '{', '[', '*' or '&')");
    }
    // MLTK's PyYAML refuses a second document; mlt reads the first and says so.
    if (const int line = second_document_line(text); line != 0 && warnings_)
        warnings_->push_back(SettingsWarning{
            file_, line, 1,
            "a second YAML document (after ---) is ignored; only the first is read"});
    reject_nul(root);
    if (root.IsNull()) return;
    if (!root.IsMap())
        throw config_error(
            where(root) + ": a settings file must be a mapping, got " + describe(root),
            "write `ssh:` and the settings indented below it");

    // Other top-level keys belong to MLTK. Of a repeated key YAML loaders keep the last.
    std::optional<YAML::Node> top_model_paths;
    std::optional<YAML::Node> section;
    for (const auto& it : root) {
        const std::string name = it.first.Scalar();
        if (name != "model_paths" && name != "ssh") continue;
        std::optional<YAML::Node>& slot = name == "ssh" ? section : top_model_paths;
        if (slot) warn(it.first, "duplicate setting " + name + " (the later one wins)");
        // emplace rebinds; assigning to an engaged YAML::Node would overwrite the tree node.
        slot.emplace(it.second);
    }
    // MLTK keeps model_paths at the top level; it comes before ssh.model_paths in the list.
    if (top_model_paths && !top_model_paths->IsNull()) {
        const FieldDecl& field = *find_field(ssh_fields(), "model_paths");
        layer.values.emplace_back(&field, read(field, *top_model_paths, "model_paths"));
    }
    if (!section || section->IsNull()) return warn_stray_ssh_keys(root);
    if (!section->IsMap())
        throw config_error(
            where(*section) + ": ssh must be a mapping of settings, got " + describe(*section),
            "write the settings indented below `ssh:`, e.g. `  remote_dir: ~/work`");
    read_section(*section, layer);
}

// No ssh settings, but top-level keys that are ssh settings: an `ssh:` block that lost its
// indentation (`ssh:` then `remote_dir: x` at column 0) would otherwise yield nothing silently.
void FileReader::warn_stray_ssh_keys(const YAML::Node& root) const {
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
    warn(*first, "no ssh settings here, but top-level " + list +
                     " (ignored there): indent the settings below `ssh:`");
}

// An alias inside its own anchor makes a tree without end; no settings file nests this deep.
void FileReader::check_depth(const YAML::Node& node, int depth) const {
    constexpr int kMaxDepth = 64;
    if (depth > kMaxDepth)
        throw config_error(where(node) + ": nested more than " + std::to_string(kMaxDepth) +
                               " levels deep (an alias inside its own anchor?)",
                           "give the settings without such a loop");
}

// A NUL cannot pass through a remote shell or a C string: refused wherever it stands (YAML
// writes it as "\0" in a quoted string).
void FileReader::reject_nul(const YAML::Node& node, int depth) const {
    check_depth(node, depth);
    if (node.IsScalar() && node.Scalar().find('\0') != std::string::npos)
        throw config_error(where(node) + ": a NUL character (\\0) in a value",
                           "remove it; no setting can hold one");
    if (node.IsSequence())
        for (const auto& item : node) reject_nul(item, depth + 1);
    if (node.IsMap())
        for (const auto& it : node) {
            reject_nul(it.first, depth + 1);
            reject_nul(it.second, depth + 1);
        }
}

// The pairs a YAML merge key (`<<: *base` or `<<: [*a, *b]`) brings, as PyYAML merges them:
// of a list, an earlier mapping wins over a later one (so it comes later in `out`).
void FileReader::merged(const YAML::Node& value, const std::string& prefix, Entries& out,
                        int depth) const {
    check_depth(value, depth);
    if (value.IsMap()) {
        const Entries inner = entries(value, prefix, depth + 1);
        out.insert(out.end(), inner.begin(), inner.end());
        return;
    }
    if (value.IsSequence() &&
        std::all_of(value.begin(), value.end(), [](const YAML::Node& n) { return n.IsMap(); })) {
        for (size_t i = value.size(); i-- > 0;) merged(value[i], prefix, out, depth + 1);
        return;
    }
    throw config_error(where(value) + ": " + prefix +
                           ": the merge key << needs a mapping or a "
                           "list of mappings, got " +
                           describe(value),
                       "write `<<: *anchor` with `&anchor` on a mapping");
}

// Pairs in file order, the pairs of merge keys (<<) first. Of a repeated key only the last is
// kept, as PyYAML (MLTK) does, and the earlier one gets a warning so the surprise is visible;
// a key written here over a merged one is what merging is for, so that one says nothing.
Entries FileReader::entries(const YAML::Node& map, const std::string& prefix, int depth) const {
    Entries base;
    Entries all;
    for (const auto& it : map) {
        if (!it.first.IsScalar())
            throw config_error(
                where(it.first) + ": " + prefix + " keys must be names, got " + describe(it.first),
                "write `name: value`");
        if (it.first.Scalar() == "<<" && it.first.Tag() != "!")
            merged(it.second, prefix, base, depth + 1);
        else
            all.emplace_back(it.first, it.second);
    }
    Entries kept;
    auto named = [](const std::string& name) {
        return [&name](const auto& e) { return e.first.Scalar() == name; };
    };
    for (size_t i = 0; i < base.size(); ++i) {
        const std::string& name = base[i].first.Scalar();
        if (std::find_if(base.begin() + static_cast<std::ptrdiff_t>(i) + 1, base.end(),
                         named(name)) == base.end() &&
            std::find_if(all.begin(), all.end(), named(name)) == all.end())
            kept.push_back(base[i]);
    }
    for (size_t i = 0; i < all.size(); ++i) {
        const std::string& name = all[i].first.Scalar();
        auto later =
            std::find_if(all.begin() + static_cast<std::ptrdiff_t>(i) + 1, all.end(), named(name));
        if (later == all.end())
            kept.push_back(all[i]);
        else
            warn(all[i].first,
                 "duplicate setting " + prefix + "." + name + " (the later one wins)");
    }
    return kept;
}

void FileReader::warn_unknown(const YAML::Node& key, const std::string& prefix,
                              const std::vector<FieldDecl>& fields) const {
    const std::string name = key.Scalar();
    std::string message = "unknown setting " + prefix + "." + name + " (ignored)";
    std::string best;
    size_t best_distance = std::string::npos;
    for (const auto& f : fields) {
        size_t d = edit_distance(lower(name), f.name);
        if (d < best_distance) {
            best_distance = d;
            best = prefix + "." + std::string(f.name);
        }
    }
    // A typo is a few edits away; anything further is a different word.
    bool close = best_distance <= 2 || best_distance * 3 <= name.size();
    // Keys that belong one level down (`ssh.hostname`) are a common slip.
    if (prefix == "ssh" && !close) {
        for (const char* nested : {"connection", "nodes", "transfer"}) {
            const std::string below(nested);
            const auto& fields_below = below == "nodes"      ? nodes_fields()
                                       : below == "transfer" ? transfer_fields()
                                                             : connection_fields();
            if (find_field(fields_below, name)) {
                best = "ssh." + std::string(nested) + "." + name;
                close = true;
            }
        }
    }
    if (close && !best.empty()) message += "; did you mean " + best + "?";
    warn(key, std::move(message));
}

void FileReader::read_section(const YAML::Node& section, SettingsLayer& layer) const {
    for (const auto& [key, value] : entries(section, "ssh")) {
        const FieldDecl* field = find_field(ssh_fields(), key.Scalar());
        if (!field) {
            warn_unknown(key, "ssh", ssh_fields());
            continue;
        }
        // `key:` with no value reads as "not set here", like an absent key.
        if (value.IsNull()) continue;
        Value read_value = read(*field, value, "ssh." + key.Scalar());
        layer.values.emplace_back(field, std::move(read_value));
    }
}

Value FileReader::read(const FieldDecl& field, const YAML::Node& node,
                       const std::string& key) const {
    switch (field.type) {
        case SettingType::string:
            return read_scalar(field, node, key);
        case SettingType::boolean: {
            std::string s = lower(read_scalar(field, node, key));
            if (s == "true" || s == "yes" || s == "on") return true;
            if (s == "false" || s == "no" || s == "off") return false;
            type_error(node, key, field);
        }
        case SettingType::integer:
            return read_integer(field, node, key);
        case SettingType::number:
            return read_number(field, node, key);
        case SettingType::string_list:
            return read_list(field, node, key);
        case SettingType::environment:
            return read_environment(field, node, key);
        case SettingType::connection: {
            if (node.IsMap()) return std::vector<ConnectionSettings>{read_connection(node, key)};
            if (!node.IsSequence()) type_error(node, key, field);
            std::vector<ConnectionSettings> out;
            for (size_t i = 0; i < node.size(); ++i) {
                std::string item = key + "[" + std::to_string(i) + "]";
                if (!node[i].IsMap()) type_error(node[i], item, field);
                out.push_back(read_connection(node[i], item));
            }
            return out;
        }
        case SettingType::nodes:
        case SettingType::transfer: {
            if (!node.IsMap()) type_error(node, key, field);
            return read_nodes(
                node, key, field.type == SettingType::nodes ? nodes_fields() : transfer_fields());
        }
        case SettingType::watch:
            if (!node.IsMap()) type_error(node, key, field);
            return read_watch(node, key);
        case SettingType::stop_rules:
            return read_rules(field, node, key);
        case SettingType::host_key_checking: {
            // YAML 1.1 readers turn unquoted yes/no into booleans; both spellings mean the
            // OpenSSH words here.
            if (auto mode = parse_host_key_checking(read_scalar(field, node, key))) return *mode;
            type_error(node, key, field);
        }
        case SettingType::choice: {
            std::string word = read_scalar(field, node, key);
            for (auto c : field.choices)
                if (word == c) return word;
            type_error(node, key, field);
        }
    }
    type_error(node, key, field);
}

std::string FileReader::read_scalar(const FieldDecl& field, const YAML::Node& node,
                                    const std::string& key) const {
    if (!node.IsScalar()) type_error(node, key, field);
    if (field.non_empty && node.Scalar().empty()) type_error(node, key, field);
    return node.Scalar();
}

int FileReader::read_integer(const FieldDecl& field, const YAML::Node& node,
                             const std::string& key) const {
    const std::string s = read_scalar(field, node, key);
    // Decimal only: YAML would read 0x8fb as hex and 010 as octal.
    const auto value =
        parse_decimal(s, static_cast<long long>(field.min), static_cast<long long>(field.max));
    if (!value) type_error(node, key, field);
    return static_cast<int>(*value);
}

double FileReader::read_number(const FieldDecl& field, const YAML::Node& node,
                               const std::string& key) const {
    const std::string s = read_scalar(field, node, key);
    // YAML's `+1` is a number too; hex, "inf" and "nan" are no sane setting (parse_real).
    const auto value = parse_real(s.rfind('+', 0) == 0 ? s.substr(1) : s, field.min, field.max);
    if (!value) type_error(node, key, field);
    return *value;
}

std::vector<std::string> FileReader::read_list(const FieldDecl& field, const YAML::Node& node,
                                               const std::string& key) const {
    if (!node.IsSequence()) type_error(node, key, field);
    std::vector<std::string> out;
    for (const auto& item : node) {
        if (!item.IsScalar())
            throw config_error(
                where(item) + ": " + key + " entries must be strings, got " + describe(item),
                hint_for(field));
        if (field.transfer) {
            try {
                parse_transfer_spec(item.Scalar(), *field.transfer);
            } catch (const Error& e) {
                throw config_error(where(item) + ": " + e.what(), e.hint());
            }
        }
        out.push_back(item.Scalar());
    }
    return out;
}

// MLT_* are the job wrapper's own variables (MLT_LOG_DIR says where the logs to pull are):
// the settings may not replace them. True (after a warning) for such a name.
bool FileReader::reserved_name(const YAML::Node& node, const std::string& key,
                               const std::string& name) const {
    if (name.rfind("MLT_", 0) != 0) return false;
    warn(node, key + " sets " + name + ", one of mlt's own MLT_ variables (ignored; mlt sets it)");
    return true;
}

EnvironmentList FileReader::read_environment(const FieldDecl& field, const YAML::Node& node,
                                             const std::string& key) const {
    const std::string name_hint =
        "a variable name is letters, digits and '_' and does not start with a digit";
    EnvironmentList out;
    if (node.IsSequence()) {
        for (const auto& item : node) {
            if (!item.IsScalar())
                throw config_error(where(item) + ": " + key +
                                       " entries must be NAME=VALUE strings, got " + describe(item),
                                   hint_for(field));
            // As MLTK reads it: a bare NAME is NAME= (empty), and a value wrapped in matching
            // quotes loses them (`TEST="a b"` exports `a b`).
            const std::string& s = item.Scalar();
            size_t eq = s.find('=');
            std::string name = s.substr(0, eq);
            if (!is_shell_name(name))
                throw config_error(where(item) + ": " + key + " entry '" + s + "': '" + name +
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
    if (!node.IsMap()) type_error(node, key, field);
    for (const auto& [k, v] : entries(node, key)) {
        const std::string& name = k.Scalar();
        if (!is_shell_name(name))
            throw config_error(
                where(k) + ": " + key + ": '" + name + "' is not a valid variable name", name_hint);
        if (reserved_name(k, key, name)) continue;
        // Numbers and booleans are kept as written: `DEBUG: 1` exports DEBUG=1.
        if (v.IsNull())
            out.emplace_back(name, "");
        else if (v.IsScalar())
            out.emplace_back(name, v.Scalar());
        else
            throw config_error(where(v) + ": " + key + "." + name +
                                   " must be a string, number or bool, got " + describe(v),
                               "write it like `" + name + ": value`");
    }
    return out;
}

ConnectionSettings FileReader::read_connection(const YAML::Node& node,
                                               const std::string& key) const {
    ConnectionSettings out;
    for (const auto& [k, v] : entries(node, key)) {
        const std::string& name = k.Scalar();
        const FieldDecl* field = find_field(connection_fields(), name);
        if (!field) {
            const auto& ignored = ignored_connection_keys();
            if (std::find(ignored.begin(), ignored.end(), name) != ignored.end())
                warn(k, key + "." + name + " is a paramiko option that mlt does not use (ignored)");
            else
                warn_unknown(k, key, connection_fields());
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

NodesValue FileReader::read_nodes(const YAML::Node& node, const std::string& key,
                                  const std::vector<FieldDecl>& fields) const {
    NodesValue out;
    for (const auto& [k, v] : entries(node, key)) {
        const std::string& name = k.Scalar();
        const FieldDecl* field = find_field(fields, name);
        if (!field) {
            warn_unknown(k, key, fields);
            continue;
        }
        if (v.IsNull()) continue;
        Value value = read(*field, v, key + "." + name);
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
        else
            out.master_addr = std::get<std::string>(value);
    }
    return out;
}

WatchValue FileReader::read_watch(const YAML::Node& node, const std::string& key) const {
    WatchValue out;
    for (const auto& [k, v] : entries(node, key)) {
        const FieldDecl* field = find_field(watch_fields(), k.Scalar());
        if (!field) {
            warn_unknown(k, key, watch_fields());
            continue;
        }
        if (v.IsNull()) continue;
        Value value = read(*field, v, key + "." + k.Scalar());
        if (k.Scalar() == "every")
            out.every = std::get<int>(value);
        else if (k.Scalar() == "idle_gpu_minutes")
            out.idle_gpu_minutes = std::get<double>(value);
        else if (k.Scalar() == "stop_idle")
            out.stop_idle = std::get<bool>(value);
        else
            out.stop_when = std::get<std::vector<StopRule>>(std::move(value));
    }
    return out;
}

// Each rule is checked here, before anything remote: a regex that does not compile is a
// settings error with its place.
std::vector<StopRule> FileReader::read_rules(const FieldDecl& field, const YAML::Node& node,
                                             const std::string& key) const {
    if (!node.IsSequence()) type_error(node, key, field);
    std::vector<StopRule> out;
    for (size_t i = 0; i < node.size(); ++i) {
        const std::string item = key + "[" + std::to_string(i) + "]";
        StopRule rule;
        if (node[i].IsMap())
            rule = read_plateau(node[i], item);
        else if (node[i].IsScalar() && !node[i].Scalar().empty())
            rule.regex = node[i].Scalar();
        else
            type_error(node[i], item, field);
        if (auto why = rule_error(rule))
            throw config_error(where(node[i]) + ": " + item + " is no usable rule: " + *why,
                               "fix the rule; see docs/usage.md, \"Watching a run\"");
        out.push_back(std::move(rule));
    }
    return out;
}

StopRule FileReader::read_plateau(const YAML::Node& node, const std::string& key) const {
    StopRule rule;
    rule.plateau = true;
    const auto& keys = plateau_fields();
    for (const auto& [k, v] : entries(node, key)) {
        const std::string name = k.Scalar();
        const FieldDecl* field = find_field(keys, name);
        if (!field) {
            warn_unknown(k, key, keys);
            continue;
        }
        const Value value = read(*field, v, key + "." + name);
        if (name == "metric")
            rule.regex = std::get<std::string>(value);
        else if (name == "mode")
            rule.maximize = std::get<std::string>(value) == "max";
        else
            rule.patience = std::get<int>(value);
    }
    if (rule.regex.empty())
        throw config_error(where(node) + ": " + key + " has no metric",
                           "give the metric's regex, e.g. {metric: 'val_loss[=:] *([0-9.eE+-]+)', "
                           "mode: min, patience: 5}");
    return rule;
}

}  // namespace

SettingsLayer read_settings_file(const std::string& file, const std::string& text,
                                 std::vector<SettingsWarning>* warnings) {
    SettingsLayer layer;
    FileReader(file, warnings).load(text, layer);
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
