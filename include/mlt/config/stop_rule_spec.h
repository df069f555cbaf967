#pragma once
// A watch.stop_when rule as the settings give it (StopRule, mlt/config/settings.h), checked
// when the settings are read: what a message calls it, why it cannot be used, and its regex
// compiled as the run's rules (mlt/train/stop_rules.h) search with it.

#include <optional>
#include <regex>
#include <string>

#include "mlt/config/settings.h"

namespace mlt {

// A rule as the messages and the history name it: `'REGEX'`, or `plateau of 'REGEX' (min,
// patience 5)`.
std::string describe_rule(const StopRule& rule);

// Why `rule` cannot be used (a regex that does not compile, a plateau regex without a
// group), or nullopt.
std::optional<std::string> rule_error(const StopRule& rule);

// The regex of `rule`, compiled (ECMAScript, optimized for many searches). Throws
// std::regex_error for a rule that rule_error() refuses.
std::regex rule_regex(const StopRule& rule);

}  // namespace mlt
