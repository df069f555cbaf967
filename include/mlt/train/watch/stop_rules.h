#pragma once
// watch.stop_when: early-stop rules on the console log of a run's job (docs/usage.md,
// "Watching a run"). Pure logic: TrainRun feeds it the log's bytes as they arrive and stops
// the job when a rule fires.

#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "mlt/config/stop_rule_spec.h"

namespace mlt {

// A rule that fired, and the line that fired it.
struct RuleHit {
    std::string rule;  // describe_rule()
    std::string line;  // as it came (bounded)
};

// The rules over the lines of one log, fed in pieces as they arrive. A line ends at "\n" or
// "\r" (a progress bar rewrites its line with "\r": each state is a line); a line longer than
// kMaxLine is looked at by its first kMaxLine bytes.
class StopRules {
  public:
    static constexpr size_t kMaxLine = 64 * 1024;

    explicit StopRules(const std::vector<StopRule>& rules);

    bool empty() const { return rules_.empty(); }
    // Whether prime() can change anything: only plateau rules learn from earlier lines.
    bool learns() const;
    // The first rule that a complete line of `bytes` fires; once one fired, nothing more.
    std::optional<RuleHit> feed(std::string_view bytes);
    // What was followed before (the local copy of the log, after a --resume): plateau rules
    // learn their best value and count from it; no rule fires.
    void prime(std::string_view bytes);

  private:
    struct Rule {
        StopRule decl;
        std::regex re;
        std::optional<double> best;
        int since_best = 0;
    };
    std::optional<RuleHit> line(const std::string& text, bool fire);
    std::optional<RuleHit> take(std::string_view bytes, bool fire);

    std::vector<Rule> rules_;
    std::string partial_;  // the line so far
    bool fired_ = false;
};

}  // namespace mlt
