// A Python literal expression (strings, numbers, True/False/None, lists, tuples, dicts,
// dict(...)) read from the tokens of a model spec and written as YAML at its source position.
#include "literal_yaml.h"

#include <cstdint>
#include <string>
#include <utility>

#include "mlt/util/text.h"

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

}  // namespace

bool literal_entry_yaml(PyTokens& tokens, SourcePos at, std::string_view key, std::string& yaml,
                        int& end_line) {
    Output out(at.line);
    out.move_to(at);
    out.write("\"" + std::string(key) + "\":");
    if (!LiteralReader(tokens, out).assigned_value()) return false;
    yaml = out.text();
    end_line = out.line();
    return true;
}

}  // namespace mlt::settings_detail
