// watch.stop_when: regex and plateau rules over the console log's lines.
#include "mlt/train/watch/stop_rules.h"

#include <algorithm>
#include <cstdlib>

#include "mlt/util/text.h"

namespace mlt {

StopRules::StopRules(const std::vector<StopRule>& rules) {
    for (const auto& r : rules) rules_.push_back({r, rule_regex(r), {}, 0});
}

bool StopRules::learns() const {
    return std::any_of(rules_.begin(), rules_.end(), [](const Rule& r) { return r.decl.plateau; });
}

std::optional<RuleHit> StopRules::feed(std::string_view bytes) {
    return take(bytes, true);
}

void StopRules::prime(std::string_view bytes) {
    take(bytes, false);
    partial_.clear();  // what follows the copy starts a line of its own
}

std::optional<RuleHit> StopRules::take(std::string_view bytes, bool fire) {
    if (rules_.empty() || fired_) return std::nullopt;
    std::optional<RuleHit> hit;
    for (char c : bytes) {
        if (c != '\n' && c != '\r') {
            if (partial_.size() < kMaxLine) partial_ += c;
            continue;
        }
        if (!hit) hit = line(partial_, fire);
        partial_.clear();
    }
    if (hit) fired_ = true;
    return hit;
}

std::optional<RuleHit> StopRules::line(const std::string& text, bool fire) {
    if (text.empty()) return std::nullopt;
    for (Rule& rule : rules_) {
        std::smatch m;
        if (!std::regex_search(text, m, rule.re)) continue;
        if (!rule.decl.plateau) {
            if (fire) return RuleHit{describe_rule(rule.decl), text};
            continue;
        }
        const std::string value = m[1].str();
        char* end = nullptr;
        const double v = std::strtod(value.c_str(), &end);
        if (value.empty() || end == value.c_str()) continue;  // no number: not a value
        const bool better = !rule.best || (rule.decl.maximize ? v > *rule.best : v < *rule.best);
        if (better) {
            rule.best = v;
            rule.since_best = 0;
        } else if (++rule.since_best >= rule.decl.patience && fire) {
            return RuleHit{describe_rule(rule.decl), text};
        }
    }
    return std::nullopt;
}

}  // namespace mlt
