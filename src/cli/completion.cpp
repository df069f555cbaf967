// `mlt completion bash|zsh`, and the command definitions as the completion sees them.
#include "mlt/commands/completion.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <memory>
#include <utility>

#include "mlt/cli/app.h"
#include "mlt/cli/commands.h"
#include "mlt/util/text.h"

namespace mlt::cli {

namespace {

// The words a value is one of, from its help text "ed25519|rsa" (placeholders such as the N
// of "auto|N" are left out); none when the text is no such list.
std::vector<std::string> listed_values(const std::string& text) {
    if (text.find('|') == std::string::npos) return {};
    std::vector<std::string> values;
    for (const std::string& word : CLI::detail::split(text, '|'))
        if (!word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
                return std::islower(static_cast<unsigned char>(c)) ||
                       std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '_';
            }))
            values.push_back(word);
    return values;
}

std::vector<std::string> names_of(const CLI::Option& opt) {
    std::vector<std::string> names;
    for (const auto& s : opt.get_snames()) names.push_back("-" + s);
    for (const auto& l : opt.get_lnames()) names.push_back("--" + l);
    return names;
}

// What follows a command's options: its first argument (MODEL, or one of a set), or, for a
// command that reads its words itself (train), the usage line's MODEL.
void first_argument(const CLI::App& app, CompletionCommand& c) {
    for (const CLI::Option* opt : app.get_options()) {
        if (opt->nonpositional()) continue;
        c.models = opt->get_name() == "MODEL";
        c.first_values = listed_values(opt->get_type_name());
        return;
    }
    const auto formatter = std::dynamic_pointer_cast<CLI::Formatter>(app.get_formatter());
    if (formatter)
        c.models = formatter->make_usage(&app, app.get_name()).find(" MODEL") != std::string::npos;
}

void add_command(const CLI::App& app, const std::string& path,
                 std::vector<CompletionCommand>& out) {
    CompletionCommand c;
    c.path = path;
    c.commands = command_names(app);
    for (const CLI::Option* opt : app.get_options()) {
        // Hidden (no group): a helper such as --models, not for the user to type.
        if (!opt->nonpositional() || opt->get_group().empty()) continue;
        const std::vector<std::string> names = names_of(*opt);
        c.options.insert(c.options.end(), names.begin(), names.end());
        if (opt->get_items_expected_max() == 0) continue;  // a flag
        c.valued.insert(c.valued.end(), names.begin(), names.end());
        const std::string text =
            opt->get_option_text().empty() ? opt->get_type_name() : opt->get_option_text();
        if (const auto values = listed_values(text); !values.empty())
            for (const auto& name : names) c.option_values.emplace_back(name, values);
    }
    first_argument(app, c);
    out.push_back(std::move(c));
}

// "bash|zsh" with `separator` "|".
std::string shell_list(const std::string& separator) {
    std::string list;
    for (const auto& s : kCompletionShells) list += (list.empty() ? "" : separator) + s;
    return list;
}

}  // namespace

std::vector<CompletionCommand> completion_commands(const CLI::App& root) {
    std::vector<CompletionCommand> out;
    std::vector<std::pair<const CLI::App*, std::string>> todo{{&root, root.get_name()}};
    while (!todo.empty()) {
        auto [app, path] = todo.front();
        todo.erase(todo.begin());
        add_command(*app, path, out);
        for (const std::string& name : command_names(*app))
            todo.emplace_back(app->get_subcommand(name), path + " " + name);
    }
    return out;
}

void add_completion_command(CLI::App& app, Action& action) {
    auto* cmd = app.add_subcommand(
        "completion", "Print a completion script for bash or zsh (commands, options, models)");
    cmd->footer(
        "Examples:\n"
        "  source <(mlt completion bash)   # in ~/.bashrc\n"
        "  source <(mlt completion zsh)    # in ~/.zshrc, after compinit");
    auto shell = std::make_shared<std::string>();
    cmd->add_option("SHELL", *shell, "The shell")
        ->type_name(shell_list("|"))
        ->check(CLI::Validator(
            [](std::string& text) -> std::string {
                if (std::find(kCompletionShells.begin(), kCompletionShells.end(), text) !=
                    kCompletionShells.end())
                    return {};
                return "'" + printable(text, 40) + "' is no shell mlt completes: use " +
                       shell_list(" or ");
            },
            ""));
    auto models = std::make_shared<bool>(false);
    // What the scripts run to complete MODEL: the names MODEL would find here.
    cmd->add_flag("--models", *models, "Print the model names found here, one a line")->group("");
    const CLI::App* root = &app;
    cmd->callback([&action, root, shell, models] {
        if (*models) {
            action = [] { return print_model_names(); };
            return;
        }
        if (shell->empty())
            throw usage_error("mlt completion needs SHELL: " + shell_list(" or "),
                              "run 'mlt completion --help' for usage");
        action = [root, shell] {
            const std::string script = completion_script(*shell, completion_commands(*root));
            std::fwrite(script.data(), 1, script.size(), stdout);
            return 0;
        };
    });
}

}  // namespace mlt::cli
