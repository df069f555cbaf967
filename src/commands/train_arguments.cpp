// The words after `train` split as MLTK's click command splits them, and the flag checks.
#include "mlt/commands/train_arguments.h"

#include <algorithm>

#include "mlt/util/error.h"
#include "mlt/util/reporter.h"
#include "mlt/util/text.h"

namespace mlt {

namespace {

// The option of `own` a word names (`--name`, `--name=value`, `-x`, `-xVALUE`), or null.
const OwnOption* find_own(const std::string& word, const std::vector<OwnOption>& own) {
    if (word.size() < 2 || word[0] != '-') return nullptr;
    const std::string name = word[1] == '-' ? word.substr(0, word.find('=')) : word.substr(0, 2);
    for (const auto& o : own)
        if (std::find(o.names.begin(), o.names.end(), name) != o.names.end()) return &o;
    return nullptr;
}

// The value is in the word itself: `--name=value`, or `-xVALUE` for a short option.
bool value_attached(const std::string& word) {
    return word.rfind("--", 0) == 0 ? word.find('=') != std::string::npos : word.size() > 2;
}

bool looks_like_option(const std::string& word) {
    return word.size() > 1 && word[0] == '-';
}

// The long option of `own` that `word` (`--name`, `--name=value`) is most likely a typo of, or
// "". A name of 5 to 7 characters may be 1 edit away, a longer one 2; shorter names are not
// judged (`--lr`, `--seed` are the training's, and too short to tell a typo from a word).
std::string misspelt_own(const std::string& word, const std::vector<OwnOption>& own) {
    if (word.rfind("--", 0) != 0) return "";
    const std::string name = word.substr(2, word.find('=') - 2);
    if (name.size() < 5) return "";
    std::string best;
    size_t best_distance = name.size() < 8 ? 2 : 3;  // one more than allowed
    for (const auto& o : own)
        for (const auto& candidate : o.names) {
            if (candidate.rfind("--", 0) != 0) continue;
            const size_t d = edit_distance(name, std::string_view(candidate).substr(2));
            if (d < best_distance) {
                best_distance = d;
                best = candidate;
            }
        }
    return best;
}

// Refuses `word` when it looks like a typo of one of mlt's own options: handed to the
// training, `--sync-evry 60` would be lost there or break it.
void refuse_misspelt(const std::string& word, const std::vector<OwnOption>& own,
                     const char* where) {
    const std::string meant = misspelt_own(word, own);
    if (meant.empty()) return;
    const std::string name = word.substr(0, word.find('='));
    throw usage_error("unknown option " + name + " " + where + "; did you mean " + meant + "?",
                      "fix the spelling; to hand it to the training as it is, give it after --: "
                      "train MODEL -- " +
                          name);
}

}  // namespace

TrainArguments split_train_arguments(const std::vector<std::string>& words,
                                     const std::vector<OwnOption>& own_options) {
    TrainArguments out;
    bool have_model = false;
    bool after_separator = false;
    for (std::size_t i = 0; i < words.size(); ++i) {
        const std::string& word = words[i];
        if (!after_separator && word == "--") {
            after_separator = true;
            continue;
        }
        const OwnOption* own = after_separator ? nullptr : find_own(word, own_options);
        if (own) {
            out.own.push_back(word);
            // A missing value is left for the option parser to report.
            if (own->takes_value && !value_attached(word) && i + 1 < words.size())
                out.own.push_back(words[++i]);
        } else if (!have_model && (after_separator || !looks_like_option(word))) {
            out.model = word;
            have_model = true;
        } else if (!have_model) {
            refuse_misspelt(word, own_options, "before MODEL");
            throw usage_error("unknown option " + word + " before MODEL",
                              "options for the training go after MODEL: train MODEL " + word);
        } else {
            if (!after_separator) refuse_misspelt(word, own_options, "after MODEL");
            out.passed.push_back(word);
        }
    }
    if (!have_model) throw usage_error("no model given", "mlt ssh ... train MODEL [ARGS...]");
    if (out.model.empty())
        throw usage_error("empty model name", "give the model's name or spec path: train MODEL");
    return out;
}

void check_job_flags(bool resume, bool force) {
    if (!resume || !force) return;
    throw usage_error(
        "--resume and --force contradict each other: --resume continues the run on the remote, "
        "--force discards it",
        "give one of them: --resume collects what the run left, --force starts over");
}

void check_budget_flags(double price_per_hour, const Budget& budget) {
    if (budget.max_cost > 0 && price_per_hour <= 0)
        throw usage_error(
            "--max-cost needs a price: without --price or price_per_hour the cost "
            "of the run is not known, and the limit would never be reached",
            "give the host's price, e.g. --price 1.25, or leave --max-cost out");
}

bool wants_test_model(const std::vector<std::string>& passed) {
    return std::find(passed.begin(), passed.end(), "--test") != passed.end();
}

}  // namespace mlt
