#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "mlt/commands/train_arguments.h"
#include "mlt/util/error.h"

namespace {

using Words = std::vector<std::string>;

// A few of mlt's options after `train`: flags and options with a value.
const std::vector<mlt::OwnOption> kOwn = {
    {{"--clean", "--no-clean"}, false},
    {{"--verbose", "-v"}, false},
    {{"--host", "-h"}, true},
    {{"--port", "-p"}, true},
    {{"--workspace"}, true},
    {{"--resume", "--no-resume"}, false},
    {{"--no-wait", "--wait"}, false},
    {{"--sync-every"}, true},
};

mlt::TrainArguments split(const Words& words) {
    return mlt::split_train_arguments(words, kOwn);
}

TEST(TrainArguments, OtherWordsKeepTheirOrder) {
    auto a = split({"m", "--epochs", "3", "--weights", "best"});
    EXPECT_EQ(a.model, "m");
    EXPECT_EQ(a.passed, (Words{"--epochs", "3", "--weights", "best"}));
    EXPECT_TRUE(a.own.empty());

    // Plain words and options interleaved, as click passes them on.
    a = split({"m", "data.csv", "--lr", "0.1", "more", "-x"});
    EXPECT_EQ(a.passed, (Words{"data.csv", "--lr", "0.1", "more", "-x"}));
}

TEST(TrainArguments, OwnOptionsAnywhereAreTakenOut) {
    auto a = split({"m", "--epochs", "3", "--clean", "-h", "gpu", "--weights", "best", "-v",
                    "--no-clean", "-p2222", "--workspace=../proj", "--port", "22"});
    EXPECT_EQ(a.model, "m");
    EXPECT_EQ(a.passed, (Words{"--epochs", "3", "--weights", "best"}));
    EXPECT_EQ(a.own, (Words{"--clean", "-h", "gpu", "-v", "--no-clean", "-p2222",
                            "--workspace=../proj", "--port", "22"}));
}

TEST(TrainArguments, ValueOfAnOwnOptionIsTakenWhateverItLooksLike) {
    auto a = split({"m", "--workspace", "--odd-dir", "-h", "-weird"});
    EXPECT_EQ(a.own, (Words{"--workspace", "--odd-dir", "-h", "-weird"}));
    EXPECT_TRUE(a.passed.empty());
    // A missing value is left for the option parser to report.
    a = split({"m", "--epochs", "1", "-h"});
    EXPECT_EQ(a.own, (Words{"-h"}));
    EXPECT_EQ(a.passed, (Words{"--epochs", "1"}));
}

TEST(TrainArguments, OwnOptionsBeforeModel) {
    auto a = split({"--clean", "-h", "gpu", "m", "--epochs", "1"});
    EXPECT_EQ(a.model, "m");
    EXPECT_EQ(a.own, (Words{"--clean", "-h", "gpu"}));
    EXPECT_EQ(a.passed, (Words{"--epochs", "1"}));
}

TEST(TrainArguments, AfterDoubleDashEverythingIsPassedOn) {
    auto a = split({"m", "--epochs", "3", "--", "--clean", "-v", "--", "x"});
    EXPECT_EQ(a.passed, (Words{"--epochs", "3", "--clean", "-v", "--", "x"}));
    EXPECT_TRUE(a.own.empty());
    // `--` before MODEL: the next word is MODEL, even when it looks like an option.
    a = split({"--clean", "--", "-odd", "--clean"});
    EXPECT_EQ(a.model, "-odd");
    EXPECT_EQ(a.own, (Words{"--clean"}));
    EXPECT_EQ(a.passed, (Words{"--clean"}));
}

TEST(TrainArguments, NegativeNumbersAndDashAreArguments) {
    auto a = split({"m", "--lr", "-0.5", "-", "-1"});
    EXPECT_EQ(a.passed, (Words{"--lr", "-0.5", "-", "-1"}));
}

TEST(TrainArguments, UnknownOptionBeforeModelIsAnError) {
    try {
        split({"--epochs", "3", "m"});
        FAIL() << "no error";
    } catch (const mlt::Error& e) {
        EXPECT_EQ(e.kind(), mlt::ErrorKind::usage);
        EXPECT_NE(std::string(e.what()).find("--epochs"), std::string::npos) << e.what();
    }
}

// The usage error `words` give, or "" when they split fine.
std::string error_of(const Words& words) {
    try {
        split(words);
    } catch (const mlt::Error& e) {
        EXPECT_EQ(e.kind(), mlt::ErrorKind::usage);
        EXPECT_EQ(e.code(), 2);
        return e.what();
    }
    return "";
}

TEST(TrainArguments, AMisspeltOwnOptionIsRefusedWithASuggestion) {
    for (const auto& [typed, meant] :
         std::vector<std::pair<std::string, std::string>>{{"--sync-evry", "--sync-every"},
                                                          {"--sync-evry=60", "--sync-every"},
                                                          {"--resum", "--resume"},
                                                          {"--no-wiat", "--no-wait"},
                                                          {"--workspcae", "--workspace"},
                                                          {"--verbsoe", "--verbose"},
                                                          {"--synk-evry", "--sync-every"}}) {
        const std::string what = error_of({"m", "--epochs", "3", typed});
        EXPECT_NE(what.find(typed.substr(0, typed.find('='))), std::string::npos) << what;
        EXPECT_NE(what.find("did you mean " + meant + "?"), std::string::npos) << what;
        // Before MODEL too.
        EXPECT_NE(error_of({typed, "m"}).find("did you mean " + meant + "?"), std::string::npos)
            << typed;
    }
}

TEST(TrainArguments, OtherUnknownOptionsStillGoToTheTraining) {
    // Far from every own option, too short to judge, single-dash, or after `--`.
    for (const Words& words : std::vector<Words>{{"m", "--epochs", "3", "--weights", "best"},
                                                 {"m", "--cln", "--hots", "--test"},
                                                 {"m", "-sync-evry", "--quantize", "--no-evaluate"},
                                                 {"m", "--", "--sync-evry", "--resum"}}) {
        EXPECT_EQ(error_of(words), "") << words.back();
        Words passed(words.begin() + 1, words.end());
        if (passed.front() == "--") passed.erase(passed.begin());
        EXPECT_EQ(split(words).passed, passed);
    }
}

TEST(TrainArguments, NoModelIsAnError) {
    EXPECT_THROW(split({}), mlt::Error);
    EXPECT_THROW(split({"--clean", "-h", "gpu"}), mlt::Error);
    EXPECT_THROW(split({"--"}), mlt::Error);
}

TEST(TrainArguments, TestFlagIsPassedOnAndRecognised) {
    auto a = split({"m", "--epochs", "2", "--test"});
    EXPECT_EQ(a.passed, (Words{"--epochs", "2", "--test"}));
    EXPECT_TRUE(mlt::wants_test_model(a.passed));
    // MLTK counts it anywhere, after -- too.
    EXPECT_TRUE(mlt::wants_test_model(split({"m", "--", "--test"}).passed));
    EXPECT_FALSE(mlt::wants_test_model({"--testing", "test", "-test"}));
}

TEST(TrainArguments, ResumeContradictsForce) {
    EXPECT_NO_THROW(mlt::check_job_flags(true, false));
    EXPECT_NO_THROW(mlt::check_job_flags(false, true));
    try {
        mlt::check_job_flags(true, true);
        FAIL() << "no error for --resume with --force";
    } catch (const mlt::Error& e) {
        EXPECT_EQ(e.kind(), mlt::ErrorKind::usage);
        EXPECT_EQ(e.code(), 2);
        EXPECT_NE(std::string(e.what()).find("--resume and --force"), std::string::npos)
            << e.what();
    }
}

}  // namespace

namespace {

TEST(CheckBudgetFlags, MaxCostNeedsAPrice) {
    EXPECT_NO_THROW(mlt::check_budget_flags(0, {}));
    EXPECT_NO_THROW(mlt::check_budget_flags(0, {2, 0}));  // hours need no price
    EXPECT_NO_THROW(mlt::check_budget_flags(1.5, {0, 20}));
    try {
        mlt::check_budget_flags(0, {0, 20});
        FAIL() << "no error for --max-cost without a price";
    } catch (const mlt::Error& e) {
        EXPECT_EQ(e.code(), mlt::exit_code::kUsage);
        EXPECT_NE(std::string(e.what()).find("--max-cost needs a price"), std::string::npos)
            << e.what();
    }
}

}  // namespace
