// The connection options and -v stand before COMMAND, after it and after MODEL alike, for every
// command (walked from the definitions, so a new command is covered at once).
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "mlt/cli/app.h"
#include "mlt/cli/commands.h"

namespace {

using Words = std::vector<std::string>;

// What a parse of `mlt ssh ...` gave: the connection options, -v's count, the command chosen.
struct Parsed {
    mlt::SshCommandLine cli;
    int verbosity = 0;
    std::string command;
};

// Parses `mlt <args...>` as main does, through the real builder; train's stand-in runs nothing
// and no action runs (the others would connect).
Parsed parse_ssh(Words args) {
    CLI::App app("test", "mlt");
    mlt::cli::Action action;
    Parsed p;
    const auto cli = mlt::cli::add_ssh_command(
        app, action, p.verbosity,
        [](const mlt::SshCommandLine&, const mlt::TrainOptions&) { return 0; });
    std::reverse(args.begin(), args.end());
    app.parse(args);
    p.cli = *cli;
    const CLI::App* ssh = app.get_subcommand("ssh");
    if (!ssh->get_subcommands().empty()) p.command = ssh->get_subcommands().front()->get_name();
    return p;
}

// The words a command needs after its name: one per argument it requires, or MODEL.
Words arguments_of(const CLI::App& command) {
    for (const CLI::Option* opt : command.get_options()) {
        if (opt->nonpositional()) continue;
        if (opt->get_name().find(':') != std::string::npos) return {"8888:8888"};  // forward
        return {"my_model"};
    }
    // train reads its words itself: MODEL first.
    return command.get_name() == "train" ? Words{"my_model"} : Words{};
}

// Every command of `mlt ssh`, from the definitions.
std::vector<std::pair<std::string, Words>> ssh_commands() {
    CLI::App app("test", "mlt");
    mlt::cli::Action action;
    int verbosity = 0;
    mlt::cli::add_commands(app, action, verbosity);
    const CLI::App* ssh = app.get_subcommand("ssh");
    std::vector<std::pair<std::string, Words>> out;
    for (const std::string& name : mlt::cli::command_names(*ssh))
        out.emplace_back(name, arguments_of(*ssh->get_subcommand(name)));
    return out;
}

const Words kOptions = {"-h", "H",   "-p", "22",  "-i", "~/.ssh/id_gpu", "--password", "pw",
                        "-o", "A=1", "-F", "cfg", "-v"};

void expect_same(const Parsed& a, const Parsed& b, const std::string& what) {
    EXPECT_EQ(a.command, b.command) << what;
    EXPECT_EQ(a.cli.hosts, b.cli.hosts) << what;
    EXPECT_EQ(a.cli.port, b.cli.port) << what;
    EXPECT_EQ(a.cli.identity_file, b.cli.identity_file) << what;
    EXPECT_EQ(a.cli.password, b.cli.password) << what;
    EXPECT_EQ(a.cli.ssh_options, b.cli.ssh_options) << what;
    EXPECT_EQ(a.cli.ssh_config, b.cli.ssh_config) << what;
    EXPECT_EQ(a.verbosity, b.verbosity) << what;
}

Words joined(std::initializer_list<Words> parts) {
    Words all;
    for (const Words& part : parts) all.insert(all.end(), part.begin(), part.end());
    return all;
}

TEST(CliOptionsAnywhere, EverySshCommandTakesThemAfterItsNameAndAfterItsArguments) {
    const auto commands = ssh_commands();
    ASSERT_GE(commands.size(), 7u);
    for (const auto& [name, args] : commands) {
        const Parsed before = parse_ssh(joined({{"ssh"}, kOptions, {name}, args}));
        EXPECT_EQ(before.command, name);
        EXPECT_EQ(before.cli.hosts, Words{"H"}) << name;
        EXPECT_EQ(before.cli.port, 22) << name;
        EXPECT_EQ(before.cli.password, "pw") << name;
        EXPECT_EQ(before.cli.ssh_options, Words{"A=1"}) << name;
        EXPECT_EQ(before.cli.ssh_config, "cfg") << name;
        EXPECT_EQ(before.verbosity, 1) << name;
        expect_same(parse_ssh(joined({{"ssh", name}, args, kOptions})), before,
                    name + ": after the arguments");
        expect_same(parse_ssh(joined({{"ssh", name}, kOptions, args})), before,
                    name + ": after the command");
    }
}

TEST(CliOptionsAnywhere, TheExampleOfTheIssue) {
    expect_same(parse_ssh({"ssh", "status", "my_model", "-h", "H", "-p", "22", "-v"}),
                parse_ssh({"ssh", "-h", "H", "-p", "22", "-v", "status", "my_model"}),
                "status my_model -h H -p 22 -v");
}

// Both sides count as if all stood before COMMAND: each -h one more host (node), each -o and
// -v counts, and of -p, -i, --password and -F the one after COMMAND wins.
TEST(CliOptionsAnywhere, GivenOnBothSidesTheyAddUpAsBeforeCommand) {
    for (const auto& [name, args] : ssh_commands()) {
        const Parsed p = parse_ssh(joined({{"ssh", "-h", "A", "-p", "1", "-o", "X=1", "-v", "-i",
                                            "k1", "-F", "c1", "--password", "p1", name},
                                           args,
                                           {"-h", "B", "-p", "2", "-o", "Y=2", "-v", "-i", "k2",
                                            "-F", "c2", "--password", "p2"}}));
        EXPECT_EQ(p.cli.hosts, (Words{"A", "B"})) << name;
        EXPECT_EQ(p.cli.ssh_options, (Words{"X=1", "Y=2"})) << name;
        EXPECT_EQ(p.verbosity, 2) << name;
        EXPECT_EQ(p.cli.port, 2) << name;
        EXPECT_EQ(p.cli.identity_file, "k2") << name;
        EXPECT_EQ(p.cli.ssh_config, "c2") << name;
        EXPECT_EQ(p.cli.password, "p2") << name;
    }
}

TEST(CliOptionsAnywhere, LongNamesAndVvToo) {
    const Parsed p = parse_ssh(
        {"ssh", "logs", "m", "--host", "H", "--port", "2222", "--identity", "k", "-vv", "-f"});
    EXPECT_EQ(p.cli.hosts, Words{"H"});
    EXPECT_EQ(p.cli.port, 2222);
    EXPECT_EQ(p.cli.identity_file, "k");
    EXPECT_EQ(p.verbosity, 2);
}

// tensorboard's --port is TensorBoard's: there the SSH port is -p only.
TEST(CliOptionsAnywhere, TensorboardKeepsItsOwnPort) {
    const Parsed p = parse_ssh({"ssh", "tensorboard", "m", "--port", "7000", "-p", "2222"});
    EXPECT_EQ(p.cli.port, 2222);
}

TEST(CliOptionsAnywhere, EveryCommandTakesVerbose) {
    CLI::App app("test", "mlt");
    mlt::cli::Action action;
    int verbosity = 0;
    mlt::cli::add_commands(app, action, verbosity);
    for (const std::string& name : mlt::cli::command_names(app)) {
        const CLI::App* command = app.get_subcommand(name);
        EXPECT_NE(command->get_option_no_throw("-v"), nullptr) << name;
        EXPECT_NE(command->get_option_no_throw("--verbose"), nullptr) << name;
        for (const std::string& sub : mlt::cli::command_names(*command))
            for (const char* option : {"-h", "-p", "-i", "--password", "-o", "-F", "-v"})
                EXPECT_NE(command->get_subcommand(sub)->get_option_no_throw(option), nullptr)
                    << name << " " << sub << " " << option;
    }
    for (const Words& words : {Words{"jobs", "-v"}, Words{"ssh-keygen", "k", "-v", "-v"},
                               Words{"completion", "bash", "-v"}}) {
        CLI::App fresh("test", "mlt");
        int count = 0;
        mlt::cli::add_commands(fresh, action, count);
        fresh.parse(Words(words.rbegin(), words.rend()));
        EXPECT_EQ(count, words[0] == "ssh-keygen" ? 2 : 1) << words[0];
    }
}

}  // namespace
