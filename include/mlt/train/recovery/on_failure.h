#pragma once

// What a failed or lost attempt means, by `watch.on_failure` (docs/usage.md, "When an attempt
// fails"): the first rule whose regex is found in one of the attempt's last console lines.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "mlt/config/settings.h"

namespace mlt {

// How many of an attempt's last lines the rules are checked against.
constexpr size_t kFailureLines = 50;

// A rule that matched: which (1-based, among the rules in effect), what it says, and the line.
struct FailureVerdict {
    FailureAction then = FailureAction::no_restart;
    int rule = 0;
    bool builtin = false;
    std::string regex;
    std::string line;  // as the host wrote it; describe() makes it printable
    // "watch.on_failure rule #2 'Xid' (exclude_host) matched the line '...'", or "the default
    // watch.on_failure rule '...' (...) matched ...".
    std::string describe() const;
};

// The settings' rules, then default_failure_rules() unless turned off.
std::vector<FailureRule> failure_rules_in_effect(const SshSettings& settings);

// The last `n` lines of the newest attempt in a console log (what follows its last
// `==== mlt: attempt ` marker line), read from the file's last 64 KiB, a line of more than
// 2 KiB cut to its first and last KiB (joined by " ... "); a carriage return ends a line too
// (a progress bar's updates). Empty when the file cannot be read.
std::vector<std::string> attempt_last_lines(const std::string& console_path,
                                            size_t n = kFailureLines);

// The first rule (in order) whose regex is found in one of `lines`, with the last such line;
// nullopt when none matches. With `lost` (the job's processes or its host went without an exit
// status), the default no_restart rules do not apply: a job that trained on may have printed
// a caught out-of-memory error, and a preemption is no failure of its own.
std::optional<FailureVerdict> judge_failure(const std::vector<FailureRule>& rules,
                                            const std::vector<std::string>& lines,
                                            bool lost = false);

}  // namespace mlt
