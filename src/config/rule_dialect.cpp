// A watch.stop_when regex written as the POSIX ERE that the host's awk reads (mawk, BusyBox
// awk and gawk alike), a plateau rule's regex split around its metric's group, and the
// host's rules file.
#include "mlt/config/rule_dialect.h"

#include <string_view>
#include <utility>

#include "mlt/config/stop_rule_spec.h"
#include "mlt/util/error.h"
#include "rule_dialect_parse.h"

namespace mlt {

namespace {

using rule_dialect_detail::ByteSet;
using rule_dialect_detail::Node;
using rule_dialect_detail::Refused;
using rule_dialect_detail::Sequence;

// Longer is no log pattern, and each awk compiles it once a tick at least.
constexpr std::size_t kMaxLength = 4096;

// A line never holds these: the host cuts lines at \n and \r, and a NUL becomes \001 (a
// byte that a bracket cannot hold portably anyway).
bool never_in_a_line(std::size_t c) {
    return c == 0 || c == '\n' || c == '\r';
}

bool is_alnum(std::size_t c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// The byte `c` alone, as ERE text: escaped where it is special.
std::string literal(std::size_t c) {
    static constexpr std::string_view kSpecial = ".[]()*+?{}|^$\\";
    const char ch = static_cast<char>(c);
    if (kSpecial.find(ch) != std::string_view::npos) return std::string{'\\', ch};
    return std::string(1, ch);
}

// The members of `set` inside a bracket: `]` first, `[` after the others (never before : . =),
// `^` never first, `-` last, runs of letters or digits as ranges. It holds no backslash: mawk
// reads one in a bracket as an escape, POSIX as itself.
std::string members(const ByteSet& set) {
    std::string out = set.test(']') ? "]" : "";
    for (std::size_t c = 1; c < 256; ++c) {
        if (!set.test(c) ||
            std::string_view("]^-[\\").find(static_cast<char>(c)) != std::string_view::npos)
            continue;
        // A run of alphanumerics stays within one of 0-9, A-Z, a-z: others lie between them.
        std::size_t end = c;
        while (is_alnum(c) && end + 1 < 256 && set.test(end + 1) && is_alnum(end + 1)) ++end;
        out += static_cast<char>(c);
        if (end - c >= 2) {
            out += '-';
            out += static_cast<char>(end);
            c = end;
        }
    }
    if (set.test('[')) out += '[';
    const bool dash_first = out.empty() && set.test('^') && set.test('-');
    if (dash_first) out += '-';
    if (set.test('^')) out += '^';
    if (set.test('-') && !dash_first) out += '-';
    return out;
}

// `set` without the bytes a line never holds.
ByteSet in_a_line(ByteSet set) {
    for (std::size_t c = 0; c < 256; ++c)
        if (never_in_a_line(c)) set.reset(c);
    return set;
}

// A set of bytes (some of them in a line) as one ERE atom.
std::string byte_set(const ByteSet& all) {
    const ByteSet set = in_a_line(all);
    if (set.count() == 1)
        for (std::size_t c = 0; c < 256; ++c)
            if (set.test(c)) return literal(c);
    if (!set.test('\\')) return "[" + members(set) + "]";
    const ByteSet others = in_a_line(~set);
    if (others.none()) return ".";
    // The backslash stays out of brackets: beside a small set as an alternative, else the
    // set is written as what it leaves out.
    ByteSet rest = set;
    rest.reset('\\');
    if (rest.count() > others.count()) return "[^" + members(others) + "]";
    return "(\\\\|" + byte_set(rest) + ")";
}

[[noreturn]] void refuse(std::size_t at, std::string why) {
    throw Refused{DialectRefusal{at, std::move(why)}};
}

// `atom` repeated as `node` says; mawk has no {n,m}: x{2,4} is xx(xx?)?.
std::string repeat(const std::string& atom, const Node& node) {
    if (node.min == 1 && node.max == 1) return atom;
    std::string out;
    for (int k = 1; k < node.min; ++k) out += atom;
    if (node.max == -1) {
        out += atom + (node.min == 0 ? "*" : "+");
    } else {
        if (node.min > 0) out += atom;
        std::string optional;
        for (int k = node.max - node.min; k > 0; --k)
            optional = optional.empty() ? atom + "?" : "(" + atom + optional + ")?";
        out += optional;
    }
    if (out.size() > kMaxLength) refuse(node.repeat_at, "a repeat that expands past 4096 bytes");
    return out;
}

std::string branches(const std::vector<Sequence>& branches);

std::string term(const Node& node) {
    switch (node.kind) {
        case Node::Kind::line_start:
            return "^";
        case Node::Kind::line_end:
            return "$";
        case Node::Kind::any:
            return repeat(".", node);
        case Node::Kind::group:
            return repeat("(" + branches(node.branches) + ")", node);
        case Node::Kind::bytes:
            break;
    }
    if (in_a_line(node.bytes).none())
        refuse(node.at, "a class of \\n or \\r alone: a console line never holds one");
    return repeat(byte_set(node.bytes), node);
}

std::string sequence(const Sequence& terms, std::size_t from, std::size_t to) {
    std::string out;
    for (std::size_t k = from; k < to; ++k) out += term(terms[k]);
    return out;
}

std::string branches(const std::vector<Sequence>& branches) {
    std::string out;
    for (const Sequence& branch : branches)
        out += (out.empty() ? "" : "|") + sequence(branch, 0, branch.size());
    return out;
}

// Where the metric's group (the first capturing group) stands among the top-level terms;
// refused when it is not one of them.
std::size_t metric_group(const Sequence& terms) {
    for (std::size_t k = 0; k < terms.size(); ++k) {
        const Node& node = terms[k];
        const Node* capture = rule_dialect_detail::first_capture(node);
        if (!capture) continue;
        if (capture != &node)
            refuse(capture->at,
                   "the metric's group stands inside another group: the host finds it only at "
                   "the top level of the regex");
        if (node.min != 1 || node.max != 1)
            refuse(node.repeat_at, "the metric's group is repeated: put the repeat inside it");
        return k;
    }
    refuse(0, "a plateau rule's metric regex needs a group around the value");
}

// A plateau rule's metric is its first group. The host has no captures: the group stands at
// the top level, and the regex is split around it (docs/usage.md, "Watching a run").
HostRegex split_plateau(const rule_dialect_detail::ParsedRegex& parsed) {
    if (!parsed.bars.empty())
        refuse(parsed.bars.front(),
               "a plateau metric with | at its top level: put the alternatives in a (?:...) group");
    const Sequence& terms = parsed.branches.front();
    const std::size_t group = metric_group(terms);
    for (std::size_t k = 0; k < terms.size(); ++k) {
        const bool edge = (terms[k].kind == Node::Kind::line_start && k == 0) ||
                          (terms[k].kind == Node::Kind::line_end && k + 1 == terms.size());
        if (auto at = rule_dialect_detail::first_anchor(terms[k]); at && !edge)
            refuse(*at, "a plateau metric has ^ only at its start and $ only at its end");
    }
    const bool starts = terms.front().kind == Node::Kind::line_start;
    const bool ends = terms.back().kind == Node::Kind::line_end;
    HostRegex out;
    out.prefix = sequence(terms, starts ? 1 : 0, group);
    out.group = branches(terms[group].branches);
    out.suffix = sequence(terms, group + 1, terms.size() - (ends ? 1 : 0));
    out.regex =
        (starts ? "^" : "") + out.prefix + "(" + out.group + ")" + out.suffix + (ends ? "$" : "");
    return out;
}

// A field of the rules file: its bytes, but `%` and control bytes as %XX (no tab, no line
// end, no NUL in a field).
std::string field(std::string_view text) {
    static constexpr char kHex[] = "0123456789ABCDEF";
    std::string out;
    for (const char ch : text) {
        const auto c = static_cast<unsigned char>(ch);
        if (c == '%' || c < 0x20 || c == 0x7f) {
            out += '%';
            out += kHex[c >> 4];
            out += kHex[c & 15];
        } else {
            out += ch;
        }
    }
    return out;
}

}  // namespace

std::variant<HostRegex, DialectRefusal> host_regex(const StopRule& rule) {
    try {
        const auto parsed = rule_dialect_detail::parse_rule_regex(rule.regex);
        HostRegex out;
        if (rule.plateau)
            out = split_plateau(parsed);
        else
            out.regex = branches(parsed.branches);
        if (out.regex.size() > kMaxLength)
            return DialectRefusal{0, "longer than 4096 bytes once translated"};
        return out;
    } catch (const Refused& refused) {
        return refused.refusal;
    }
}

std::string host_rules_text(const std::vector<StopRule>& rules) {
    std::string out = "mlt-rules 1\n";
    for (const StopRule& rule : rules) {
        const auto translated = host_regex(rule);
        if (const auto* refused = std::get_if<DialectRefusal>(&translated))
            throw config_error("watch.stop_when rule " + describe_rule(rule) +
                                   " is no rule the host can evaluate: " + refused->why +
                                   " (at character " + std::to_string(refused->offset + 1) +
                                   " of the regex)",
                               "fix the rule; see docs/usage.md, \"Watching a run\"");
        const HostRegex& host = std::get<HostRegex>(translated);
        if (!rule.plateau) {
            out += "r\t" + field(host.regex) + "\n";
            continue;
        }
        out += std::string("p\t") + (rule.maximize ? "max" : "min") + "\t" +
               std::to_string(rule.patience) + "\t" + field(host.regex) + "\t" +
               field(host.prefix) + "\t" + field(host.group) + "\t" + field(host.suffix) + "\n";
    }
    return out;
}

std::string host_metric_line(const std::string& regex) {
    StopRule rule;
    rule.regex = regex;
    rule.plateau = true;
    const auto translated = host_regex(rule);
    if (const auto* refused = std::get_if<DialectRefusal>(&translated))
        throw config_error("checkpoints.keep_best.metric " + regex +
                               " is no metric the host can read: " + refused->why,
                           "fix the regex; see docs/usage.md, \"Watching a run\"");
    const HostRegex& host = std::get<HostRegex>(translated);
    return "m\t" + field(host.regex) + "\t" + field(host.prefix) + "\t" + field(host.group) + "\t" +
           field(host.suffix);
}

}  // namespace mlt
