// watch.on_failure: the attempt's last lines and the first rule found in them.
#include "mlt/train/recovery/on_failure.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <regex>
#include <string_view>

#include "mlt/util/fd.h"
#include "mlt/util/text.h"

namespace mlt {

namespace {

constexpr off_t kTailBytes = 64 * 1024;
// A long line is judged by its first and last KiB: std::regex recurses per character, and a
// host's 64 KiB line (a progress bar without its ends) must not cost the stack or the time.
constexpr size_t kLineEndBytes = 1024;

std::string line_ends(std::string_view line) {
    if (line.size() <= 2 * kLineEndBytes) return std::string(line);
    return std::string(line.substr(0, kLineEndBytes)) + " ... " +
           std::string(line.substr(line.size() - kLineEndBytes));
}
constexpr std::string_view kAttemptMarker = "==== mlt: attempt ";

std::string read_tail(const std::string& path) {
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
    if (!fd) return {};
    const off_t size = ::lseek(fd.get(), 0, SEEK_END);
    if (size <= 0) return {};
    const off_t from = size > kTailBytes ? size - kTailBytes : 0;
    std::string out(static_cast<size_t>(size - from), '\0');
    const ssize_t n = ::pread(fd.get(), out.data(), out.size(), from);
    out.resize(n > 0 ? static_cast<size_t>(n) : 0);
    // A cut first line is no line of its own.
    if (from > 0) {
        const auto nl = out.find('\n');
        out.erase(0, nl == std::string::npos ? out.size() : nl + 1);
    }
    return out;
}

}  // namespace

std::string FailureVerdict::describe() const {
    const std::string which = builtin ? std::string("the default watch.on_failure rule")
                                      : "watch.on_failure rule #" + std::to_string(rule);
    return which + " '" + printable(regex, 120) + "' (" + failure_action_name(then) +
           ") matched the line '" + printable(line, 200) + "'";
}

std::vector<FailureRule> failure_rules_in_effect(const SshSettings& settings) {
    std::vector<FailureRule> rules = settings.on_failure;
    if (settings.on_failure_defaults)
        rules.insert(rules.end(), default_failure_rules().begin(), default_failure_rules().end());
    return rules;
}

std::vector<std::string> attempt_last_lines(const std::string& console_path, size_t n) {
    std::vector<std::string> lines;
    const std::string text = read_tail(console_path);
    size_t i = 0;
    while (i < text.size()) {
        size_t j = text.find_first_of("\r\n", i);
        if (j == std::string::npos) j = text.size();
        std::string line = line_ends(std::string_view(text).substr(i, j - i));
        i = j + 1;
        if (line.rfind(kAttemptMarker, 0) == 0) {
            lines.clear();  // an earlier attempt's lines are not this one's
            continue;
        }
        if (trim(line).empty()) continue;
        lines.push_back(std::move(line));
    }
    if (lines.size() > n) lines.erase(lines.begin(), lines.end() - static_cast<long>(n));
    return lines;
}

std::optional<FailureVerdict> judge_failure(const std::vector<FailureRule>& rules,
                                            const std::vector<std::string>& lines, bool lost) {
    for (size_t k = 0; k < rules.size(); ++k) {
        if (lost && rules[k].builtin && rules[k].then == FailureAction::no_restart) continue;
        std::regex re;
        try {
            re = std::regex(rules[k].regex, std::regex::ECMAScript);
        } catch (const std::regex_error&) {
            continue;  // checked as the settings were read
        }
        for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
            if (!std::regex_search(*it, re)) continue;
            FailureVerdict v;
            v.then = rules[k].then;
            v.rule = static_cast<int>(k) + 1;
            v.builtin = rules[k].builtin;
            v.regex = rules[k].regex;
            v.line = *it;
            return v;
        }
    }
    return std::nullopt;
}

}  // namespace mlt
