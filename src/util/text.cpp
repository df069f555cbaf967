// Text helpers: printable lines, trim, split, numbers, bytes and USD as mlt writes them, parsing.
#include "mlt/util/text.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <random>
#include <vector>

namespace mlt {

namespace {

// Length of the valid UTF-8 sequence at s[i] (overlongs, surrogates and code points above
// U+10FFFF are invalid), or 0.
size_t utf8_length(std::string_view s, size_t i, unsigned* code_point) {
    const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
    const unsigned c = b(i);
    size_t n;
    unsigned cp, min;
    if (c < 0x80) return *code_point = c, 1;
    if ((c & 0xe0) == 0xc0)
        n = 2, cp = c & 0x1f, min = 0x80;
    else if ((c & 0xf0) == 0xe0)
        n = 3, cp = c & 0x0f, min = 0x800;
    else if ((c & 0xf8) == 0xf0)
        n = 4, cp = c & 0x07, min = 0x10000;
    else
        return 0;
    if (i + n > s.size()) return 0;
    for (size_t k = 1; k < n; ++k) {
        if ((b(i + k) & 0xc0) != 0x80) return 0;
        cp = cp << 6 | (b(i + k) & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
    *code_point = cp;
    return n;
}

std::string escaped(unsigned char c) {
    switch (c) {
        case '\n':
            return "\\n";
        case '\t':
            return "\\t";
        case '\r':
            return "\\r";
        default: {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", c);
            return buf;
        }
    }
}

}  // namespace

std::string printable(std::string_view text, size_t max_bytes) {
    std::string out;
    size_t i = 0;
    while (i < text.size()) {
        unsigned cp = 0;
        const size_t n = utf8_length(text, i, &cp);
        const bool control = n == 0 || cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f);
        const std::string piece =
            control ? escaped(static_cast<unsigned char>(text[i])) : std::string(text.substr(i, n));
        if (out.size() + piece.size() > max_bytes) break;
        out += piece;
        i += control ? 1 : n;
    }
    if (i < text.size()) out += " ... (" + std::to_string(text.size() - i) + " more bytes)";
    return out;
}

std::string printable_lines(std::string_view text, size_t max_line_bytes) {
    std::string out;
    for (size_t start = 0;;) {
        const size_t nl = text.find('\n', start);
        out += printable(text.substr(start, nl - start), max_line_bytes);
        if (nl == std::string_view::npos) return out;
        out += '\n';
        start = nl + 1;
    }
}

std::string last_lines(std::string_view text, size_t max_lines, size_t max_line_bytes) {
    std::vector<std::string_view> lines;
    bool earlier = false;
    size_t end = text.size();
    // From the end: only the lines kept are ever looked at, however long the text.
    while (end > 0) {
        const size_t nl = text.rfind('\n', end - 1);
        const size_t begin = nl == std::string_view::npos ? 0 : nl + 1;
        std::string_view line = text.substr(begin, end - begin);
        while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t'))
            line.remove_suffix(1);
        if (line.find_first_not_of(" \t") != std::string_view::npos) {
            if (lines.size() == max_lines) {
                earlier = true;
                break;
            }
            lines.push_back(line.substr(line.find_first_not_of(" \t")));
        }
        end = nl == std::string_view::npos ? 0 : nl;
    }
    std::string out = earlier ? "... " : "";
    for (size_t k = lines.size(); k-- > 0;) {
        out += printable(lines[k], max_line_bytes);
        if (k != 0) out += " | ";
    }
    return out;
}

std::string names_in_brief(const std::vector<std::string>& names, size_t shown) {
    std::string text;
    for (size_t i = 0; i < names.size() && i < shown; ++i) text += (i ? ", " : "") + names[i];
    if (names.size() > shown) text += " and " + std::to_string(names.size() - shown) + " more";
    return text;
}

std::string format_bytes(uint64_t bytes) {
    if (bytes < 1024) return std::to_string(bytes) + " B";
    static const char* const kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double value = static_cast<double>(bytes) / 1024;
    size_t unit = 0;
    // Moves up from 1023.95 on, which one decimal would show as "1024.0".
    while (value >= 1023.95 && unit + 1 < std::size(kUnits)) {
        value /= 1024;
        ++unit;
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f %s", value, kUnits[unit]);
    return buf;
}

std::string trim(std::string_view s) {
    const size_t begin = s.find_first_not_of(" \t\r\n");
    if (begin == std::string_view::npos) return {};
    const size_t end = s.find_last_not_of(" \t\r\n");
    return std::string(s.substr(begin, end - begin + 1));
}

std::optional<long long> parse_decimal(std::string_view text, long long lo, long long hi) {
    const bool negative = !text.empty() && text[0] == '-';
    const std::string_view digits = text.substr(negative ? 1 : 0);
    // 18 digits cannot overflow a long long.
    if (digits.empty() || digits.size() > 18) return std::nullopt;
    long long value = 0;
    for (char c : digits) {
        if (c < '0' || c > '9') return std::nullopt;
        value = value * 10 + (c - '0');
    }
    if (negative) value = -value;
    if (value < lo || value > hi) return std::nullopt;
    return value;
}

std::optional<double> parse_real(std::string_view text, double lo, double hi) {
    // strtod alone would also take hex, "inf", "nan" and leading blanks.
    const std::string s(text);
    if (s.empty() || s[0] == '+' || s.find_first_not_of("0123456789.eE+-") != std::string::npos)
        return std::nullopt;
    if (s.find_first_of("0123456789") == std::string::npos) return std::nullopt;
    char* end = nullptr;
    const double value = std::strtod(s.c_str(), &end);
    if (end != s.c_str() + s.size() || !std::isfinite(value) || value < lo || value > hi)
        return std::nullopt;
    return value;
}

std::string format_usd(double usd) {
    char buf[48];
    // Below a cent two decimals would say $0.00 for a run that did cost something.
    std::snprintf(buf, sizeof buf, usd > 0 && usd < 0.01 ? "$%.3f" : "$%.2f", usd);
    return buf;
}

bool wildcard_match(std::string_view pattern, std::string_view text, bool fold_case) {
    const auto same = [fold_case](char a, char b) {
        if (!fold_case) return a == b;
        return std::tolower(static_cast<unsigned char>(a)) ==
               std::tolower(static_cast<unsigned char>(b));
    };
    // Iterative, with one backtrack point (the last `*`): linear in practice, never recursive,
    // so a hostile pattern of many `*` cannot exhaust the stack.
    size_t p = 0, t = 0, star = std::string_view::npos, resume = 0;
    while (t < text.size()) {
        if (p < pattern.size() && pattern[p] == '*') {
            star = p++;
            resume = t;
        } else if (p < pattern.size() && (pattern[p] == '?' || same(pattern[p], text[t]))) {
            ++p;
            ++t;
        } else if (star != std::string_view::npos) {
            p = star + 1;
            t = ++resume;
        } else {
            return false;
        }
    }
    while (p < pattern.size() && pattern[p] == '*') ++p;
    return p == pattern.size();
}

size_t edit_distance(std::string_view a, std::string_view b) {
    // Three rows of the table: a swap looks two rows back.
    std::vector<size_t> before(b.size() + 1);
    std::vector<size_t> above(b.size() + 1);
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) above[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        row[0] = i;
        for (size_t j = 1; j <= b.size(); ++j) {
            row[j] =
                std::min({above[j] + 1, row[j - 1] + 1, above[j - 1] + (a[i - 1] != b[j - 1])});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                row[j] = std::min(row[j], before[j - 2] + 1);
        }
        std::swap(before, above);
        std::swap(above, row);
    }
    return above[b.size()];
}

std::string number_text(double value) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", value);
    return buf;
}

std::vector<std::string> split(std::string_view text, char sep) {
    std::vector<std::string> fields;
    for (size_t start = 0;;) {
        const size_t at = text.find(sep, start);
        fields.emplace_back(text.substr(start, at - start));
        if (at == std::string_view::npos) return fields;
        start = at + 1;
    }
}

std::string random_token() {
    std::random_device rd;
    std::string token = "mlt-";
    const char* hex = "0123456789abcdef";
    for (int i = 0; i < 32; ++i) token += hex[rd() & 15];
    return token;
}

}  // namespace mlt
