// Reading a model spec's SshMixin literals: the assignments of each `ssh_` attribute, which of
// them runs when MLTK imports the spec, and the YAML document made of them.
#include "spec_literals.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <utility>

#include "literal_yaml.h"
#include "mlt/util/text.h"
#include "python_lexer.h"
#include "settings_reader.h"
#include "spec_blocks.h"

namespace mlt::settings_detail {

namespace {

// The last assignment of one key.
struct Assignment {
    SourcePos pos;  // of the `ssh_<key>` attribute
    bool literal = false;
    std::string yaml;  // the entry, laid out from column 1 of pos.line
    int end_line = 0;  // the line the entry's text ends on
};

Assignment read_assignment(PyTokens& tokens, const PyToken& attribute, std::string_view key) {
    Assignment a;
    a.pos = attribute.pos;
    a.literal = literal_entry_yaml(tokens, a.pos, key, a.yaml, a.end_line);
    return a;
}

bool is_augmented_assignment(const PyToken& t) {
    return t.kind == TokenKind::op && t.text.size() >= 2 && t.text.back() == '=' &&
           t.text != "==" && t.text != "!=" && t.text != "<=" && t.text != ">=";
}

SettingsWarning unknown_attribute(const std::string& file, const PyToken& attribute) {
    const std::string name(attribute.text);
    std::string message = "unknown SshMixin setting " + name + " (ignored)";
    std::string best;
    size_t best_distance = std::string::npos;
    for (std::string_view key : ssh_mixin_keys()) {
        std::string candidate = "ssh_" + std::string(key);
        size_t d = edit_distance(name, candidate);
        if (d < best_distance) {
            best_distance = d;
            best = candidate;
        }
    }
    if (best_distance <= 2 || best_distance * 3 <= name.size())
        message += "; did you mean " + best + "?";
    return SettingsWarning{file, attribute.pos.line, attribute.pos.column, message};
}

// Every assignment of each SshMixin key, in source order.
using Assignments = std::map<std::string, std::vector<Assignment>, std::less<>>;

// The assignments of each SshMixin key in `text`; unknown `ssh_` attributes that are
// assigned to are added to `found`.
Assignments scan(const std::string& file, std::string_view text,
                 std::vector<SettingsWarning>& found) {
    Assignments all;
    PyTokens tokens(text);
    bool after_dot = false;  // `a.b.ssh_x` is an attribute of an attribute, not of a name
    for (;;) {
        const PyToken& t = tokens.peek();
        if (t.kind == TokenKind::end) break;
        if (t.kind == TokenKind::name && !after_dot && is_op(tokens.peek(1), ".") &&
            tokens.peek(2).kind == TokenKind::name && tokens.peek(2).text.substr(0, 4) == "ssh_") {
            const PyToken& op = tokens.peek(3);
            const bool assigned = is_op(op, "=");
            const bool changed = is_augmented_assignment(op);
            if (assigned || changed) {
                tokens.take();
                tokens.take();
                const PyToken attribute = tokens.take();
                tokens.take();
                const std::string key(attribute.text.substr(4));
                const auto& keys = ssh_mixin_keys();
                if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
                    found.push_back(unknown_attribute(file, attribute));
                } else if (changed) {
                    // `+=` and the like change a value mlt may not know: not a literal.
                    Assignment a;
                    a.pos = attribute.pos;
                    all[key].push_back(a);
                } else {
                    all[key].push_back(read_assignment(tokens, attribute, key));
                }
                after_dot = false;
                continue;
            }
        }
        after_dot = is_op(t, ".");
        tokens.take();
    }
    return all;
}

// `{"ssh": {...}}` with each entry on the line of its assignment (`entries` in source order).
std::string document(const std::vector<const Assignment*>& entries) {
    std::string doc = "{\"ssh\": {";
    int line = 1;
    for (size_t i = 0; i < entries.size(); ++i) {
        const Assignment& a = *entries[i];
        if (i > 0) doc += ",";
        size_t skip_blanks = 0;
        if (a.pos.line > line) {
            doc.append(static_cast<size_t>(a.pos.line - line), '\n');
            line = a.pos.line;
        } else {
            // The line already has text (line 1, or `a.ssh_x = 1; a.ssh_y = 2`): the entry's
            // leading blanks give way to it, and later columns on this line shift.
            size_t column = doc.size() - (doc.rfind('\n') + 1);  // npos + 1 == 0
            skip_blanks = std::min(a.yaml.find_first_not_of(' '), column);
        }
        doc.append(a.yaml, skip_blanks);
        line += a.end_line - a.pos.line;
    }
    return doc + "\n}}\n";
}

// The last of `assignments` that runs when the spec is imported; each later one that never
// runs gets a warning in `found`. nullptr when none runs.
const Assignment* last_reached(const std::string& file, const std::string& key,
                               const std::vector<Assignment>& assignments, const SpecBlocks& blocks,
                               std::vector<SettingsWarning>& found) {
    for (auto it = assignments.rbegin(); it != assignments.rend(); ++it) {
        const BlockContext& c = blocks.at(it->pos.line);
        if (blocks.reached_at_import(c)) return &*it;
        std::string where =
            c.in_main ? std::string("under if __name__ == '__main__', which does not run")
                      : "inside function " + c.functions.front() + " (line " +
                            std::to_string(c.function_line) + "), which the spec never calls";
        found.push_back(
            SettingsWarning{file, it->pos.line, it->pos.column,
                            "ssh_" + key + " is set " + where + " when MLTK imports it (ignored)"});
    }
    return nullptr;
}

// A warning for a literal that mlt applies although it may not run: inside a function or a
// branch. None at module level.
std::optional<SettingsWarning> placement_warning(const std::string& file, const std::string& key,
                                                 const Assignment& a, const BlockContext& c,
                                                 const std::string& sidecar) {
    std::string where;
    if (!c.branch.empty()) {
        where = "in the " + c.branch + " block at line " + std::to_string(c.branch_line);
    } else if (!c.functions.empty()) {
        where = "inside function " + c.functions.back() + " (line " +
                std::to_string(c.function_line) + ")";
    } else {
        return std::nullopt;
    }
    return SettingsWarning{file, a.pos.line, a.pos.column,
                           "ssh_" + key + " is set " + where +
                               ": applied, but mlt cannot tell whether that line runs; to "
                               "load the spec exactly, install MLTK locally, or set " +
                               key + " in the ssh: section of " + sidecar};
}

bool earlier(SourcePos a, SourcePos b) {
    return a.line != b.line ? a.line < b.line : a.column < b.column;
}

}  // namespace

const std::vector<std::string_view>& ssh_mixin_keys() {
    // MLTK's SshMixin (mltk/core/model/mixins/ssh_mixin.py).
    static const std::vector<std::string_view> kKeys = {
        "remote_dir",     "create_venv",  "environment",  "upload_files",
        "download_files", "startup_cmds", "shutdown_cmds"};
    return kKeys;
}

std::string spec_literals_yaml(const std::string& file, std::string_view text,
                               const std::set<std::string>& skip,
                               std::vector<SettingsWarning>* warnings) {
    std::vector<SettingsWarning> found;
    const Assignments all = scan(file, text, found);
    const SpecBlocks blocks(text);
    const std::string sidecar =
        std::filesystem::path(model_settings_path_for(file)).filename().string();
    std::vector<const Assignment*> entries;
    for (const auto& [key, assignments] : all) {
        if (skip.count(key)) continue;  // the sidecar sets it and wins
        const Assignment* a = last_reached(file, key, assignments, blocks, found);
        if (a == nullptr) continue;
        if (a->literal) {
            entries.push_back(a);
            if (auto w = placement_warning(file, key, *a, blocks.at(a->pos.line), sidecar))
                found.push_back(*w);
        } else {
            std::string message = "ssh_" + key +
                                  " is not a literal mlt can read without running the spec "
                                  "(ignored); to get it exactly, install MLTK locally (mlt then "
                                  "loads the spec through it), or set " +
                                  key + " in the ssh: section of " + sidecar;
            found.push_back(SettingsWarning{file, a->pos.line, a->pos.column, message});
        }
    }
    std::sort(entries.begin(), entries.end(),
              [](const Assignment* a, const Assignment* b) { return earlier(a->pos, b->pos); });
    if (warnings) {
        std::stable_sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
            return earlier({a.line, a.column}, {b.line, b.column});
        });
        warnings->insert(warnings->end(), found.begin(), found.end());
    }
    return document(entries);
}

}  // namespace mlt::settings_detail
