// The docs tell the truth about what the binary decides: every flag of every --help is in
// usage.md, every list of exit codes has the whole table, every list of commands has every
// command, and claims that were once true and are no longer (the spec is never imported,
// several -h are an error, a changed host key is always refused, look_for_keys is not used)
// do not come back. Each test names the code it holds the docs to.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "config/settings_table.h"
#include "mlt/cli/app.h"
#include "mlt/util/error.h"
#include "mlt/util/paths.h"

namespace {

namespace fs = std::filesystem;

struct Doc {
    std::string name;  // relative to the source dir
    std::string text;
};

// README.md, every page of docs/ and the examples' text files.
std::vector<Doc> all_docs() {
    const fs::path root(MLT_SOURCE_DIR);
    std::vector<fs::path> files{root / "README.md"};
    for (const char* dir : {"docs", "examples"})
        for (const auto& entry : fs::recursive_directory_iterator(root / dir)) {
            const std::string ext = entry.path().extension().string();
            if (ext == ".md" || ext == ".yaml") files.push_back(entry.path());
        }
    std::vector<Doc> docs;
    for (const auto& file : files)
        docs.push_back({fs::relative(file, root).string(), mlt::read_file(file.string())});
    return docs;
}

// A doc's paragraphs (blocks between blank lines) and list items; a table row is a block of
// its own, since a table names one code or command per row, not a list of them.
std::vector<std::string> blocks_of(const std::string& text) {
    std::vector<std::string> blocks;
    std::string block;
    size_t at = 0;
    while (at < text.size()) {
        size_t end = text.find('\n', at);
        if (end == std::string::npos) end = text.size();
        const std::string line = text.substr(at, end - at);
        at = end + 1;
        const bool row = !line.empty() && line[0] == '|';
        static const std::regex item_re(R"(^\s*([-*]|\d+\.) )");
        if (std::regex_search(line, item_re) && !block.empty()) {
            blocks.push_back(block);
            block.clear();
        }
        if (line.find_first_not_of(" \t") == std::string::npos || row) {
            if (!block.empty()) blocks.push_back(block);
            block.clear();
            if (row) blocks.push_back(line);
            continue;
        }
        block += line + "\n";
    }
    if (!block.empty()) blocks.push_back(block);
    return blocks;
}

std::string excerpt(const std::string& block) {
    return block.substr(0, 160);
}

// mlt's whole command line, as main builds it.
struct App {
    CLI::App app{"test", "mlt"};
    mlt::cli::Action action;
    int verbosity = 0;
    App() { mlt::cli::add_commands(app, action, verbosity); }
};

void collect_flags(const CLI::App& app, std::set<std::string>& out) {
    for (const CLI::Option* opt : app.get_options()) {
        if (opt->get_group().empty()) continue;  // hidden: not in --help (completion --models)
        for (const auto& name : opt->get_lnames()) out.insert("--" + name);
        for (const auto& name : opt->get_snames()) out.insert("-" + name);
    }
    for (const CLI::App* sub : app.get_subcommands({})) collect_flags(*sub, out);
}

TEST(DocsTruth, EveryFlagOfEveryHelpIsInUsage) {
    App mlt;
    std::set<std::string> flags;
    collect_flags(mlt.app, flags);
    ASSERT_TRUE(flags.count("--reconnect-timeout")) << "the app was not built";
    const std::string usage = mlt::read_file(std::string(MLT_SOURCE_DIR) + "/docs/usage.md");
    for (const std::string& flag : flags) {
        // As a word of its own: `-f`, -f, `-f N`; not as the head of a longer flag.
        const std::regex word("(^|[^A-Za-z0-9_-])" + flag + "($|[^A-Za-z0-9_-])");
        EXPECT_TRUE(std::regex_search(usage, word))
            << "mlt's --help lists " << flag << ", which docs/usage.md never names";
    }
}

// The table's codes but N (the training's own) and 0, which lists may leave to the reader.
std::set<std::string> mlts_own_exit_codes() {
    std::set<std::string> codes;
    for (const mlt::ExitCodeRow& row : mlt::kExitCodeTable)
        if (std::string(row.codes) != "N" && std::string(row.codes) != "0") codes.insert(row.codes);
    return codes;
}

TEST(DocsTruth, EveryListOfExitCodesHasTheWholeTable) {
    const std::set<std::string> table = mlts_own_exit_codes();
    ASSERT_GE(table.size(), 8u);
    // A code named as a code: "(5)", "exit 5", "exits 5", "exits with 5", "5 =", "5:".
    const std::regex code_re(R"((?:\(|\bexits? (?:with )?|\bcode )(\d{1,3})\b|\b(\d{1,3}) ?[=:] )");
    const std::regex number_re(R"(\b(\d{1,3})\b)");
    int lists = 0;
    for (const Doc& doc : all_docs())
        for (const std::string& block : blocks_of(doc.text)) {
            std::set<std::string> named;
            for (std::sregex_iterator it(block.begin(), block.end(), code_re), end; it != end;
                 ++it) {
                const std::string code = (*it)[1].matched ? (*it)[1] : (*it)[2];
                if (table.count(code)) named.insert(code);
            }
            if (named.size() < 4) continue;  // names a code or three, lists none
            ++lists;
            std::set<std::string> numbers;
            for (std::sregex_iterator it(block.begin(), block.end(), number_re), end; it != end;
                 ++it)
                numbers.insert((*it)[1]);
            for (const std::string& code : table)
                EXPECT_TRUE(numbers.count(code)) << doc.name << " lists exit codes without " << code
                                                 << " (kExitCodeTable has it): " << excerpt(block);
        }
    EXPECT_GE(lists, 1) << "no doc lists the exit codes any more";
}

// The commands a piece of text names as `COMMAND ...` (or `mlt ssh COMMAND ...`).
std::set<std::string> commands_named(const std::string& text, const std::set<std::string>& all) {
    static const std::regex named_re("`(?:mlt (?:ssh )?)?([a-z][a-z-]*)[^`]*`");
    std::set<std::string> named;
    for (std::sregex_iterator it(text.begin(), text.end(), named_re), end; it != end; ++it)
        if (all.count((*it)[1])) named.insert((*it)[1]);
    return named;
}

// A list of commands names every one of them; `train` may be left to the reader where the
// list says it holds the other (or more) commands.
void expect_complete(const std::set<std::string>& named, const std::vector<std::string>& commands,
                     bool others_only, const std::string& where) {
    for (const std::string& command : commands)
        EXPECT_TRUE(named.count(command) || (others_only && command == "train"))
            << where << " lists the commands of mlt ssh without `" << command << "`";
}

// The lists of commands in prose: a paragraph or item that speaks of commands and names at
// least four of them.
int check_prose_lists(const Doc& doc, const std::vector<std::string>& commands) {
    const std::set<std::string> all(commands.begin(), commands.end());
    static const std::regex commands_re(R"(\bcommands\b)", std::regex::icase);
    static const std::regex others_re(R"(\b(other|more)\b)", std::regex::icase);
    int lists = 0;
    for (const std::string& block : blocks_of(doc.text)) {
        const std::set<std::string> named = commands_named(block, all);
        if (named.size() < 4 || !std::regex_search(block, commands_re)) continue;
        ++lists;
        expect_complete(named, commands, std::regex_search(block, others_re),
                        doc.name + " (" + excerpt(block) + ")");
    }
    return lists;
}

// The tables of commands: at least four rows whose first cell is a command.
int check_tables(const Doc& doc, const std::vector<std::string>& commands) {
    const std::set<std::string> all(commands.begin(), commands.end());
    static const std::regex first_cell_re("^\\| `([a-z][a-z-]*)[^`]*` \\|");
    int lists = 0;
    std::set<std::string> named;
    std::string heading;
    std::istringstream in(doc.text + "\n\n");
    for (std::string line; std::getline(in, line);) {
        std::smatch m;
        if (std::regex_search(line, m, first_cell_re)) {
            if (all.count(m[1])) named.insert(m[1]);
            continue;
        }
        if (!line.empty() && line[0] == '|') continue;  // the header and its rule
        if (named.size() >= 4) {
            ++lists;
            expect_complete(named, commands, heading.find("Other") != std::string::npos,
                            doc.name + " (the table under \"" + heading + "\")");
        }
        named.clear();
        if (!line.empty() && line[0] == '#') heading = line;
    }
    return lists;
}

TEST(DocsTruth, EveryListOfCommandsNamesEveryCommand) {
    App mlt;
    const CLI::App* ssh = mlt.app.get_subcommand("ssh");
    const std::vector<std::string> ssh_commands = mlt::cli::command_names(*ssh);
    ASSERT_GE(ssh_commands.size(), 7u);
    int lists = 0;
    for (const Doc& doc : all_docs())
        lists += check_prose_lists(doc, ssh_commands) + check_tables(doc, ssh_commands);
    EXPECT_GE(lists, 2) << "the docs no longer list the commands of mlt ssh";
}

// A sentence that was true once and is false now, and the code that makes it false.
struct StaleClaim {
    const char* pattern;  // ECMAScript, case-insensitive; a blank matches any run of blanks
                          // and line breaks (the docs wrap their lines)
    const char* truth;    // what the code does, for the failure message
};

TEST(DocsTruth, NoClaimTheCodeHasOutgrown) {
    namespace sd = mlt::settings_detail;
    // The facts behind each claim, so that the claim list cannot outlive them.
    const sd::FieldDecl* loader = sd::find_field(sd::ssh_fields(), "spec_loader");
    ASSERT_NE(loader, nullptr) << "spec_loader is gone: revisit the spec claims below";
    ASSERT_NE(sd::find_field(sd::connection_fields(), "look_for_keys"), nullptr)
        << "look_for_keys is gone: revisit the claims below";
    ASSERT_NE(sd::find_field(sd::nodes_fields(), "hosts"), nullptr)
        << "nodes.hosts is gone: revisit the claims below";
    const StaleClaim claims[] = {
        {R"(never (imports|loads|runs) the (model )?spec)",
         "spec_loader auto/mltk loads the spec through MLTK when python3 can import mltk"},
        {R"(does not (import|load) the (model )?spec)",
         "spec_loader auto/mltk loads the spec through MLTK when python3 can import mltk"},
        {R"(several `?-h`? (are|is) (an error|exit 2|refused))",
         "several -h are several nodes (resolve_targets)"},
        {R"(more than one `?-h`? (are|is) (an error|refused))",
         "several -h are several nodes (resolve_targets)"},
        {R"(`?nodes\.hosts`?\)? (is|are) not (yet )?(built|supported|read|there))",
         "nodes.hosts is a setting (settings_table_nodes.cpp)"},
        {R"(changed (host )?key is always refused)",
         "host_key_checking: no accepts a changed key with a warning"},
        {R"(paramiko[^|\n]*\(e\.g\. `look_for_keys`\))",
         "look_for_keys is a connection setting mlt uses (auth.cpp)"},
        {R"(look_for_keys[^|\n]*(not supported|does not use|ignored))",
         "look_for_keys is a connection setting mlt uses (auth.cpp)"},
    };
    for (const Doc& doc : all_docs())
        for (const StaleClaim& claim : claims) {
            const std::regex re(std::regex_replace(claim.pattern, std::regex(" "), "\\s+"),
                                std::regex::icase);
            std::smatch m;
            EXPECT_FALSE(std::regex_search(doc.text, m, re))
                << doc.name << " says \"" << m.str() << "\", but " << claim.truth;
        }
}

// Every key the docs call a paramiko option that mlt does not use is one that it ignores.
TEST(DocsTruth, TheParamikoKeysNamedAsUnusedAreTheIgnoredOnes) {
    namespace sd = mlt::settings_detail;
    const auto& ignored = sd::ignored_connection_keys();
    const std::regex named_re(R"(paramiko[^|\n]*?\(e\.g\. `([a-z_]+)`\))");
    int seen = 0;
    for (const Doc& doc : all_docs())
        for (std::sregex_iterator it(doc.text.begin(), doc.text.end(), named_re), end; it != end;
             ++it, ++seen) {
            const std::string key = (*it)[1];
            EXPECT_NE(std::find(ignored.begin(), ignored.end(), key), ignored.end())
                << doc.name << " names " << key << " as a paramiko option mlt does not use";
            EXPECT_EQ(sd::find_field(sd::connection_fields(), key), nullptr)
                << doc.name << " names " << key << " as unused, but it is a setting";
        }
    EXPECT_GE(seen, 1) << "troubleshooting.md no longer gives an example of an ignored key";
}

}  // namespace
