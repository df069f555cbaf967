// What `mlt completion` sees of the command definitions: every command, its options, MODEL.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <string>
#include <vector>

#include "mlt/cli/app.h"
#include "mlt/commands/completion.h"
#include "mlt/util/error.h"

namespace {

using Words = std::vector<std::string>;

std::vector<mlt::CompletionCommand> definitions() {
    CLI::App app("test", "mlt");
    mlt::cli::Action action;
    int verbosity = 0;
    mlt::cli::add_commands(app, action, verbosity);
    return mlt::cli::completion_commands(app);
}

const mlt::CompletionCommand& find(const std::vector<mlt::CompletionCommand>& all,
                                   const std::string& path) {
    const auto it = std::find_if(all.begin(), all.end(),
                                 [&](const mlt::CompletionCommand& c) { return c.path == path; });
    if (it == all.end()) throw std::runtime_error("no command " + path);
    return *it;
}

bool has(const Words& words, const std::string& word) {
    return std::find(words.begin(), words.end(), word) != words.end();
}

TEST(CliCompletion, EveryCommandIsThereWithItsOptions) {
    const auto all = definitions();
    const auto& mlt = find(all, "mlt");
    const auto& ssh = find(all, "mlt ssh");
    // Each command listed by its parent is there, and nothing else.
    size_t listed = 1;
    for (const auto& c : all) listed += c.commands.size();
    EXPECT_EQ(all.size(), listed);
    EXPECT_TRUE(has(mlt.commands, "completion"));
    for (const auto& name : ssh.commands) {
        const auto& c = find(all, "mlt ssh " + name);
        EXPECT_TRUE(has(c.options, "--host") && has(c.valued, "-h")) << name;
        EXPECT_TRUE(has(c.options, "-v") && !has(c.valued, "-v")) << name;
    }
    const auto& train = find(all, "mlt ssh train");
    EXPECT_TRUE(has(train.options, "--clean") && has(train.options, "--no-clean"));
    EXPECT_TRUE(has(train.valued, "--max-hours") && !has(train.valued, "--clean"));
    EXPECT_TRUE(train.models);
    EXPECT_TRUE(find(all, "mlt ssh status").models);
    EXPECT_FALSE(find(all, "mlt ssh forward").models);
    // Hidden helpers are not offered.
    EXPECT_FALSE(has(find(all, "mlt completion").options, "--models"));
    EXPECT_EQ(find(all, "mlt completion").first_values, (Words{"bash", "zsh"}));
}

TEST(CliCompletion, ValuesOfAFixedSetAreOffered) {
    const auto all = definitions();
    const auto& keygen = find(all, "mlt ssh-keygen");
    for (const char* option : {"-t", "--type"}) {
        const auto it = std::find_if(keygen.option_values.begin(), keygen.option_values.end(),
                                     [&](const auto& v) { return v.first == option; });
        ASSERT_NE(it, keygen.option_values.end()) << option;
        EXPECT_EQ(it->second, (Words{"ed25519", "rsa"}));
    }
}

TEST(CliCompletion, ScriptsForBashAndZshOnly) {
    const auto all = definitions();
    const std::string bash = mlt::completion_script("bash", all);
    EXPECT_NE(bash.find("complete -o bashdefault -o default -F _mlt mlt"), std::string::npos);
    EXPECT_NE(bash.find("'mlt ssh train|first') printf '%s\\n' @models ;;"), std::string::npos);
    EXPECT_EQ(mlt::completion_script("zsh", all).rfind("#compdef mlt\n", 0), 0u);
    try {
        mlt::completion_script("fish", all);
        ADD_FAILURE() << "fish";
    } catch (const mlt::Error& e) {
        EXPECT_EQ(e.code(), mlt::exit_code::kUsage);
        EXPECT_NE(std::string(e.what()).find("'fish'"), std::string::npos) << e.what();
    }
}

}  // namespace
