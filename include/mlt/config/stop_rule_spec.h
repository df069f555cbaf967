#pragma once
// A watch.stop_when rule as the settings give it (StopRule, mlt/config/settings.h), checked
// when the settings are read: what a message calls it, why it cannot be used, and its regex
// compiled as the run's rules (mlt/train/watch/stop_rules.h) search with it.

#include <cstddef>
#include <optional>
#include <regex>
#include <string>

#include "mlt/config/settings.h"

namespace mlt {

// A rule as the messages and the history name it: `'REGEX'`, or `plateau of 'REGEX' (min,
// patience 5)`.
std::string describe_rule(const StopRule& rule);

// Why a rule cannot be used, and the byte of its regex that the reason is about (0-based),
// when there is one.
struct RuleError {
    std::string why;
    std::optional<std::size_t> offset;
};

// Why `rule` cannot be used (a regex that does not compile as ECMAScript, a plateau regex
// without a group, one that the host cannot evaluate: mlt/config/rule_dialect.h), or nullopt.
std::optional<RuleError> rule_error(const StopRule& rule);

// The regex of `rule`, compiled (ECMAScript, optimized for many searches). Throws
// std::regex_error for a rule that rule_error() refuses.
std::regex rule_regex(const StopRule& rule);

}  // namespace mlt
