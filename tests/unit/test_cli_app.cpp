// The command line as main parses it: every list of commands names all of them (messages,
// help, docs), and CLI11's errors reach the user in mlt's words, exit 2.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <string>
#include <vector>

#include "mlt/cli/app.h"
#include "mlt/ssh/keygen.h"
#include "mlt/util/error.h"
#include "mlt/util/paths.h"

namespace {

using Words = std::vector<std::string>;

// A parse as main does it: the error line's what and hint, or "help" / "ok".
struct Outcome {
    std::string what;
    std::string hint;
    int code = 0;
    std::string line() const { return what + " (" + hint + ")"; }
};

Outcome parse(const Words& typed) {
    CLI::App app("test", "mlt");
    mlt::cli::Action action;
    int verbosity = 0;
    mlt::cli::add_commands(app, action, verbosity);
    const auto as_outcome = [](const mlt::Error& e) {
        return Outcome{e.what(), e.hint(), e.code()};
    };
    try {
        Words args(typed.rbegin(), typed.rend());
        app.parse(args);
    } catch (const CLI::CallForHelp&) {
        if (const auto unknown = mlt::cli::unknown_command(app, typed)) return as_outcome(*unknown);
        return Outcome{"help", "", 0};
    } catch (const CLI::ParseError& e) {
        if (const auto unknown = mlt::cli::unknown_command(app, typed)) return as_outcome(*unknown);
        return as_outcome(mlt::cli::in_mlt_words(app, e, typed));
    }
    if (!action) return as_outcome(mlt::cli::missing_command(app));
    return Outcome{"ok", "", 0};
}

// Each level that has commands, with the words that reach it.
struct Level {
    Words words;  // mlt's words up to the level
    std::vector<std::string> names;
    std::string help;
};

std::vector<Level> levels() {
    CLI::App app("test", "mlt");
    mlt::cli::Action action;
    int verbosity = 0;
    mlt::cli::add_commands(app, action, verbosity);
    const CLI::App* ssh = app.get_subcommand("ssh");
    return {{{}, mlt::cli::command_names(app), app.help()},
            {{"ssh", "-h", "gpu"}, mlt::cli::command_names(*ssh), ssh->help()}};
}

std::string doc(const std::string& name) {
    return mlt::read_file(std::string(MLT_SOURCE_DIR) + "/docs/" + name);
}

// The text of `doc` from `anchor` to the next blank line.
std::string paragraph(const std::string& text, const std::string& anchor) {
    const size_t begin = text.find(anchor);
    if (begin == std::string::npos) return {};
    return text.substr(begin, text.find("\n\n", begin) - begin);
}

TEST(CliCommands, TheDefinitionsHaveTheKnownCommands) {
    const auto all = levels();
    ASSERT_EQ(all.size(), 2u);
    EXPECT_EQ(all[0].names, (Words{"ssh", "ssh-keygen", "jobs", "completion"}));
    for (const char* name :
         {"train", "status", "logs", "stop", "download", "tensorboard", "forward"})
        EXPECT_NE(std::find(all[1].names.begin(), all[1].names.end(), name), all[1].names.end())
            << name;
}

TEST(CliCommands, EveryMessageAndHelpNamesEveryCommand) {
    for (const Level& level : levels()) {
        Words missing = level.words;
        const Outcome none = parse(missing);
        Words unknown = level.words;
        unknown.push_back("zzzzzzzz");
        const Outcome bad = parse(unknown);
        EXPECT_EQ(none.code, 2) << none.line();
        EXPECT_EQ(bad.code, 2) << bad.line();
        for (const auto& name : level.names) {
            EXPECT_NE(none.line().find(name), std::string::npos) << name << ": " << none.line();
            EXPECT_NE(bad.line().find(name), std::string::npos) << name << ": " << bad.line();
            EXPECT_NE(level.help.find("\n  " + name + " "), std::string::npos)
                << name << " is not in the help:\n"
                << level.help;
        }
    }
}

TEST(CliCommands, TheDocsListsNameEveryCommand) {
    const auto all = levels();
    const std::string usage = doc("usage.md");
    const std::string synopsis = usage.substr(0, usage.find("\n```\n", usage.find("```") + 3));
    for (const auto& name : all[0].names)
        EXPECT_NE(synopsis.find("\nmlt " + name + " "), std::string::npos)
            << "docs/usage.md's synopsis lacks mlt " << name;
    const std::string commands = paragraph(usage, "COMMAND: ");
    const std::string mltk = doc("coming-from-mltk.md");
    const std::string other = paragraph(mltk, "**Other commands than train.**");
    const std::string more = paragraph(mltk, "- **More commands:**");
    ASSERT_FALSE(commands.empty() || other.empty() || more.empty());
    for (const auto& name : all[1].names) {
        EXPECT_NE(commands.find(" " + name), std::string::npos)
            << "docs/usage.md's COMMAND line lacks " << name;
        EXPECT_NE(other.find("`" + name + "`"), std::string::npos)
            << "coming-from-mltk.md, 'Other commands than train', lacks " << name;
        if (name != "train") {
            EXPECT_NE(more.find("`" + name), std::string::npos)
                << "coming-from-mltk.md, 'More commands', lacks " << name;
        }
    }
}

TEST(CliCommands, AMisspeltCommandGetsDidYouMeanAtEveryLevel) {
    const Outcome shh = parse({"shh", "-h", "H", "status"});  // -h is mlt's help there
    EXPECT_EQ(shh.code, 2);
    EXPECT_NE(shh.what.find("unknown command 'shh'; did you mean 'ssh'?"), std::string::npos)
        << shh.line();
    const Outcome trian = parse({"ssh", "-h", "H", "trian", "m"});
    EXPECT_EQ(trian.code, 2);
    EXPECT_NE(trian.what.find("unknown command 'trian'; did you mean 'train'?"), std::string::npos)
        << trian.line();
    const Outcome help_after = parse({"ssh", "-h", "H", "stauts", "--help"});
    EXPECT_NE(help_after.what.find("did you mean 'status'?"), std::string::npos)
        << help_after.line();
    const Outcome evaluate = parse({"ssh", "-h", "H", "evaluate", "m"});
    EXPECT_NE(evaluate.what.find("unsupported command 'evaluate'"), std::string::npos)
        << evaluate.line();
    EXPECT_EQ(parse({"ssh", "--help"}).what, "help");
}

// What CLI11 itself would print, none of which may reach the user.
void expect_mlt_words(const Words& words, const std::string& expected) {
    const Outcome o = parse(words);
    EXPECT_EQ(o.code, 2) << o.line();
    EXPECT_NE(o.line().find(expected), std::string::npos) << o.line();
    for (const char* raw : {"FAILED", "not expected", " required ", "->", "INT", "TEXT"})
        EXPECT_EQ(o.line().find(raw), std::string::npos) << raw << " in: " << o.line();
    EXPECT_NE(o.hint.find("--help"), std::string::npos) << o.line();
}

TEST(CliParseErrors, AreSaidInMltsWords) {
    expect_mlt_words({"ssh-keygen", "k", "-t", "dsa"}, "'dsa' is not a key type");
    expect_mlt_words({"ssh-keygen", "k", "-t", "rsa", "-l", "99999"}, "2048 to 16384");
    expect_mlt_words({"ssh", "-p"}, "option --port of mlt ssh needs a value");
    expect_mlt_words({"ssh", "-h", "H", "logs", "m", "--rank"}, "--rank of mlt ssh logs needs");
    expect_mlt_words({"ssh", "-h", "H", "status", "--bogus"}, "unknown option --bogus");
    expect_mlt_words({"jobs", "--jsno"}, "did you mean --json?");
    expect_mlt_words({"ssh", "-h", "H", "status", "a", "b"}, "unexpected argument 'b'");
    expect_mlt_words({"ssh-keygen"}, "mlt ssh-keygen needs NAME");
    expect_mlt_words({"ssh", "-h", "H", "forward"}, "mlt ssh forward needs LOCAL:REMOTE");
}

// Said at the deepest command parsed, and suggested from the options taken there only.
TEST(CliParseErrors, AnUnknownOptionIsNamedAtTheCommandWhereItStood) {
    expect_mlt_words({"ssh", "-h", "H", "status", "--hots", "G"},
                     "unknown option --hots for mlt ssh status; did you mean --host?");
    expect_mlt_words({"ssh", "-h", "H", "logs", "m", "--folow"},
                     "unknown option --folow for mlt ssh logs; did you mean --follow?");
    expect_mlt_words({"ssh", "--folow", "logs", "m"}, "unknown option --folow for mlt ssh");
    // --clean is train's: after status it is no typo of itself.
    const Outcome clean = parse({"ssh", "-h", "H", "status", "m", "--clean"});
    EXPECT_NE(clean.what.find("unknown option --clean for mlt ssh status"), std::string::npos)
        << clean.line();
    EXPECT_EQ(clean.what.find("did you mean"), std::string::npos) << clean.line();
}

TEST(CliParseErrors, KeygensHelpShowsTheRangeTheKeygenEnforces) {
    CLI::App app("test", "mlt");
    mlt::cli::Action action;
    int verbosity = 0;
    mlt::cli::add_commands(app, action, verbosity);
    const std::string range =
        std::to_string(mlt::kMinRsaBits) + " to " + std::to_string(mlt::kMaxRsaBits);
    EXPECT_NE(app.get_subcommand("ssh-keygen")->help().find(range), std::string::npos);
    EXPECT_EQ(parse({"ssh-keygen", "k", "-t", "rsa", "-l", std::to_string(mlt::kMinRsaBits)}).what,
              "ok");
    EXPECT_EQ(parse({"ssh-keygen", "k", "-t", "rsa", "-l", std::to_string(mlt::kMaxRsaBits)}).what,
              "ok");
    EXPECT_EQ(
        parse({"ssh-keygen", "k", "-t", "rsa", "-l", std::to_string(mlt::kMaxRsaBits + 1)}).code,
        2);
}

TEST(CliHelp, EndsWithTheExitCodeTable) {
    for (const Level& level : levels()) {
        const size_t title = level.help.rfind("Exit status:\n");
        ASSERT_NE(title, std::string::npos) << level.help;
        for (const mlt::ExitCodeRow& row : mlt::kExitCodeTable) {
            std::string code = row.codes;
            code.resize(std::max<size_t>(code.size(), 4), ' ');
            EXPECT_NE(level.help.find("\n  " + code + " " + row.meaning + "\n", title),
                      std::string::npos)
                << row.codes;
        }
    }
}

}  // namespace
