#include "spec_literals.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <utility>

#include "mlt/util/text.h"
#include "python_lexer.h"
#include "settings_reader.h"
#include "spec_blocks.h"

namespace mlt::settings_detail {

namespace {

// Python's own parser gives up near 200 levels; settings never come close, and the YAML
// reader recurses per level too.
constexpr int kMaxDepth = 50;
// YAML allows an implicit key of at most 1024 characters; longer ones are written `? key`.
constexpr size_t kMaxImplicitKey = 1000;

// `text` (valid UTF-8) as a YAML double-quoted scalar. Escapes every character a YAML reader
// might take as a line break, byte order mark or non-printable (and U+FFFD, which also stands
// in for a byte that is not UTF-8, so the output always is).
std::string yaml_quote(std::string_view text) {
    static const char kHex[] = "0123456789ABCDEF";
    std::string out = "\"";
    for (size_t i = 0; i < text.size();) {
        const size_t begin = i;
        uint32_t cp = 0;
        if (!read_utf8(text, i, cp)) {  // the callers validated; never leave the loop stuck
            cp = 0xFFFD;
            ++i;
        }
        if (cp == '"' || cp == '\\') {
            out += '\\';
            out += static_cast<char>(cp);
        } else if (cp == '\n') {
            out += "\\n";
        } else if (cp == '\t') {
            out += "\\t";
        } else if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || cp == 0x2028 || cp == 0x2029 ||
                   cp == 0xFEFF || cp == 0xFFFD || cp == 0xFFFE || cp == 0xFFFF) {
            out += "\\u";
            for (int shift = 12; shift >= 0; shift -= 4) out += kHex[(cp >> shift) & 0xF];
        } else {
            out.append(text.substr(begin, i - begin));
        }
    }
    return out + "\"";
}

// The YAML text of one entry, laid out so that each value starts at the line and column of
// its Python source where the text so far leaves room.
class Output {
  public:
    explicit Output(int line) : line_(line) {}

    void move_to(SourcePos pos) {
        if (pos.line > line_) {
            text_.append(static_cast<size_t>(pos.line - line_), '\n');
            line_ = pos.line;
            column_ = 1;
        }
        if (pos.line == line_ && pos.column > column_) {
            text_.append(static_cast<size_t>(pos.column - column_), ' ');
            column_ = pos.column;
        }
    }
    void write(std::string_view s) {
        text_ += s;
        column_ += static_cast<int>(s.size());
    }
    // A blank that open_sequence_at() may turn into `[` once a `,` shows a tuple.
    size_t placeholder() {
        write(" ");
        return text_.size() - 1;
    }
    void open_sequence_at(size_t at) { text_[at] = '['; }
    void write_key(SourcePos pos, const std::string& key) {
        move_to(pos);
        if (key.size() > kMaxImplicitKey) write("? ");
        write(key);
        write(": ");
    }

    const std::string& text() const { return text_; }
    int line() const { return line_; }

  private:
    std::string text_;
    int line_;
    int column_ = 1;
};

// Reads one Python literal expression from the tokens and writes it to an Output as YAML.
// Every function returns false at (or just after) the first token that is not part of a
// literal; the scan for assignments resumes there, so no token is read twice.
class LiteralReader {
  public:
    LiteralReader(PyTokens& tokens, Output& out) : tokens_(tokens), out_(out) {}

    // The right-hand side of an assignment up to the end of the statement; a bare `a, b`
    // is a tuple.
    bool assigned_value() {
        const size_t slot = out_.placeholder();
        if (!value(0)) return false;
        if (is_op(tokens_.peek(), ",")) {
            out_.open_sequence_at(slot);
            while (is_op(tokens_.peek(), ",")) {
                tokens_.take();
                out_.write(",");
                if (at_statement_end()) break;
                if (!value(0)) return false;
            }
            out_.write("]");
        }
        return at_statement_end();
    }

  private:
    bool at_statement_end() {
        const PyToken& t = tokens_.peek();
        return t.kind == TokenKind::newline || t.kind == TokenKind::end || is_op(t, ";");
    }

    // Inside brackets (depth > 0) line breaks mean nothing.
    const PyToken& peek(int depth) {
        if (depth > 0) {
            while (tokens_.peek().kind == TokenKind::newline) tokens_.take();
        }
        return tokens_.peek();
    }

    bool value(int depth) {
        const PyToken& t = peek(depth);
        if (is_op(t, "[")) return sequence(depth, "]");
        if (is_op(t, "(")) return parenthesized(depth);
        if (is_op(t, "{")) return mapping(depth);
        if (t.kind == TokenKind::name && t.text == "dict") return dict_call(depth);
        SourcePos pos;
        std::string text;
        if (!scalar(depth, pos, text)) return false;
        out_.move_to(pos);
        out_.write(text);
        return true;
    }

    // A string (adjacent ones joined), number, True, False or None as YAML text.
    bool scalar(int depth, SourcePos& pos, std::string& text) {
        const PyToken& t = peek(depth);
        pos = t.pos;
        if (t.kind == TokenKind::string) {
            std::string joined;
            while (peek(depth).kind == TokenKind::string) {
                PyToken s = tokens_.take();
                if (!s.literal || !decode_python_string(s.body, s.raw, joined)) return false;
            }
            text = yaml_quote(joined);
            return true;
        }
        if (t.kind == TokenKind::name) {
            static const std::pair<std::string_view, const char*> kWords[] = {
                {"True", "true"}, {"False", "false"}, {"None", "null"}};
            for (const auto& [word, yaml] : kWords) {
                if (t.text == word) {
                    tokens_.take();
                    text = yaml;
                    return true;
                }
            }
            return false;
        }
        // A signed number may have blanks after the sign (`- 5`); the YAML text is `-5`.
        std::string sign;
        if (is_op(t, "-") || is_op(t, "+")) sign = std::string(tokens_.take().text);
        const PyToken& number = peek(depth);
        if (number.kind != TokenKind::number || !is_python_number(number.text)) return false;
        text = sign + std::string(tokens_.take().text);
        return true;
    }

    // The items up to `close` (a trailing comma allowed), then `close` itself, written as the
    // rest of a YAML sequence.
    bool items(int depth, std::string_view close) {
        for (;;) {
            if (is_op(peek(depth), close)) break;
            if (!value(depth)) return false;
            if (!comma_or(depth, close)) return false;
        }
        out_.move_to(tokens_.take().pos);
        out_.write("]");
        return true;
    }

    // Takes a `,` (writing it) or sees `close` (untaken); false for anything else.
    bool comma_or(int depth, std::string_view close) {
        const PyToken& t = peek(depth);
        if (is_op(t, ",")) {
            tokens_.take();
            out_.write(",");
            return true;
        }
        return is_op(t, close);
    }

    bool sequence(int depth, std::string_view close) {
        if (depth >= kMaxDepth) return false;
        out_.move_to(tokens_.take().pos);
        out_.write("[");
        return items(depth + 1, close);
    }

    // `(x)` is x, `()` and `(x,)` and `(x, y)` are tuples, written as YAML sequences.
    bool parenthesized(int depth) {
        if (depth >= kMaxDepth) return false;
        const int inner = depth + 1;
        out_.move_to(tokens_.take().pos);
        const size_t slot = out_.placeholder();
        if (is_op(peek(inner), ")")) {
            out_.open_sequence_at(slot);
            return items(inner, ")");
        }
        if (!value(inner)) return false;
        if (is_op(peek(inner), ")")) {
            tokens_.take();
            return true;
        }
        if (!is_op(peek(inner), ",")) return false;
        out_.open_sequence_at(slot);
        tokens_.take();
        out_.write(",");
        return items(inner, ")");
    }

    // `{key: value, ...}` with scalar keys; a set `{a, b}` or `**x` is not a literal here.
    bool mapping(int depth) {
        if (depth >= kMaxDepth) return false;
        const int inner = depth + 1;
        out_.move_to(tokens_.take().pos);
        out_.write("{");
        for (;;) {
            if (is_op(peek(inner), "}")) break;
            SourcePos key_pos;
            std::string key;
            if (!scalar(inner, key_pos, key)) return false;
            if (!is_op(peek(inner), ":")) return false;
            tokens_.take();
            out_.write_key(key_pos, key);
            if (!value(inner)) return false;
            if (!comma_or(inner, "}")) return false;
        }
        out_.move_to(tokens_.take().pos);
        out_.write("}");
        return true;
    }

    // `dict(NAME=value, ...)`: keyword arguments only.
    bool dict_call(int depth) {
        if (depth >= kMaxDepth) return false;
        const int inner = depth + 1;
        const SourcePos at = tokens_.take().pos;
        if (!is_op(peek(depth), "(")) return false;
        tokens_.take();
        out_.move_to(at);
        out_.write("{");
        for (;;) {
            if (is_op(peek(inner), ")")) break;
            const PyToken& name = peek(inner);
            size_t valid = 0;
            uint32_t cp = 0;
            while (valid < name.text.size() && read_utf8(name.text, valid, cp)) {
            }
            if (name.kind != TokenKind::name || valid != name.text.size()) return false;
            const PyToken key = tokens_.take();
            if (!is_op(peek(inner), "=")) return false;
            tokens_.take();
            out_.write_key(key.pos, yaml_quote(key.text));
            if (!value(inner)) return false;
            if (!comma_or(inner, ")")) return false;
        }
        out_.move_to(tokens_.take().pos);
        out_.write("}");
        return true;
    }

    PyTokens& tokens_;
    Output& out_;
};

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
    Output out(a.pos.line);
    out.move_to(a.pos);
    out.write("\"" + std::string(key) + "\":");
    a.literal = LiteralReader(tokens, out).assigned_value();
    if (a.literal) {
        a.yaml = out.text();
        a.end_line = out.line();
    }
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
