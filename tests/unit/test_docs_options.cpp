// The docs name only options and settings the code has: every `--flag` in docs/usage.md is
// declared on the real CLI11 app (the train options included, which the train argument
// splitter takes from there), and every key of docs/settings.md is in the settings table.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "config/settings_table.h"
#include "mlt/cli/commands.h"

namespace {

std::string read_doc(const std::string& name) {
    std::ifstream in(std::string(MLT_SOURCE_DIR) + "/docs/" + name);
    EXPECT_TRUE(in) << name;
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// The long options of `app` and all its subcommands, as `--name`.
void collect_long_options(const CLI::App& app, std::set<std::string>& out) {
    for (const CLI::Option* opt : app.get_options())
        for (const auto& name : opt->get_lnames()) out.insert("--" + name);
    for (const CLI::App* sub : app.get_subcommands({})) collect_long_options(*sub, out);
}

// mlt's command line as main builds it.
std::set<std::string> long_options_of_mlt() {
    CLI::App app("test", "mlt");
    app.set_version_flag("--version", "test");  // main.cpp's --version
    mlt::cli::Action action;
    int verbosity = 0;
    mlt::cli::add_ssh_command(app, action, verbosity);
    mlt::cli::add_ssh_keygen_command(app, action);
    mlt::cli::add_jobs_command(app, action);
    std::set<std::string> names;
    collect_long_options(app, names);
    return names;
}

TEST(DocsOptions, EveryFlagInUsageExists) {
    // Words that are not mlt's options on purpose: the training's arguments and bash's
    // --login in examples, and the typos that show "did you mean".
    const std::set<std::string> not_mlt = {"--epochs",    "--weights", "--login",
                                           "--sync-evry", "--resum",   "--no-wiat"};
    const std::set<std::string> declared = long_options_of_mlt();
    ASSERT_TRUE(declared.count("--reconnect-timeout")) << "the app was not built";
    const std::string usage = read_doc("usage.md");
    const std::regex flag("--[A-Za-z][A-Za-z0-9_-]*");
    std::set<std::string> seen;
    for (std::sregex_iterator it(usage.begin(), usage.end(), flag), end; it != end; ++it)
        seen.insert(it->str());
    ASSERT_GT(seen.size(), 10u);
    for (const std::string& name : seen)
        EXPECT_TRUE(declared.count(name) || not_mlt.count(name))
            << "docs/usage.md names " << name << ", which mlt does not declare";
}

TEST(DocsOptions, EveryKeyInSettingsExists) {
    namespace sd = mlt::settings_detail;
    const std::string doc = read_doc("settings.md");
    // The rows of the Keys table: | `key` | type | default | description |
    const std::regex row("\\n\\| `([a-z_.]+)` \\|");
    int rows = 0;
    for (std::sregex_iterator it(doc.begin(), doc.end(), row), end; it != end; ++it, ++rows) {
        const std::string key = (*it)[1];
        const auto dot = key.find('.');
        const std::string head = key.substr(0, dot);
        const std::string tail = dot == std::string::npos ? "" : key.substr(dot + 1);
        bool known = sd::find_field(sd::ssh_fields(), head) != nullptr;
        if (known && head == "connection" && !tail.empty())
            known = sd::find_field(sd::connection_fields(), tail) != nullptr;
        else if (known && head == "nodes" && !tail.empty())
            known = sd::find_field(sd::nodes_fields(), tail) != nullptr;
        else if (known && head == "transfer" && !tail.empty())
            known = sd::find_field(sd::transfer_fields(), tail) != nullptr;
        else if (known && head == "watch" && !tail.empty())
            known = sd::find_field(sd::watch_fields(), tail) != nullptr;
        else if (known && head == "checkpoints" && tail.rfind("keep_best.", 0) == 0)
            known = sd::find_field(sd::keep_best_fields(), tail.substr(10)) != nullptr;
        else if (known && head == "provider" && !tail.empty())
            known = sd::find_field(sd::provider_fields(), tail) != nullptr;
        else if (known && head == "checkpoints" && !tail.empty())
            known = sd::find_field(sd::checkpoints_fields(), tail) != nullptr;
        else if (!tail.empty())
            known = false;
        EXPECT_TRUE(known) << "docs/settings.md names " << key << ", which the table lacks";
    }
    EXPECT_GT(rows, 20);
}

}  // namespace
