// A watch.stop_when rule checked as the settings are read (mlt/config/stop_rule_spec.h): a
// regex that does not compile, a plateau rule without a group; the rule's name in messages.
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "mlt/config/stop_rule_spec.h"

namespace {

using mlt::StopRule;

// {regex, plateau, maximize, patience}
const StopRule kNan{"loss[=:] *nan", false, false, 5};
const StopRule kBroken{"loss=(nan", false, false, 5};
const StopRule kNoGroup{"loss=[0-9.]+", true, false, 5};
const StopRule kPlateau{"loss=([0-9.]+)", true, false, 5};
const StopRule kMaxPlateau{"acc=([0-9.]+)", true, true, 3};

TEST(StopRuleSpec, RulesAreChecked) {
    EXPECT_FALSE(mlt::rule_error(kNan));
    const auto bad = mlt::rule_error(kBroken);
    ASSERT_TRUE(bad);
    EXPECT_EQ(bad->why.rfind("not a valid regex: ", 0), 0u) << bad->why;
    const auto no_group = mlt::rule_error(kNoGroup);
    ASSERT_TRUE(no_group);
    EXPECT_NE(no_group->why.find("needs a group around the value"), std::string::npos)
        << no_group->why;
    EXPECT_FALSE(mlt::rule_error(kPlateau));
}

TEST(StopRuleSpec, TheCompiledRegexSearchesAsTheRuleSays) {
    const std::regex re = mlt::rule_regex(kNan);
    EXPECT_TRUE(std::regex_search("step 3 loss: nan", re));
    EXPECT_FALSE(std::regex_search("step 3 loss: 0.5", re));
    EXPECT_THROW(mlt::rule_regex(kBroken), std::regex_error);
}

TEST(StopRuleSpec, RulesAreNamedForMessages) {
    EXPECT_EQ(mlt::describe_rule(kNan), "'loss[=:] *nan'");
    EXPECT_EQ(mlt::describe_rule(kMaxPlateau), "plateau of 'acc=([0-9.]+)' (max, patience 3)");
}

}  // namespace
