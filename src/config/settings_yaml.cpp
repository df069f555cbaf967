// The YAML guard of a settings file: safe parsing, its limits, merge keys, repeated and
// unknown keys, and where a message points.
#include "settings_yaml.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mlt/util/error.h"
#include "mlt/util/text.h"

namespace mlt::settings_detail {

namespace {

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

}  // namespace

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

YAML::Node YamlGuard::load(const std::string& text) {
    text_ = text;
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
    return root;
}

std::string YamlGuard::where(const YAML::Mark& mark) const {
    if (mark.is_null()) return file_;
    return file_ + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
}

// yaml-cpp keeps no style: the source tells a plain or single-quoted scalar, and whether its
// text up to the byte is the value's (an escaped '' before it shifts the place).
std::optional<std::string> YamlGuard::where_in(const YAML::Node& node, std::size_t offset) const {
    const YAML::Mark mark = node.Mark();
    if (mark.is_null() || !node.IsScalar() || offset >= node.Scalar().size() || mark.pos < 0)
        return std::nullopt;
    const auto start = static_cast<std::size_t>(mark.pos);
    if (start >= text_.size() ||
        std::string_view("\"|>!&*").find(text_[start]) != std::string_view::npos)
        return std::nullopt;
    const std::size_t quote = text_[start] == '\'' ? 1 : 0;
    const std::string_view source = std::string_view(text_).substr(start + quote, offset + 1);
    if (source != std::string_view(node.Scalar()).substr(0, offset + 1) ||
        source.find('\n') != std::string_view::npos)
        return std::nullopt;
    return file_ + ":" + std::to_string(mark.line + 1) + ":" +
           std::to_string(mark.column + 1 + static_cast<int>(quote + offset));
}

void YamlGuard::warn(const YAML::Node& node, std::string message) const {
    if (!warnings_) return;
    YAML::Mark m = node.Mark();
    warnings_->push_back(SettingsWarning{file_, m.is_null() ? 0 : m.line + 1,
                                         m.is_null() ? 0 : m.column + 1, std::move(message)});
}

void YamlGuard::type_error(const YAML::Node& node, const std::string& key,
                           const FieldDecl& field) const {
    throw config_error(where(node) + ": " + key + " must be " + type_description(field) + ", got " +
                           describe(node),
                       hint_for(field));
}

// An alias inside its own anchor makes a tree without end; no settings file nests this deep.
void YamlGuard::check_depth(const YAML::Node& node, int depth) const {
    constexpr int kMaxDepth = 64;
    if (depth > kMaxDepth)
        throw config_error(where(node) + ": nested more than " + std::to_string(kMaxDepth) +
                               " levels deep (an alias inside its own anchor?)",
                           "give the settings without such a loop");
}

// A NUL cannot pass through a remote shell or a C string: refused wherever it stands (YAML
// writes it as "\0" in a quoted string).
void YamlGuard::reject_nul(const YAML::Node& node, int depth) const {
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
void YamlGuard::merged(const YAML::Node& value, const std::string& prefix, Entries& out,
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
Entries YamlGuard::entries(const YAML::Node& map, const std::string& prefix, int depth) const {
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

void YamlGuard::warn_unknown(const YAML::Node& key, const std::string& prefix,
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

}  // namespace mlt::settings_detail
