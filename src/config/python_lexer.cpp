// The Python tokenizer that finds literal assignments in a model spec, and Python string
// decoding.
#include "python_lexer.h"

#include <cstring>

namespace mlt::settings_detail {

namespace {

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

bool is_hex(char c) {
    return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

bool is_octal(char c) {
    return c >= '0' && c <= '7';
}

bool is_binary(char c) {
    return c == '0' || c == '1';
}

// Python identifiers may be Unicode; any non-ASCII byte is taken as part of one.
bool is_name_byte(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '_' ||
           static_cast<unsigned char>(c) >= 0x80;
}

// The end of `digit (["_"] digit)*` starting at s[i], or npos when s[i] is no digit.
size_t digit_part(std::string_view s, size_t i, bool (*is)(char)) {
    if (i >= s.size() || !is(s[i])) return std::string_view::npos;
    for (++i; i < s.size(); ++i) {
        if (s[i] == '_' && i + 1 < s.size() && is(s[i + 1]))
            ++i;
        else if (!is(s[i]))
            break;
    }
    return i;
}

void append_utf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
}

// `count` hex digits at s[i] (advancing i) into `value`; false when there are fewer.
bool read_hex(std::string_view s, size_t& i, int count, uint32_t& value) {
    value = 0;
    for (int k = 0; k < count; ++k, ++i) {
        if (i >= s.size() || !is_hex(s[i])) return false;
        char c = s[i];
        uint32_t digit = is_digit(c) ? c - '0' : (c | 0x20) - 'a' + 10;
        value = value * 16 + digit;
    }
    return true;
}

}  // namespace

PyLexer::PyLexer(std::string_view text) : text_(text) {
    // Python skips a UTF-8 byte order mark; columns count from after it.
    if (text_.substr(0, 3) == "\xEF\xBB\xBF") at_ = line_start_ = 3;
}

size_t PyLexer::break_at(size_t i) const {
    if (byte(i) == '\n') return 1;
    if (byte(i) == '\r') return byte(i + 1) == '\n' ? 2 : 1;
    return 0;
}

void PyLexer::skip_break(size_t length) {
    at_ += length;
    ++line_;
    line_start_ = at_;
}

SourcePos PyLexer::pos() const {
    return {line_, static_cast<int>(at_ - line_start_) + 1};
}

PyToken PyLexer::token(TokenKind kind) const {
    PyToken t;
    t.kind = kind;
    t.pos = pos();
    return t;
}

PyToken PyLexer::next() {
    while (at_ < text_.size()) {
        char c = text_[at_];
        if (c == ' ' || c == '\t' || c == '\f') {
            ++at_;
        } else if (c == '\\' && break_at(at_ + 1)) {
            ++at_;
            skip_break(break_at(at_));
        } else if (c == '#') {
            while (at_ < text_.size() && !break_at(at_)) ++at_;
        } else if (size_t length = break_at(at_)) {
            PyToken t = token(TokenKind::newline);
            t.text = text_.substr(at_, length);
            skip_break(length);
            return t;
        } else if (size_t prefix = string_prefix(); prefix != std::string_view::npos) {
            return lex_string(prefix);
        } else if (is_name_byte(c) && !is_digit(c)) {
            PyToken t = token(TokenKind::name);
            size_t begin = at_;
            while (at_ < text_.size() && is_name_byte(text_[at_])) ++at_;
            t.text = text_.substr(begin, at_ - begin);
            return t;
        } else if (is_digit(c) || (c == '.' && is_digit(byte(at_ + 1)))) {
            return lex_number();
        } else {
            return lex_op();
        }
    }
    return token(TokenKind::end);
}

// Length of the string prefix (r, b, f, u, rb, ...) before a quote at the current byte, or
// npos when no string starts here.
size_t PyLexer::string_prefix() const {
    size_t i = at_;
    while (i < at_ + 2 && byte(i) != '\0' && std::strchr("rRbBfFuU", byte(i))) ++i;
    return byte(i) == '\'' || byte(i) == '"' ? i - at_ : std::string_view::npos;
}

PyToken PyLexer::lex_string(size_t prefix) {
    PyToken t = token(TokenKind::string);
    const size_t begin = at_;
    std::string_view letters = text_.substr(at_, prefix);
    t.raw = letters.find_first_of("rR") != std::string_view::npos;
    // b'' is bytes and f'' needs evaluating; of the prefixes only r and u keep a plain str.
    bool plain = letters.empty() || (letters.size() == 1 && std::strchr("rRuU", letters[0]));
    at_ += prefix;
    const char quote = text_[at_];
    const bool triple = byte(at_ + 1) == quote && byte(at_ + 2) == quote;
    at_ += triple ? 3 : 1;
    const size_t body_begin = at_;
    bool closed = false;
    while (at_ < text_.size()) {
        char c = text_[at_];
        if (c == '\\' && at_ + 1 < text_.size()) {
            // Even in a raw string a backslash keeps the next quote or line break in it.
            if (size_t length = break_at(at_ + 1)) {
                ++at_;
                skip_break(length);
            } else {
                at_ += 2;
            }
        } else if (size_t length = break_at(at_)) {
            if (!triple) break;
            skip_break(length);
        } else if (c == quote && (!triple || (byte(at_ + 1) == quote && byte(at_ + 2) == quote))) {
            closed = true;
            break;
        } else {
            ++at_;
        }
    }
    t.body = text_.substr(body_begin, at_ - body_begin);
    if (closed) at_ += triple ? 3 : 1;
    t.text = text_.substr(begin, at_ - begin);
    t.literal = plain && closed;
    return t;
}

// Takes the longest run that can belong to a number (validated later by is_python_number).
PyToken PyLexer::lex_number() {
    PyToken t = token(TokenKind::number);
    const size_t begin = at_;
    const bool prefixed = text_[at_] == '0' && byte(at_ + 1) != '\0' &&
                          std::strchr("xXoObB", byte(at_ + 1)) != nullptr;
    while (at_ < text_.size()) {
        char c = text_[at_];
        bool exponent_sign =
            (c == '+' || c == '-') && !prefixed && (text_[at_ - 1] == 'e' || text_[at_ - 1] == 'E');
        if (!(is_name_byte(c) && static_cast<unsigned char>(c) < 0x80) && c != '.' &&
            !exponent_sign)
            break;
        ++at_;
    }
    t.text = text_.substr(begin, at_ - begin);
    return t;
}

PyToken PyLexer::lex_op() {
    static const char* const kLong[] = {
        "**=", "//=", ">>=", "<<=", "...", "==", "!=", "<=", ">=", "+=", "-=", "*=",
        "/=",  "%=",  "&=",  "|=",  "^=",  "@=", ":=", "->", "**", "//", "<<", ">>"};
    PyToken t = token(TokenKind::op);
    size_t length = 1;
    for (const char* op : kLong) {
        if (text_.compare(at_, std::strlen(op), op) == 0) {
            length = std::strlen(op);
            break;
        }
    }
    t.text = text_.substr(at_, length);
    at_ += length;
    return t;
}

const PyToken& PyTokens::peek(size_t k) {
    while (ahead_.size() <= k) ahead_.push_back(lexer_.next());
    return ahead_[k];
}

PyToken PyTokens::take() {
    peek();
    PyToken t = ahead_.front();
    ahead_.pop_front();
    return t;
}

bool is_python_number(std::string_view s) {
    constexpr size_t npos = std::string_view::npos;
    if (s.size() >= 2 && s[0] == '0' && std::strchr("xXoObB", s[1]) && s[1] != '\0') {
        char base = static_cast<char>(s[1] | 0x20);
        bool (*is)(char) = base == 'x' ? is_hex : base == 'o' ? is_octal : is_binary;
        size_t i = 2;
        if (i < s.size() && s[i] == '_') ++i;
        return digit_part(s, i, is) == s.size();
    }
    size_t i = digit_part(s, 0, is_digit);
    const bool has_integer = i != npos;
    if (!has_integer) i = 0;
    bool is_float = false;
    if (i < s.size() && s[i] == '.') {
        is_float = true;
        size_t fraction = digit_part(s, i + 1, is_digit);
        if (fraction == npos && !has_integer) return false;
        i = fraction == npos ? i + 1 : fraction;
    }
    if (!has_integer && !is_float) return false;
    if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
        is_float = true;
        ++i;
        if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
        i = digit_part(s, i, is_digit);
        if (i == npos) return false;
    }
    // Anything left (an imaginary `j`, letters) is no number mlt can pass on.
    if (i != s.size()) return false;
    // Python 3 refuses leading zeros in a non-zero decimal integer (`017`).
    if (!is_float && s[0] == '0') return s.find_first_not_of("0_") == npos;
    return true;
}

bool read_utf8(std::string_view s, size_t& i, uint32_t& code_point) {
    auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
    if (i >= s.size()) return false;
    unsigned char lead = byte(i);
    size_t length = 0;
    uint32_t cp = 0;
    uint32_t min = 0;
    if (lead < 0x80) {
        length = 1;
        cp = lead;
    } else if (lead >= 0xC2 && lead <= 0xDF) {
        length = 2;
        cp = lead & 0x1F;
        min = 0x80;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
        length = 3;
        cp = lead & 0x0F;
        min = 0x800;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
        length = 4;
        cp = lead & 0x07;
        min = 0x10000;
    } else {
        return false;
    }
    if (s.size() - i < length) return false;
    for (size_t k = 1; k < length; ++k) {
        if ((byte(i + k) & 0xC0) != 0x80) return false;
        cp = (cp << 6) | (byte(i + k) & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += length;
    code_point = cp;
    return true;
}

bool decode_python_string(std::string_view body, bool raw, std::string& out) {
    size_t i = 0;
    while (i < body.size()) {
        char c = body[i];
        if (c == '\r') {
            // Python reads every line break of the source as \n.
            out += '\n';
            i += i + 1 < body.size() && body[i + 1] == '\n' ? 2 : 1;
            continue;
        }
        if (c != '\\' || raw) {
            uint32_t cp = 0;
            if (!read_utf8(body, i, cp)) return false;
            append_utf8(out, cp);
            continue;
        }
        if (i + 1 >= body.size()) return false;  // the lexer never ends a body on a backslash
        const char e = body[i + 1];
        i += 2;
        uint32_t cp = 0;
        switch (e) {
            case '\n':  // a continued line
                break;
            case '\r':
                if (i < body.size() && body[i] == '\n') ++i;
                break;
            case '\\':
            case '\'':
            case '"':
                out += e;
                break;
            case 'a':
                out += '\a';
                break;
            case 'b':
                out += '\b';
                break;
            case 'f':
                out += '\f';
                break;
            case 'n':
                out += '\n';
                break;
            case 'r':
                out += '\r';
                break;
            case 't':
                out += '\t';
                break;
            case 'v':
                out += '\v';
                break;
            case 'x':
            case 'u':
            case 'U':
                if (!read_hex(body, i, e == 'x' ? 2 : e == 'u' ? 4 : 8, cp)) return false;
                if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
                append_utf8(out, cp);
                break;
            case 'N':  // \N{name} needs Unicode's name table
                return false;
            default:
                if (is_octal(e)) {
                    cp = static_cast<uint32_t>(e - '0');
                    for (int k = 0; k < 2 && i < body.size() && is_octal(body[i]); ++k, ++i)
                        cp = cp * 8 + static_cast<uint32_t>(body[i] - '0');
                    append_utf8(out, cp);
                } else {
                    // An unknown escape keeps its backslash, as Python does.
                    out += '\\';
                    --i;
                }
                break;
        }
    }
    return true;
}

}  // namespace mlt::settings_detail
