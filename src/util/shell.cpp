#include "mlt/util/shell.h"

namespace mlt {

namespace {

// Characters that never need quoting in any position of a POSIX shell word.
bool is_plain(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '-' || c == '.' || c == '/' || c == ',' || c == ':' || c == '@' ||
           c == '+' || c == '%';
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
    if (path == "~") return "\"$HOME\"";
    if (path.substr(0, 2) == "~/") {
        std::string_view rest = path.substr(2);
        return rest.empty() ? std::string("\"$HOME\"/") : "\"$HOME\"/" + shell_quote(rest);
    }
    return shell_quote(path);
}

std::string shell_double_quote(std::string_view value) {
    std::string out = "\"";
    for (char c : value) {
        if (c == '"' || c == '\\' || c == '`') out += '\\';
        out += c;
    }
    out += '"';
    return out;
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
