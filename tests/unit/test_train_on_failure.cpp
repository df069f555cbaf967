// watch.on_failure's judgement: the attempt's last lines (after its marker, carriage returns
// ending lines, at most N), and the first rule found in them.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "mlt/train/recovery/on_failure.h"

namespace mlt {
namespace {

class AttemptLastLines : public ::testing::Test {
  protected:
    void SetUp() override {
        std::string tmpl =
            (std::filesystem::temp_directory_path() / "mlt-on-failure-XXXXXX").string();
        ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
        dir_ = tmpl;
    }
    void TearDown() override {
        std::error_code ec;
        std::filesystem::remove_all(dir_, ec);
    }
    // A console log with `text`.
    std::string console_with(const std::string& text) const {
        const std::string path = dir_ + "/console.log";
        std::ofstream(path) << text;
        return path;
    }
    std::string dir_;
};

TEST_F(AttemptLastLines, AreTheNewestAttemptsOnlyWithCarriageReturnsEndingLines) {
    const std::string path = console_with(
        "attempt 1 line\nCUDA out of memory\n"
        "==== mlt: attempt 2 of run r (the job was lost) ====\n"
        "epoch 1 10%\repoch 1 50%\repoch 1 100%\n\n   \nTraceback\nXid 79\n");
    EXPECT_EQ(attempt_last_lines(path),
              (std::vector<std::string>{"epoch 1 10%", "epoch 1 50%", "epoch 1 100%", "Traceback",
                                        "Xid 79"}));
    EXPECT_EQ(attempt_last_lines(path, 2), (std::vector<std::string>{"Traceback", "Xid 79"}));
    EXPECT_TRUE(attempt_last_lines(path + ".missing").empty());
}

TEST_F(AttemptLastLines, ReadOnlyTheTailOfAHugeLogAndDropItsCutFirstLine) {
    std::string text(200000, 'x');
    text += "\nthe end\n" + std::string(50000, 'y') + "Xid 79\n";
    EXPECT_EQ(attempt_last_lines(console_with(text)),
              (std::vector<std::string>{"the end", std::string(1024, 'y') + " ... " +
                                                       std::string(1018, 'y') + "Xid 79"}));
}

TEST(JudgeFailure, TheFirstRuleFoundDecidesWithItsLastLine) {
    const std::vector<FailureRule> rules = {{"never", FailureAction::restart, false},
                                            {"Xid [0-9]+", FailureAction::exclude_host, false},
                                            {"out of memory", FailureAction::no_restart, true}};
    const std::vector<std::string> lines = {"CUDA out of memory", "NVRM: Xid 79", "NVRM: Xid 48"};
    const auto v = judge_failure(rules, lines);
    ASSERT_TRUE(v);
    EXPECT_EQ(v->then, FailureAction::exclude_host);
    EXPECT_EQ(v->rule, 2);
    EXPECT_EQ(v->line, "NVRM: Xid 48");
    EXPECT_EQ(v->describe(),
              "watch.on_failure rule #2 'Xid [0-9]+' (exclude_host) matched the line 'NVRM: Xid "
              "48'");
    EXPECT_FALSE(judge_failure(rules, {"all fine"}));
    // A lost attempt: the default no_restart rules do not apply, the others do.
    EXPECT_FALSE(judge_failure({rules[2]}, {"CUDA out of memory"}, true));
    EXPECT_EQ(judge_failure(rules, lines, true)->then, FailureAction::exclude_host);
    EXPECT_FALSE(judge_failure({}, lines));
    const auto builtin = judge_failure({rules[2]}, {"CUDA out of memory\x1b[2J"});
    ASSERT_TRUE(builtin);
    // The host's line is printable: no escape reaches the terminal.
    EXPECT_EQ(builtin->describe(),
              "the default watch.on_failure rule 'out of memory' (no_restart) matched the line "
              "'CUDA out of memory\\x1b[2J'");
}

TEST(JudgeFailure, TheDefaultsKnowTheCommonFailures) {
    SshSettings s;
    const auto rules = failure_rules_in_effect(s);
    const auto then = [&](const std::string& line) {
        const auto v = judge_failure(rules, {line});
        return v ? failure_action_name(v->then) : "none";
    };
    EXPECT_STREQ(then("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"),
                 "no_restart");
    EXPECT_STREQ(then("ModuleNotFoundError: No module named 'timm'"), "no_restart");
    EXPECT_STREQ(then("NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus."),
                 "exclude_host");
    EXPECT_STREQ(then("RuntimeError: CUDA error: uncorrectable ECC error encountered"),
                 "exclude_host");
    EXPECT_STREQ(then("loss=nan"), "none");
    s.on_failure_defaults = false;
    EXPECT_TRUE(failure_rules_in_effect(s).empty());
}

}  // namespace
}  // namespace mlt
