// Reading a watch.stop_when regex (ECMAScript) into the terms the host's dialect keeps, and
// refusing, with its place, what mawk and BusyBox awk cannot evaluate alike.
#include "rule_dialect_parse.h"

#include <optional>
#include <utility>

namespace mlt::rule_dialect_detail {

namespace {

// Deeper nesting is no log pattern; the writer recurses once per level.
constexpr int kMaxDepth = 16;

ByteSet byte_range(int from, int to) {
    ByteSet out;
    for (int c = from; c <= to; ++c) out.set(static_cast<std::size_t>(c));
    return out;
}

ByteSet one_byte(int c) {
    return byte_range(c, c);
}

// The classes as std::regex reads them in the "C" locale: \d, \s (" \t\n\v\f\r"), \w.
ByteSet digits() {
    return byte_range('0', '9');
}
ByteSet spaces() {
    return byte_range('\t', '\r') | one_byte(' ');
}
ByteSet word_bytes() {
    return digits() | byte_range('A', 'Z') | byte_range('a', 'z') | one_byte('_');
}

// A bracket's POSIX class ([:alpha:] in [[:alpha:]]) in the "C" locale, as std::regex reads
// it; nothing for a name it does not know.
std::optional<ByteSet> posix_class(std::string_view name) {
    const ByteSet upper = byte_range('A', 'Z'), lower = byte_range('a', 'z');
    const ByteSet punct =
        byte_range('!', '/') | byte_range(':', '@') | byte_range('[', '`') | byte_range('{', '~');
    if (name == "alpha") return upper | lower;
    if (name == "digit") return digits();
    if (name == "alnum") return upper | lower | digits();
    if (name == "upper") return upper;
    if (name == "lower") return lower;
    if (name == "space") return spaces();
    if (name == "blank") return one_byte(' ') | one_byte('\t');
    if (name == "punct") return punct;
    if (name == "print") return byte_range(' ', '~');
    if (name == "graph") return byte_range('!', '~');
    if (name == "cntrl") return byte_range(0, 31) | one_byte(127);
    if (name == "xdigit") return digits() | byte_range('A', 'F') | byte_range('a', 'f');
    return std::nullopt;
}

int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

bool is_alnum(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// What a class escape (\d \D \s \S \w \W) stands for; nothing for another letter.
std::optional<ByteSet> class_escape(char c) {
    switch (c) {
        case 'd':
            return digits();
        case 'D':
            return ~digits();
        case 's':
            return spaces();
        case 'S':
            return ~spaces();
        case 'w':
            return word_bytes();
        case 'W':
            return ~word_bytes();
        default:
            return std::nullopt;
    }
}

// One item of a bracket: a byte (which may start or end a range) or a class.
struct ClassItem {
    bool single = true;
    ByteSet bytes;
    int byte = 0;
};

class Reader {
  public:
    explicit Reader(std::string_view regex) : s_(regex) {}

    ParsedRegex regex() {
        ParsedRegex out;
        out.branches = branches(0, &out.bars);
        if (i_ < s_.size()) refuse(i_, "an unmatched )");
        return out;
    }

  private:
    bool more() const { return i_ < s_.size(); }
    char peek(std::size_t ahead = 0) const {
        return i_ + ahead < s_.size() ? s_[i_ + ahead] : '\0';
    }
    [[noreturn]] static void refuse(std::size_t at, std::string why) {
        throw Refused{DialectRefusal{at, std::move(why)}};
    }

    std::vector<Sequence> branches(int depth, std::vector<std::size_t>* bars = nullptr);
    Node term(int depth);
    Node group(int depth);
    void quantifier(Node& node);
    bool bounds(Node& node);
    Node escape();
    int char_escape(char c, std::size_t at);
    Node bracket();
    ClassItem class_item();

    std::string_view s_;
    std::size_t i_ = 0;
};

std::vector<Sequence> Reader::branches(int depth, std::vector<std::size_t>* bars) {
    std::vector<Sequence> out;
    for (;;) {
        Sequence sequence;
        while (more() && peek() != '|' && peek() != ')') sequence.push_back(term(depth));
        // mawk cannot compile an empty alternative or group: `(a|)`, `()`, `a|`.
        if (sequence.empty())
            refuse(i_,
                   "an empty alternative or group (mawk cannot read it): write (x)? for an "
                   "optional x");
        out.push_back(std::move(sequence));
        if (peek() != '|' || !more()) return out;
        if (bars) bars->push_back(i_);
        ++i_;
    }
}

Node Reader::term(int depth) {
    Node node;
    node.at = i_;
    const char c = s_[i_];
    if (c == '^' || c == '$') {
        ++i_;
        node.kind = c == '^' ? Node::Kind::line_start : Node::Kind::line_end;
        if (more() && (peek() == '*' || peek() == '+' || peek() == '?' || peek() == '{'))
            refuse(i_, "a repeated anchor");
        return node;
    }
    if (c == '*' || c == '+' || c == '?') refuse(i_, "nothing to repeat");
    if (c == '{') refuse(i_, "a { that starts no repeat: write \\{");
    if (c == '(') {
        node = group(depth);
    } else if (c == '[') {
        node = bracket();
    } else if (c == '\\') {
        node = escape();
    } else {
        ++i_;
        if (c == '.')
            node.kind = Node::Kind::any;
        else
            node.bytes = one_byte(static_cast<unsigned char>(c));
    }
    quantifier(node);
    return node;
}

Node Reader::group(int depth) {
    Node node;
    node.kind = Node::Kind::group;
    node.at = i_;
    if (depth >= kMaxDepth) refuse(i_, "groups nested deeper than 16");
    ++i_;
    node.capturing = true;
    if (peek() == '?') {
        if (peek(1) == '=' || peek(1) == '!')
            refuse(node.at, "a lookahead ((?= or (?!): the host's awk has none");
        if (peek(1) == '<' && (peek(2) == '=' || peek(2) == '!'))
            refuse(node.at, "a lookbehind ((?<= or (?<!): the host's awk has none");
        if (peek(1) == '<') refuse(node.at, "a named group ((?<name>): write a plain group");
        if (peek(1) != ':') refuse(node.at, "an unknown kind of group (?");
        node.capturing = false;
        i_ += 2;
    }
    node.branches = branches(depth + 1);
    if (peek() != ')' || !more()) refuse(node.at, "an unclosed (");
    ++i_;
    return node;
}

void Reader::quantifier(Node& node) {
    if (!more()) return;
    const std::size_t at = i_;
    const char c = peek();
    if (c == '*' || c == '+' || c == '?') {
        node.min = c == '+' ? 1 : 0;
        node.max = c == '?' ? 1 : -1;
        ++i_;
    } else if (c != '{' || !bounds(node)) {
        if (c == '{') refuse(at, "a { that starts no repeat: write \\{");
        return;
    }
    node.repeat_at = at;
    if (peek() == '?' && more())
        refuse(i_, "a lazy quantifier (*?, +?, ??, {n,m}?): the host's awk has none; drop its ?");
    if (more() && (peek() == '*' || peek() == '+' || peek() == '{'))
        refuse(i_, "a quantifier right after a quantifier: put the first in a group");
    // mawk and BusyBox awk disagree on ^ and $ in a repeated group: (^a)+ on "aa".
    if (auto anchor = first_anchor(node))
        refuse(*anchor, "an anchor (^ or $) inside a repeated group");
}

// {n}, {n,} or {n,m} at the current place, into node's bounds; false (nothing read) when
// it is none of them.
bool Reader::bounds(Node& node) {
    std::size_t j = i_ + 1;
    auto number = [&](int& out) {
        const std::size_t from = j;
        out = 0;
        while (j < s_.size() && s_[j] >= '0' && s_[j] <= '9' && j - from < 6)
            out = out * 10 + (s_[j++] - '0');
        return j > from;
    };
    int min = 0, max = 0;
    if (!number(min)) return false;
    max = min;
    if (j < s_.size() && s_[j] == ',') {
        ++j;
        if (!number(max)) max = -1;
    }
    if (j >= s_.size() || s_[j] != '}') return false;
    if (max != -1 && max < min) refuse(i_, "a repeat {n,m} with m below n");
    if (min > kMaxRepeat || max > kMaxRepeat)
        refuse(i_, "a repeat over 32 (mawk has no {n,m}: the host expands it, up to 32)");
    if (max == 0) refuse(i_, "a repeat of 0 times: drop it");
    node.min = min;
    node.max = max;
    i_ = j + 1;
    return true;
}

Node Reader::escape() {
    Node node;
    node.at = i_;
    ++i_;
    if (!more()) refuse(node.at, "a \\ at the end of the regex");
    const char c = s_[i_++];
    if (auto set = class_escape(c)) {
        node.bytes = *set;
        return node;
    }
    if (c == 'b' || c == 'B')
        refuse(node.at, std::string("\\") + c +
                            " (a word boundary): the host's awk has none; write "
                            "(^|[^A-Za-z0-9_]) or [^A-Za-z0-9_] around the word instead");
    if (c == 'n' || c == 'r')
        refuse(node.at, std::string("\\") + c + ": a console line never holds one (it ends there)");
    if (c >= '1' && c <= '9') refuse(node.at, "a backreference: the host's awk has none");
    if (c == 'k') refuse(node.at, "a named backreference (\\k): the host's awk has none");
    node.bytes = one_byte(char_escape(c, node.at));
    return node;
}

// The byte of the escape `\c` (after the `\` at `at`) that stands for one byte, in or out of
// a bracket.
int Reader::char_escape(char c, std::size_t at) {
    switch (c) {
        case 't':
            return '\t';
        case 'v':
            return '\v';
        case 'f':
            return '\f';
        case 'n':
            return '\n';
        case 'r':
            return '\r';
        case 'c':
            if (!more() || !((peek() >= 'a' && peek() <= 'z') || (peek() >= 'A' && peek() <= 'Z')))
                refuse(at, "\\c without a letter");
            return s_[i_++] % 32;
        case 'x':
        case 'u': {
            const std::size_t digits = c == 'x' ? 2 : 4;
            int value = 0;
            for (std::size_t k = 0; k < digits; ++k) {
                const int d = hex_digit(peek());
                if (d < 0 || !more()) refuse(at, std::string("\\") + c + " without its hex digits");
                value = value * 16 + d;
                ++i_;
            }
            if (value == 0) refuse(at, "a NUL byte: a console line never holds one");
            if (value > (c == 'x' ? 0xff : 0x7f))
                refuse(at, "\\u beyond ASCII: write the character itself");
            return value;
        }
        default:
            break;
    }
    if (c == '0') refuse(at, "a NUL byte (\\0): a console line never holds one");
    if (is_alnum(c)) refuse(at, std::string("an unknown escape \\") + c);
    return static_cast<unsigned char>(c);
}

Node Reader::bracket() {
    Node node;
    node.at = i_;
    ++i_;
    const bool negate = peek() == '^' && more();
    if (negate) ++i_;
    if (peek() == ']' && more())
        refuse(node.at, "an empty class ([] matches nothing, [^] anything): drop it or write .");
    ByteSet set;
    for (;;) {
        if (!more()) refuse(node.at, "an unclosed [");
        if (peek() == ']') break;
        const std::size_t item_at = i_;
        const ClassItem from = class_item();
        if (peek() == '-' && i_ + 1 < s_.size() && s_[i_ + 1] != ']') {
            ++i_;
            const ClassItem to = class_item();
            if (!from.single || !to.single) refuse(item_at, "a range with a class at one end");
            if (from.byte > to.byte) refuse(item_at, "a range whose start is above its end");
            set |= byte_range(from.byte, to.byte);
        } else {
            set |= from.bytes;
        }
    }
    ++i_;
    node.bytes = negate ? ~set : set;
    return node;
}

ClassItem Reader::class_item() {
    const std::size_t at = i_;
    ClassItem item;
    const char c = s_[i_++];
    if (c == '[' && (peek() == ':' || peek() == '.' || peek() == '=')) {
        const char kind = peek();
        const std::size_t end = s_.find(std::string{kind, ']'}, i_ + 1);
        if (kind != ':' || end == std::string_view::npos)
            refuse(at, "a collating element or an equivalence class ([. .] or [= =])");
        const auto set = posix_class(s_.substr(i_ + 1, end - i_ - 1));
        if (!set)
            refuse(at, "an unknown class [:" + std::string(s_.substr(i_ + 1, end - i_ - 1)) + ":]");
        i_ = end + 2;
        item.single = false;
        item.bytes = *set;
        return item;
    }
    if (c != '\\') {
        item.byte = static_cast<unsigned char>(c);
    } else {
        if (!more()) refuse(at, "an unclosed [");
        const char e = s_[i_++];
        if (auto set = class_escape(e)) {
            item.single = false;
            item.bytes = *set;
            return item;
        }
        if (e == 'B') refuse(at, "\\B in a class");
        if (e >= '1' && e <= '9') refuse(at, "a backreference in a class");
        // In a class \b is the backspace, and \- a dash.
        item.byte = e == 'b' ? '\b' : e == '-' ? '-' : char_escape(e, at);
    }
    item.bytes = one_byte(item.byte);
    return item;
}

}  // namespace

ParsedRegex parse_rule_regex(std::string_view regex) {
    return Reader(regex).regex();
}

std::optional<std::size_t> first_anchor(const Node& node) {
    if (node.kind == Node::Kind::line_start || node.kind == Node::Kind::line_end) return node.at;
    for (const Sequence& branch : node.branches)
        for (const Node& term : branch)
            if (auto at = first_anchor(term)) return at;
    return std::nullopt;
}

const Node* first_capture(const Node& node) {
    if (node.kind == Node::Kind::group && node.capturing) return &node;
    for (const Sequence& branch : node.branches)
        for (const Node& term : branch)
            if (const Node* found = first_capture(term)) return found;
    return nullptr;
}

}  // namespace mlt::rule_dialect_detail
