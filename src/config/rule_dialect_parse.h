#pragma once
// A watch.stop_when regex read as ECMAScript into a tree of what the host's dialect keeps
// (rule_dialect_parse.cpp), for rule_dialect.cpp to write as a POSIX ERE. Private to
// src/config/.

#include <bitset>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mlt/config/rule_dialect.h"

namespace mlt::rule_dialect_detail {

// The bytes one position of a line may hold.
using ByteSet = std::bitset<256>;

struct Node;
// One alternative: its terms in order.
using Sequence = std::vector<Node>;

// A term of a regex: a byte out of a set, any byte, a group, or an anchor; repeated from
// `min` to `max` times (max -1: no bound).
struct Node {
    enum class Kind { bytes, any, group, line_start, line_end };
    Kind kind = Kind::bytes;
    ByteSet bytes;                   // kind bytes
    bool capturing = false;          // kind group
    std::vector<Sequence> branches;  // kind group: its alternatives
    int min = 1;
    int max = 1;
    std::size_t at = 0;         // where it starts in the regex
    std::size_t repeat_at = 0;  // where its quantifier starts (when it has one)
};

// Thrown inside the reader and the writer; host_regex() turns it into its result.
struct Refused {
    DialectRefusal refusal;
};

// A regex read: its top-level alternatives, and where the `|` between them stand.
struct ParsedRegex {
    std::vector<Sequence> branches;
    std::vector<std::size_t> bars;
};

// `regex` read. Throws Refused for what the dialect does not keep.
ParsedRegex parse_rule_regex(std::string_view regex);

// Where the first anchor (^ or $) in `node` stands, or nothing.
std::optional<std::size_t> first_anchor(const Node& node);

// The first capturing group in `node` (itself included), or null.
const Node* first_capture(const Node& node);

// The largest bound of an interval ({n,m}) the dialect expands.
constexpr int kMaxRepeat = 32;

}  // namespace mlt::rule_dialect_detail
