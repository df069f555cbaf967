// CLI11's parse errors, and words where a command belongs, said in mlt's words (exit 2).
#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "mlt/cli/app.h"
#include "mlt/util/text.h"

namespace mlt::cli {

namespace {

// The longest part of a typed word an error line quotes.
constexpr size_t kQuoted = 80;

// The deepest command the parse chose: mlt, mlt ssh or mlt ssh status.
const CLI::App* chosen_level(const CLI::App& app) {
    const CLI::App* level = &app;
    while (!level->get_subcommands().empty()) level = level->get_subcommands().front();
    return level;
}

// "mlt ssh status" for the status command.
std::string path_of(const CLI::App* level) {
    std::string path;
    for (; level != nullptr; level = level->get_parent())
        path = level->get_name() + (path.empty() ? "" : " " + path);
    return path;
}

std::string help_hint(const std::string& path) {
    return "run '" + path + " --help' for what it takes";
}

// The first word CLI11 left over, in the order typed (app.remaining may be grouped by level).
std::string first_extra(const CLI::App& app, const std::vector<std::string>& typed,
                        bool commands_only) {
    const std::vector<std::string> extras = app.remaining(true);
    for (const auto& word : typed) {
        if (commands_only && (word.empty() || word[0] == '-')) continue;
        if (std::find(extras.begin(), extras.end(), word) != extras.end()) return word;
    }
    return extras.empty() || commands_only ? std::string() : extras.front();
}

// The candidate a typo of `word` most likely meant: 1 edit for words of up to 4 characters,
// 2 for longer ones; empty when none is that close.
std::string closest(const std::string& word, const std::vector<std::string>& candidates) {
    std::string best;
    size_t best_distance = word.size() <= 4 ? 2 : 3;  // one more than allowed
    for (const auto& candidate : candidates) {
        const size_t d = edit_distance(word, candidate);
        if (d < best_distance) {
            best_distance = d;
            best = candidate;
        }
    }
    return best;
}

// The long options (--name) of `level`: only its own are taken where the unknown one stood
// (those of the commands above it are not, so `status --clean` is not "did you mean --clean?").
std::vector<std::string> long_options(const CLI::App* level) {
    std::vector<std::string> names;
    for (const CLI::Option* opt : level->get_options())
        for (const auto& l : opt->get_lnames()) names.push_back("--" + l);
    return names;
}

Error extra_word(const CLI::App& app, const std::vector<std::string>& typed,
                 const std::string& path) {
    const std::string word = first_extra(app, typed, false);
    if (!word.empty() && word[0] == '-') {
        const std::string name = word.substr(0, word.find('='));
        std::string what = "unknown option " + printable(name, kQuoted) + " for " + path;
        if (const std::string meant = closest(name, long_options(chosen_level(app)));
            name.size() > 3 && !meant.empty())
            what += "; did you mean " + meant + "?";
        // `--rank -1`: the number is read as an option, and the numbers are 0 or more.
        const bool negative = name.size() > 1 && std::isdigit(static_cast<unsigned char>(name[1]));
        return usage_error(what, (negative ? "numbers are 0 or more; " : "") + help_hint(path));
    }
    return usage_error("unexpected argument '" + printable(word, kQuoted) + "' for " + path,
                       "it takes fewer words; " + help_hint(path));
}

// "--port: 1 required INT:NUMBER in 1 to 65535 missing": an option given without its value.
Error missing_value(const std::string& text, const std::string& path) {
    const size_t colon = text.find(": ");
    const size_t required = text.find(" required ");
    const size_t missing = text.rfind(" missing");
    if (colon == std::string::npos || required == std::string::npos ||
        missing == std::string::npos || missing < required)
        return usage_error(text + " for " + path, help_hint(path));
    const std::string name = text.substr(0, colon);
    std::string expected = text.substr(required + 10, missing - required - 10);
    if (const size_t type = expected.find(':'); type != std::string::npos)
        expected.erase(0, type + 1);  // "INT:NUMBER in 1 to 65535": the reader's part
    return usage_error("option " + name + " of " + path + " needs a value (" + expected + ")",
                       "write " + name + " VALUE; " + help_hint(path));
}

}  // namespace

std::optional<Error> unknown_command(const CLI::App& app, const std::vector<std::string>& typed) {
    const CLI::App* level = chosen_level(app);
    const std::vector<std::string> names = command_names(*level);
    if (names.empty()) return std::nullopt;
    const std::string word = first_extra(app, typed, true);
    if (word.empty()) return std::nullopt;
    const std::string path = path_of(level);
    const std::string runs = path + " runs " + command_list(*level);
    const std::string quoted = "'" + printable(word, kQuoted) + "'";
    if (const std::string meant = closest(word, names); !meant.empty())
        return usage_error("unknown command " + quoted + "; did you mean '" + meant + "'?",
                           runs + "; run '" + path + " --help' for usage");
    if (level->get_parent() != nullptr)  // mlt ssh evaluate: one of MLTK's other commands
        return usage_error("unsupported command " + quoted + ": " + runs,
                           "MLTK's ssh runs only train; run other MLTK commands locally, on the "
                           "results train collects");
    return usage_error("unknown command " + quoted + ": " + runs,
                       "run '" + path + " --help' for usage");
}

Error in_mlt_words(const CLI::App& app, const CLI::ParseError& e,
                   const std::vector<std::string>& typed) {
    const std::string path = path_of(chosen_level(app));
    const std::string text = e.what();
    if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) return extra_word(app, typed, path);
    if (dynamic_cast<const CLI::ArgumentMismatch*>(&e) != nullptr) return missing_value(text, path);
    if (dynamic_cast<const CLI::RequiredError*>(&e) != nullptr) {
        const size_t at = text.rfind(" is required");
        if (at != std::string::npos && at + 12 == text.size())
            return usage_error(path + " needs " + text.substr(0, at), help_hint(path));
    }
    if (dynamic_cast<const CLI::ConversionError*>(&e) != nullptr)
        return usage_error("a value of " + path + " is not understood: " + text, help_hint(path));
    // The others (a check of a value: "--port: '0' is not a decimal number from 1 to 65535")
    // carry mlt's own words from the option's check; said where, with what to do.
    return usage_error(text, help_hint(path));
}

Error missing_command(const CLI::App& app) {
    const CLI::App* level = chosen_level(app);
    const std::string path = path_of(level);
    return usage_error(path + " needs a COMMAND: " + command_list(*level),
                       "run '" + path + " --help' for usage");
}

}  // namespace mlt::cli
