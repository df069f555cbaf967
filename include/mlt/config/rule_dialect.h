#pragma once
// The dialect of watch.stop_when on the host (docs/usage.md, "Watching a run"): a rule's
// regex (ECMAScript as std::regex reads it) translated into a POSIX ERE that Debian's mawk,
// BusyBox awk and gawk evaluate alike, or refused with the place of what they cannot; and the
// rules file the host's engine (src/job/sh/guard_rules.sh) reads.

#include <cstddef>
#include <string>
#include <variant>
#include <vector>

#include "mlt/config/settings.h"

namespace mlt {

// A rule's regex as the host evaluates it: `regex` is searched in each console line. For a
// plateau rule it is `[^]PREFIX(GROUP)SUFFIX[$]` (the anchors, when the rule has them, stand
// outside the three parts): the metric's value is what GROUP matches (docs/usage.md).
struct HostRegex {
    std::string regex;
    std::string prefix;
    std::string group;
    std::string suffix;
};

// Why the host cannot evaluate a regex alike: `offset` is the byte of the rule's regex that
// the reason is about (0-based).
struct DialectRefusal {
    std::size_t offset = 0;
    std::string why;
};

// `rule`'s regex in the host's dialect, or why not. Expects a regex that compiles as
// ECMAScript (rule_error() checks that first); one that does not is refused somewhere.
std::variant<HostRegex, DialectRefusal> host_regex(const StopRule& rule);

// The host's rules file for `rules`, in their order (docs/remote-protocol.md, "The rules
// file"). Throws mlt::Error (config) naming the rule when one is refused by host_regex().
std::string host_rules_text(const std::vector<StopRule>& rules);

// The rules file's line (without its end) of a metric that the host only reads, never fires
// on: `m`, then the regex's four fields as a plateau rule's (checkpoints' keep_best). Throws
// mlt::Error (config) when host_regex() refuses `regex`.
std::string host_metric_line(const std::string& regex);

}  // namespace mlt
