// watch.stop_when over a console log fed in pieces (StopRules): regex rules, plateau rules
// in both modes, lines cut anywhere, "\r" progress lines, and the priming of a --resume.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mlt/train/watch/stop_rules.h"

namespace {

using mlt::RuleHit;
using mlt::StopRule;
using mlt::StopRules;

StopRule regex(std::string re) {
    StopRule r;
    r.regex = std::move(re);
    return r;
}

StopRule plateau(std::string re, bool maximize, int patience) {
    StopRule r;
    r.regex = std::move(re);
    r.plateau = true;
    r.maximize = maximize;
    r.patience = patience;
    return r;
}

// Feeds `log` one byte at a time; returns the hit and how many bytes had been fed then.
std::pair<std::optional<RuleHit>, size_t> feed_bytewise(StopRules& rules, const std::string& log) {
    for (size_t i = 0; i < log.size(); ++i)
        if (auto hit = rules.feed(std::string_view(&log[i], 1))) return {hit, i + 1};
    return {std::nullopt, log.size()};
}

TEST(StopRules, ARegexFiresOnTheFirstCompleteLineThatHasItAndOnlyOnce) {
    StopRules rules({regex("loss[=:] *nan"), regex("CUDA out of memory")});
    std::string log;
    for (int step = 1; step < 30; ++step) log += "step " + std::to_string(step) + " loss=0.5\n";
    const size_t before = log.size();
    log += "step 30 loss=nan\nstep 31 loss=nan\n";
    const auto [hit, fed] = feed_bytewise(rules, log);
    ASSERT_TRUE(hit);
    EXPECT_EQ(hit->line, "step 30 loss=nan");
    EXPECT_EQ(hit->rule, "'loss[=:] *nan'");
    EXPECT_EQ(fed, before + std::string("step 30 loss=nan\n").size()) << "at its newline";
    EXPECT_FALSE(rules.feed("RuntimeError: CUDA out of memory\n")) << "a rule fires once";
}

TEST(StopRules, ALineWithoutItsEndDoesNotFireYetAndCarriageReturnsEndLines) {
    StopRules rules({regex("^oom$")});
    EXPECT_FALSE(rules.feed("oo"));
    EXPECT_FALSE(rules.feed("m"));  // not yet a line: it may go on ("oomph")
    const auto hit = rules.feed("\r 10%|##   |\r");
    ASSERT_TRUE(hit);
    EXPECT_EQ(hit->line, "oom");
}

TEST(StopRules, APlateauFiresAfterPatienceValuesWithoutANewBest) {
    StopRules rules({plateau("val_loss[=:] *([0-9.eE+-]+)", false, 3)});
    EXPECT_FALSE(rules.feed("epoch 1 val_loss=0.9\nepoch 2 val_loss: 0.7\n"));
    EXPECT_FALSE(rules.feed("train_loss=0.1\n"));  // another metric: not counted
    EXPECT_FALSE(rules.feed("epoch 3 val_loss=0.8\nepoch 4 val_loss=0.7\n"));  // 2 without
    EXPECT_FALSE(rules.feed("epoch 5 val_loss=0.65\n"));  // a new best: counting starts again
    EXPECT_FALSE(rules.feed("epoch 6 val_loss=0.66\nepoch 7 val_loss=0.7\n"));
    const auto hit = rules.feed("epoch 8 val_loss=1e-0\n");
    ASSERT_TRUE(hit);
    EXPECT_EQ(hit->line, "epoch 8 val_loss=1e-0");
    EXPECT_EQ(hit->rule, "plateau of 'val_loss[=:] *([0-9.eE+-]+)' (min, patience 3)");
}

TEST(StopRules, APlateauInModeMaxWantsHigherValues) {
    StopRules rules({plateau("acc=([0-9.]+)", true, 2)});
    EXPECT_FALSE(rules.feed("acc=0.5\nacc=0.6\nacc=0.4\n"));
    EXPECT_FALSE(rules.feed("acc=0.7\nacc=0.7\n"));  // equal is no new best
    EXPECT_TRUE(rules.feed("acc=0.69\n"));
}

// After a --resume the local copy primes the rules: no line of it fires again, a plateau
// goes on counting from it, and the first byte fed after starts a new line.
TEST(StopRules, PrimingFromTheLocalCopyCountsButNeverFires) {
    StopRules rules({regex("nan"), plateau("v=([0-9]+)", false, 3)});
    rules.prime("v=1\nv=2\nloss nan\nv=3\npartial li");
    EXPECT_FALSE(rules.feed("ne\n")) << "the part after the copy is a line of its own";
    const auto hit = rules.feed("v=4\n");
    ASSERT_TRUE(hit) << "3 values without a new best, 2 of them before the resume";
    EXPECT_EQ(hit->line, "v=4");
}

TEST(StopRules, NoRulesNeverFire) {
    StopRules rules({});
    EXPECT_TRUE(rules.empty());
    EXPECT_FALSE(rules.learns());
    EXPECT_FALSE(StopRules({regex("nan")}).learns());
    EXPECT_TRUE(StopRules({regex("nan"), plateau("v=([0-9]+)", false, 2)}).learns());
    EXPECT_FALSE(rules.feed("loss=nan\n"));
}

}  // namespace
