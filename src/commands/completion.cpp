// `mlt completion bash|zsh`: the completion scripts, written from the command definitions.
#include "mlt/commands/completion.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "mlt/commands/model.h"
#include "mlt/commands/model_settings.h"
#include "mlt/util/error.h"
#include "mlt/util/shell.h"
#include "remote_scripts.h"

namespace mlt {

namespace {

std::string joined(const std::vector<std::string>& words) {
    std::string text;
    for (const auto& word : words) text += (text.empty() ? "" : " ") + word;
    return text;
}

// One branch of _mlt_words: KEY prints WORDS (none: no branch).
void add_branch(std::string& out, const std::string& key, const std::vector<std::string>& words) {
    if (words.empty()) return;
    out += "  " + shell_quote(key) + ") printf '%s\\n' " + shell_quote(joined(words)) + " ;;\n";
}

// _mlt_words KEY (completion_functions.sh says what KEY is): the definitions as one function,
// the same text for both shells.
std::string words_function(const std::vector<CompletionCommand>& commands) {
    std::string out = "_mlt_words() {\n  case $1 in\n";
    for (const CompletionCommand& c : commands) {
        add_branch(out, c.path + "|commands", c.commands);
        add_branch(out, c.path + "|options", c.options);
        add_branch(out, c.path + "|valued", c.valued);
        add_branch(out, c.path + "|first",
                   c.models ? std::vector<std::string>{"@models"} : c.first_values);
        for (const auto& [option, values] : c.option_values)
            add_branch(out, c.path + "|" + option, values);
    }
    return out + "  esac\n}\n";
}

// bash: COMP_WORDS up to the word being completed; a leading `~/` of the mlt typed is
// expanded (the shell has not done it in COMP_WORDS).
constexpr const char* kBashDriver = R"sh(_mlt() {
  local cur=${COMP_WORDS[COMP_CWORD]} mlt=${COMP_WORDS[0]}
  [[ $mlt == '~/'* ]] && mlt=$HOME/${mlt#'~/'}
  _mlt_state "${COMP_WORDS[@]:1:COMP_CWORD-1}"
  [[ $cur == = ]] && cur=
  mapfile -t COMPREPLY < <(compgen -W "$(_mlt_candidates "$cur" "$mlt")" -- "$cur")
}
complete -o bashdefault -o default -F _mlt mlt
)sh";

// zsh: from fpath (autoloaded as _mlt) it completes at once; sourced, it registers itself.
constexpr const char* kZshDriver = R"sh(_mlt() {
  local cur=${words[CURRENT]} mlt=${words[1]}
  [[ $mlt == '~/'* ]] && mlt=$HOME/${mlt#'~/'}
  _mlt_state "${(@)words[2,CURRENT-1]}"
  local -a candidates
  candidates=(${=$(_mlt_candidates "$cur" "$mlt")})
  if (( ${#candidates} )); then
    compadd -- "${candidates[@]}"
  else
    _files
  fi
}
if [[ ${zsh_eval_context[-1]} == loadautofunc ]]; then
  _mlt "$@"
else
  compdef _mlt mlt
fi
)sh";

}  // namespace

std::string completion_script(const std::string& shell,
                              const std::vector<CompletionCommand>& commands) {
    const bool bash = shell == "bash";
    if (!bash && shell != "zsh")
        throw usage_error("no completion for the shell '" + shell + "'",
                          "mlt completion writes one for " + joined(kCompletionShells));
    std::string out = bash ? "" : "#compdef mlt\n";
    out += "# mlt's completion for " + shell + ", written by `mlt completion " + shell +
           "` from its command definitions.\n";
    out += bash ? "# Load it: source <(mlt completion bash), e.g. in ~/.bashrc.\n"
                : "# Load it: source <(mlt completion zsh) in ~/.zshrc after compinit, or save it\n"
                  "# as _mlt in a directory of $fpath.\n";
    out += words_function(commands);
    out += scripts::commands_completion_functions;
    out += bash ? kBashDriver : kZshDriver;
    return out;
}

int print_model_names() {
    std::vector<std::string> model_paths;
    try {
        std::vector<SettingsWarning> ignored;  // said by the command itself, not here
        SshSettings settings = load_settings_for_command({}, &ignored);
        model_paths = settings.model_paths;
        wipe_settings_secrets(settings);
    } catch (const Error&) {
        // unreadable settings: the models of the current dir and MLTK_MODEL_PATHS still count
    }
    for (const std::string& name : model_names(model_paths)) std::printf("%s\n", name.c_str());
    return 0;
}

}  // namespace mlt
