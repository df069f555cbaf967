// The check of one watch.stop_when rule, its compiled regex and its name in messages.
#include "mlt/config/stop_rule_spec.h"

namespace mlt {

std::string describe_rule(const StopRule& rule) {
    if (!rule.plateau) return "'" + rule.regex + "'";
    return "plateau of '" + rule.regex + "' (" + (rule.maximize ? "max" : "min") + ", patience " +
           std::to_string(rule.patience) + ")";
}

std::optional<std::string> rule_error(const StopRule& rule) {
    try {
        const std::regex re = rule_regex(rule);
        if (rule.plateau && re.mark_count() < 1)
            return "a plateau rule's metric regex needs a group around the value, e.g. "
                   "'val_loss[=:] *([0-9.eE+-]+)'";
    } catch (const std::regex_error& e) {
        return std::string("not a valid regex: ") + e.what();
    }
    return std::nullopt;
}

std::regex rule_regex(const StopRule& rule) {
    return std::regex(rule.regex, std::regex::ECMAScript | std::regex::optimize);
}

}  // namespace mlt
