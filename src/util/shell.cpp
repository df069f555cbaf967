// Shell quoting of every value that reaches a shell: words, remote paths, printf literals.
#include "mlt/util/shell.h"

#include "mlt/util/paths.h"

namespace mlt {

namespace {

// Characters that never need quoting in any position of a POSIX shell word.
bool is_plain(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.' || c == '/' || c == ',' || c == ':' || c == '@' || c == '+' ||
           c == '%';
}

}  // namespace

std::string shell_quote(std::string_view value) {
    if (value.empty()) return "''";
    bool plain = true;
    for (char c : value) plain = plain && is_plain(c);
    if (plain) return std::string(value);
    // Inside single quotes nothing is special except the quote itself, which is written as
    // '\'' (close, escaped quote, reopen).
    std::string out;
    out.reserve(value.size() + 2);
    out += '\'';
    for (char c : value) {
        if (c == '\'')
            out += "'\\''";
        else
            out += c;
    }
    out += '\'';
    return out;
}

std::string shell_quote_path(std::string_view path) {
    std::string out;
    if (path == "~") return "\"$HOME\"";
    if (path.substr(0, 2) == "~/") {
        out = "\"$HOME\"/";
        path.remove_prefix(2);
    }
    // `$NAME` and `${NAME}` expand on the remote; everything else is literal.
    for (const auto& piece : split_variable_references(path))
        out += piece.variable ? "\"${" + piece.text + "}\"" : shell_quote(piece.text);
    return out;
}

std::string shell_double_quote(std::string_view value) {
    // MLTK writes `export NAME="value"` with the value as it is; the shell then expands `$`,
    // backquotes and backslash escapes. The same here, except that the word always ends
    // where it should: a bare `"` is escaped, and a trailing odd backslash doubled.
    std::string out = "\"";
    size_t backslashes = 0;
    for (char c : value) {
        if (c == '"' && backslashes % 2 == 0) out += '\\';
        out += c;
        backslashes = c == '\\' ? backslashes + 1 : 0;
    }
    if (backslashes % 2 == 1) out += '\\';
    out += '"';
    return out;
}

std::string printf_literal(std::string_view bytes) {
    std::string format;
    format.reserve(bytes.size() + 2);
    for (char c : bytes) {
        const auto u = static_cast<unsigned char>(c);
        if (c == '%') {
            format += "%%";
        } else if (c == '\\') {
            format += "\\\\";
        } else if (u < 0x20 || u > 0x7e || (c == '-' && format.empty())) {
            // A leading `-` would read as an option to some printf builtins.
            const char octal[] = {'\\', static_cast<char>('0' + (u >> 6)),
                                  static_cast<char>('0' + ((u >> 3) & 7)),
                                  static_cast<char>('0' + (u & 7)), '\0'};
            format += octal;
        } else {
            format += c;
        }
    }
    return shell_quote(format);
}

std::string shell_assignment(std::string_view name, std::string_view word) {
    std::string line;
    line.reserve(name.size() + word.size() + 2);
    return line.append(name).append("=").append(word).append("\n");
}

std::string shell_join(const std::vector<std::string>& words) {
    std::string out;
    for (const auto& w : words) {
        if (!out.empty()) out += ' ';
        out += shell_quote(w);
    }
    return out;
}

}  // namespace mlt
