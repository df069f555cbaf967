// The check of one watch.stop_when rule, its compiled regex and its name in messages.
#include "mlt/config/stop_rule_spec.h"

#include <variant>

#include "mlt/config/rule_dialect.h"

namespace mlt {

std::string describe_rule(const StopRule& rule) {
    if (!rule.plateau) return "'" + rule.regex + "'";
    return "plateau of '" + rule.regex + "' (" + (rule.maximize ? "max" : "min") + ", patience " +
           std::to_string(rule.patience) + ")";
}

// ECMAScript first (what the rule means), then what the host makes of it.
std::optional<RuleError> rule_error(const StopRule& rule) {
    try {
        const std::regex re = rule_regex(rule);
        if (rule.plateau && re.mark_count() < 1)
            return RuleError{
                "a plateau rule's metric regex needs a group around the value, e.g. "
                "'val_loss[=:] *([0-9.eE+-]+)'",
                std::nullopt};
    } catch (const std::regex_error& e) {
        return RuleError{std::string("not a valid regex: ") + e.what(), std::nullopt};
    }
    const auto host = host_regex(rule);
    if (const auto* refused = std::get_if<DialectRefusal>(&host))
        return RuleError{refused->why, refused->offset};
    return std::nullopt;
}

std::regex rule_regex(const StopRule& rule) {
    return std::regex(rule.regex, std::regex::ECMAScript | std::regex::optimize);
}

}  // namespace mlt
