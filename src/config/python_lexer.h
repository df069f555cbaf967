#pragma once

// A tokenizer for Python source, enough to find literal assignments in a model spec.
// Private to src/config/.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>

namespace mlt::settings_detail {

// 1-based line and byte column in the source.
struct SourcePos {
    int line = 1;
    int column = 1;
};

enum class TokenKind { name, number, string, op, newline, end };

// One token; views point into the source text.
struct PyToken {
    TokenKind kind = TokenKind::end;
    SourcePos pos;
    std::string_view text;  // as written (string: with prefix and quotes)
    std::string_view body;  // string: between the quotes
    bool raw = false;       // string: r prefix
    bool literal = false;   // string: closed, and no b/f prefix
};

// Splits Python source into tokens one at a time. Comments, blanks and backslash-continued
// line breaks are skipped; every other line break is a newline token (the reader decides
// whether brackets make it insignificant). Never fails: bytes that start no token are
// one-byte op tokens, an unclosed string runs to the end of its line (triple-quoted: of the
// text). After the text, every call returns an end token.
class PyLexer {
  public:
    explicit PyLexer(std::string_view text);
    PyToken next();

  private:
    char byte(size_t i) const { return i < text_.size() ? text_[i] : '\0'; }
    size_t break_at(size_t i) const;
    void skip_break(size_t length);
    SourcePos pos() const;
    PyToken token(TokenKind kind) const;  // starting here, text still empty
    size_t string_prefix() const;
    PyToken lex_string(size_t prefix);
    PyToken lex_number();
    PyToken lex_op();

    std::string_view text_;
    size_t at_ = 0;
    size_t line_start_ = 0;
    int line_ = 1;
};

// PyLexer with lookahead.
class PyTokens {
  public:
    explicit PyTokens(std::string_view text) : lexer_(text) {}
    // The k-th token ahead; the reference stays valid until that token is taken.
    const PyToken& peek(size_t k = 0);
    PyToken take();

  private:
    PyLexer lexer_;
    std::deque<PyToken> ahead_;
};

// Whether `token` is the operator `op`.
inline bool is_op(const PyToken& token, std::string_view op) {
    return token.kind == TokenKind::op && token.text == op;
}

// Whether `text` is a Python int or float literal (no sign, no imaginary `j`).
bool is_python_number(std::string_view text);

// Appends the value of a string literal's body (between the quotes) to `out` as UTF-8.
// Returns false when Python would refuse it or mlt cannot know its value: invalid UTF-8,
// a bad \x \u \U escape, a surrogate, or \N{...}.
bool decode_python_string(std::string_view body, bool raw, std::string& out);

// Reads one UTF-8 sequence at s[i] into `code_point` and advances `i`; false (i unchanged)
// for an invalid, overlong or surrogate sequence.
bool read_utf8(std::string_view s, size_t& i, uint32_t& code_point);

}  // namespace mlt::settings_detail
