// `mlt ssh ... train` as the real CLI11 app parses it, with a stand-in for run_train.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "mlt/cli/commands.h"
#include "mlt/util/error.h"

namespace {

using Words = std::vector<std::string>;

// What the train command would have been run with.
struct Parsed {
    bool ran = false;
    mlt::SshCommandLine cli;
    mlt::TrainOptions train;
    int verbosity = 0;
};

// Parses `mlt <args...>` as main does and, when the command is train, runs the action with a
// stand-in trainer (other commands would connect).
Parsed parse(Words args) {
    Parsed p;
    CLI::App app("test", "mlt");
    mlt::cli::Action action;
    int verbosity = 0;
    mlt::cli::add_ssh_command(app, action, verbosity,
                              [&p](const mlt::SshCommandLine& c, const mlt::TrainOptions& o) {
                                  p.ran = true;
                                  p.cli = c;
                                  p.train = o;
                                  return 0;
                              });
    std::reverse(args.begin(), args.end());
    app.parse(args);
    if (action && app.get_subcommand("ssh")->got_subcommand("train")) action();
    p.verbosity = verbosity;
    return p;
}

TEST(CliSshTrain, ArgsReachTheTrainingInTheirOrder) {
    Parsed p = parse({"ssh", "-h", "H", "train", "m", "--epochs", "3", "--weights", "best"});
    ASSERT_TRUE(p.ran);
    EXPECT_EQ(p.train.model, "m");
    EXPECT_EQ(p.train.args, (Words{"--epochs", "3", "--weights", "best"}));
    EXPECT_EQ(p.cli.hosts, (Words{"H"}));

    // Plain words between options: CLI11 alone would put the options first.
    p = parse({"ssh", "train", "m", "data.csv", "--lr", "0.1", "more", "--x=1", "-k", "v"});
    EXPECT_EQ(p.train.args, (Words{"data.csv", "--lr", "0.1", "more", "--x=1", "-k", "v"}));
}

TEST(CliSshTrain, OwnFlagsAfterModelAreTakenOutAnywhere) {
    Parsed p = parse({"ssh", "train", "m", "--epochs", "3", "--clean", "-v", "--weights", "best",
                      "--force", "--no-wait", "--resume"});
    EXPECT_EQ(p.train.args, (Words{"--epochs", "3", "--weights", "best"}));
    EXPECT_TRUE(p.train.clean);
    EXPECT_TRUE(p.train.force);
    EXPECT_TRUE(p.train.no_wait);
    EXPECT_TRUE(p.train.resume);
    EXPECT_TRUE(p.train.verbose);
    EXPECT_EQ(p.verbosity, 1);

    p = parse({"ssh", "train", "m", "--workspace", "../proj", "x", "--reconnect-timeout=5"});
    EXPECT_EQ(p.train.workspace, "../proj");
    EXPECT_EQ(p.train.reconnect_timeout, 5);
    EXPECT_EQ(p.train.args, (Words{"x"}));
}

TEST(CliSshTrain, OwnFlagsBeforeModel) {
    Parsed p = parse({"ssh", "train", "--clean", "-h", "H", "m", "--epochs", "1"});
    EXPECT_TRUE(p.train.clean);
    EXPECT_EQ(p.cli.hosts, (Words{"H"}));
    EXPECT_EQ(p.train.model, "m");
    EXPECT_EQ(p.train.args, (Words{"--epochs", "1"}));
}

TEST(CliSshTrain, DoubleDashPassesEverythingAfterIt) {
    Parsed p =
        parse({"ssh", "train", "m", "--epochs", "3", "-v", "--", "--clean", "-v", "-h", "x"});
    EXPECT_EQ(p.train.args, (Words{"--epochs", "3", "--clean", "-v", "-h", "x"}));
    EXPECT_FALSE(p.train.clean);
    EXPECT_EQ(p.verbosity, 1) << "the -v before -- is mlt's, the one after is not";
    EXPECT_TRUE(p.cli.hosts.empty());
}

TEST(CliSshTrain, TrainFlagsBeforeTheCommandAsMltk) {
    Parsed p = parse(
        {"ssh", "-h", "H", "--clean", "--force", "--resume", "--no-wait", "-v", "train", "m"});
    ASSERT_TRUE(p.ran);
    EXPECT_TRUE(p.train.clean);
    EXPECT_TRUE(p.train.force);
    EXPECT_TRUE(p.train.resume);
    EXPECT_TRUE(p.train.no_wait);
    EXPECT_TRUE(p.train.verbose);
    EXPECT_TRUE(p.train.args.empty());
    p = parse({"ssh", "--verbose", "train", "m", "-v"});
    EXPECT_EQ(p.verbosity, 2) << "each -v counts, wherever it stands";
}

TEST(CliSshTrain, FlagPairsLastOneWins) {
    EXPECT_FALSE(parse({"ssh", "--clean", "train", "m", "--no-clean"}).train.clean);
    EXPECT_TRUE(parse({"ssh", "--no-clean", "train", "m", "--clean"}).train.clean);
    EXPECT_FALSE(parse({"ssh", "--no-clean", "train", "m"}).train.clean);
    EXPECT_FALSE(parse({"ssh", "train", "m", "--force", "--no-force"}).train.force);
    EXPECT_TRUE(parse({"ssh", "train", "m", "--no-force", "--force"}).train.force);
    EXPECT_FALSE(parse({"ssh", "train", "m", "--resume", "--no-resume"}).train.resume);
    EXPECT_FALSE(parse({"ssh", "--no-wait", "train", "m", "--wait"}).train.no_wait);
    EXPECT_TRUE(parse({"ssh", "--wait", "--no-wait", "train", "m"}).train.no_wait);
    EXPECT_FALSE(parse({"ssh", "train", "--no-wait", "m", "--wait"}).train.no_wait);
}

TEST(CliSshTrain, ConnectionOptionsAfterModelAreNotPassedOn) {
    Parsed p = parse({"ssh", "train", "m", "-h", "H", "--epochs", "1", "-p", "22", "-i", "key",
                      "--password", "pw"});
    EXPECT_EQ(p.cli.hosts, (Words{"H"}));
    EXPECT_EQ(p.cli.port, 22);
    EXPECT_EQ(p.cli.identity_file, "key");
    EXPECT_EQ(p.cli.password, std::optional<std::string>("pw"));
    EXPECT_EQ(p.train.args, (Words{"--epochs", "1"}));

    // MLTK's spellings and the attached forms.
    p = parse({"ssh", "train", "m", "--host=H", "--port=2222", "--identity_file", "k2"});
    EXPECT_EQ(p.cli.hosts, (Words{"H"}));
    EXPECT_EQ(p.cli.port, 2222);
    EXPECT_EQ(p.cli.identity_file, "k2");
    EXPECT_EQ(parse({"ssh", "train", "m", "-p2200"}).cli.port, 2200);
}

TEST(CliSshTrain, ConnectionOptionsAfterModelComeLast) {
    Parsed p = parse({"ssh", "-p", "1", "-i", "a", "train", "m", "-p", "2", "-i", "b"});
    EXPECT_EQ(p.cli.port, 2);
    EXPECT_EQ(p.cli.identity_file, "b");
    // -h adds a node wherever it stands (two nodes: refused later by run_train).
    EXPECT_EQ(parse({"ssh", "-h", "A", "train", "m", "-h", "B"}).cli.hosts, (Words{"A", "B"}));
}

TEST(CliSshTrain, TestFlagStaysAmongTheArgs) {
    Parsed p = parse({"ssh", "train", "m", "--test", "--epochs", "2"});
    EXPECT_EQ(p.train.model, "m");
    EXPECT_EQ(p.train.args, (Words{"--test", "--epochs", "2"}));
}

TEST(CliSshTrain, ModelMayBeNamedLikeACommand) {
    Parsed p = parse({"ssh", "train", "status", "logs"});
    ASSERT_TRUE(p.ran);
    EXPECT_EQ(p.train.model, "status");
    EXPECT_EQ(p.train.args, (Words{"logs"}));
}

TEST(CliSshTrain, BadValuesAreParseErrors) {
    EXPECT_THROW(parse({"ssh", "train", "m", "-p", "0"}), CLI::ParseError);
    EXPECT_THROW(parse({"ssh", "train", "m", "--reconnect-timeout", "x"}), CLI::ParseError);
    EXPECT_THROW(parse({"ssh", "train", "m", "--workspace"}), CLI::ParseError);
    // Numbers are decimal only, before and after MODEL.
    for (const char* bad : {"0x8fb", " 22", "+22", "22abc", "1e3"}) {
        EXPECT_THROW(parse({"ssh", "-p", bad, "train", "m"}), CLI::ParseError) << bad;
        EXPECT_THROW(parse({"ssh", "train", "m", "-p", bad}), CLI::ParseError) << bad;
    }
    EXPECT_THROW(parse({"ssh", "train", "m", "--reconnect-timeout", "0x10"}), CLI::ParseError);
}

TEST(CliSshTrain, MaxRestartsIsACountBeforeAndAfterModel) {
    EXPECT_EQ(parse({"ssh", "train", "m", "--max-restarts", "3"}).train.max_restarts, 3);
    EXPECT_EQ(parse({"ssh", "train", "--max-restarts=0", "m"}).train.max_restarts, 0);
    EXPECT_FALSE(parse({"ssh", "train", "m"}).train.max_restarts.has_value());
    for (const char* bad : {"-1", "x", "1001", "0x2"})
        EXPECT_THROW(parse({"ssh", "train", "m", "--max-restarts", bad}), CLI::ParseError) << bad;
}

TEST(CliSshTrain, RestoreAndNoFailoverAreMltsOwnFlagsBeforeAndAfterModel) {
    EXPECT_TRUE(parse({"ssh", "train", "m", "--restore"}).train.restore);
    EXPECT_TRUE(parse({"ssh", "train", "--no-failover", "m"}).train.no_failover);
    const Parsed plain = parse({"ssh", "train", "m", "--epochs", "1"});
    EXPECT_FALSE(plain.train.restore);
    EXPECT_FALSE(plain.train.no_failover);
    const Parsed both = parse({"ssh", "train", "m", "--restore", "--no-failover"});
    EXPECT_TRUE(both.train.restore && both.train.no_failover);
    EXPECT_TRUE(both.train.args.empty());  // never handed to the training
}

TEST(CliSshTrain, RawConsoleIsMltsOwnFlagBeforeAndAfterModel) {
    EXPECT_TRUE(parse({"ssh", "train", "--raw-console", "m"}).train.raw_console);
    const Parsed after = parse({"ssh", "train", "m", "--epochs", "1", "--raw-console", "x"});
    EXPECT_TRUE(after.train.raw_console);
    EXPECT_EQ(after.train.args, (Words{"--epochs", "1", "x"}));  // never handed to the training
    EXPECT_FALSE(parse({"ssh", "train", "m", "--epochs", "1"}).train.raw_console);
    // After -- it is the training's.
    const Parsed passed = parse({"ssh", "train", "m", "--", "--raw-console"});
    EXPECT_FALSE(passed.train.raw_console);
    EXPECT_EQ(passed.train.args, (Words{"--raw-console"}));
}

TEST(CliSshTrain, PriceAndLimitsBeforeAndAfterModel) {
    const auto p = parse({"ssh", "train", "--price", "1.25", "m", "--max-hours=0.5", "--max-cost",
                          "20", "--epochs", "1"});
    EXPECT_EQ(p.train.price, 1.25);
    EXPECT_EQ(p.train.max_hours, 0.5);
    EXPECT_EQ(p.train.max_cost, 20);
    EXPECT_EQ(p.train.args, (Words{"--epochs", "1"}));
    EXPECT_EQ(parse({"ssh", "train", "m", "--price", "0"}).train.price, 0.0);
    const auto none = parse({"ssh", "train", "m"}).train;
    EXPECT_FALSE(none.price.has_value());
    EXPECT_EQ(none.max_hours, 0);
    EXPECT_EQ(none.max_cost, 0);
    for (const char* bad : {"abc", "-1", "inf", "nan", "0x10", "1,5", ""}) {
        EXPECT_THROW(parse({"ssh", "train", "m", "--price", bad}), CLI::ParseError) << bad;
        EXPECT_THROW(parse({"ssh", "train", "m", "--max-hours", bad}), CLI::ParseError) << bad;
        EXPECT_THROW(parse({"ssh", "train", "m", "--max-cost", bad}), CLI::ParseError) << bad;
    }
    // A limit of 0 could only mean "stop at once".
    EXPECT_THROW(parse({"ssh", "train", "m", "--max-hours", "0"}), CLI::ParseError);
    EXPECT_THROW(parse({"ssh", "train", "m", "--max-cost", "0"}), CLI::ParseError);
}

TEST(CliSshTrain, SyncEveryIsSecondsBeforeAndAfterModel) {
    EXPECT_EQ(parse({"ssh", "train", "m", "--sync-every", "60"}).train.sync_every, 60);
    EXPECT_EQ(parse({"ssh", "train", "--sync-every=0", "m"}).train.sync_every, 0);
    EXPECT_FALSE(parse({"ssh", "train", "m"}).train.sync_every.has_value());
    EXPECT_TRUE(parse({"ssh", "train", "m", "--sync-every", "5"}).train.args.empty());
    for (const char* bad : {"-1", "abc", "1.5", "604801", "0x10", ""})
        EXPECT_THROW(parse({"ssh", "train", "m", "--sync-every", bad}), CLI::ParseError) << bad;
}

TEST(CliSshTrain, LeadingZerosAreDecimalNotOctal) {
    EXPECT_EQ(parse({"ssh", "-p", "010", "train", "m"}).cli.port, 10);
    EXPECT_EQ(parse({"ssh", "train", "m", "-p", "0022"}).cli.port, 22);
    EXPECT_EQ(parse({"ssh", "train", "m", "--reconnect-timeout", "010"}).train.reconnect_timeout,
              10);
}

TEST(CliSshTrain, HelpAfterModelIsHelp) {
    EXPECT_THROW(parse({"ssh", "train", "m", "--epochs", "1", "--help"}), CLI::CallForHelp);
    Parsed p = parse({"ssh", "train", "m", "--", "--help"});
    EXPECT_EQ(p.train.args, (Words{"--help"}));
}

TEST(CliSshTrain, MissingModelOrUnknownOptionBeforeItIsAUsageError) {
    EXPECT_THROW(parse({"ssh", "train"}), mlt::Error);
    EXPECT_THROW(parse({"ssh", "train", "--clean"}), mlt::Error);
    try {
        parse({"ssh", "train", "--epochs", "3", "m"});
        FAIL() << "no error";
    } catch (const mlt::Error& e) {
        EXPECT_EQ(e.code(), mlt::exit_code::kUsage);
        EXPECT_NE(std::string(e.what()).find("--epochs"), std::string::npos) << e.what();
    }
}

TEST(CliSshTrain, TrainFlagsBeforeAnotherCommandAreRefused) {
    EXPECT_THROW(parse({"ssh", "-h", "H", "--clean", "status"}), CLI::ValidationError);
    EXPECT_THROW(parse({"ssh", "--force", "stop", "m"}), CLI::ValidationError);
    EXPECT_THROW(parse({"ssh", "--no-wait", "logs", "m"}), CLI::ValidationError);
    EXPECT_THROW(parse({"ssh", "--resume", "download", "m"}), CLI::ValidationError);
}

// A typo of one of mlt's options stops the run instead of reaching the training.
TEST(CliSshTrain, MisspeltOwnOptionIsRefusedWithASuggestion) {
    for (const auto& [typed, meant] : std::vector<std::pair<std::string, std::string>>{
             {"--sync-evry", "--sync-every"},
             {"--resum", "--resume"},
             {"--no-wiat", "--no-wait"},
             {"--reconect-timeout", "--reconnect-timeout"},
             {"--pasword", "--password"}}) {
        try {
            parse({"ssh", "train", "m", "--epochs", "1", typed});
            ADD_FAILURE() << typed << " was passed on";
        } catch (const mlt::Error& e) {
            EXPECT_EQ(e.code(), mlt::exit_code::kUsage);
            EXPECT_NE(std::string(e.what()).find("did you mean " + meant + "?"), std::string::npos)
                << e.what();
        }
    }
}

}  // namespace
