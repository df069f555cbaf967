// The block a run ends with (what happened, where, for how long, at what cost), and MLTK's
// billing reminder in it.
#include "mlt/train/run/run_summary.h"

#include <filesystem>

#include "mlt/transfer/progress.h"
#include "mlt/util/text.h"

namespace fs = std::filesystem;

namespace mlt {

namespace {

// The words of the simple commands of `line` (split at ; & | and newlines), without a
// leading `sudo` or NAME=value.
std::vector<std::vector<std::string>> command_words(const std::string& line) {
    std::vector<std::vector<std::string>> commands(1);
    std::string word;
    const auto end_word = [&] {
        const bool skip = commands.back().empty() &&
                          (word == "sudo" || word == "exec" || word.find('=') != std::string::npos);
        if (!word.empty() && !skip) commands.back().push_back(word);
        word.clear();
    };
    for (char ch : line + "\n") {
        if (ch == ';' || ch == '&' || ch == '|' || ch == '\n') {
            end_word();
            if (!commands.back().empty()) commands.emplace_back();
        } else if (ch == ' ' || ch == '\t') {
            end_word();
        } else {
            word += ch;
        }
    }
    return commands;
}

// "#1 on gpu1 at $1.20/h, 16m00s, lost".
std::string describe_attempt(const AttemptRecord& a) {
    std::string text =
        (a.attempt > 0 ? "#" + std::to_string(a.attempt) : std::string("before the start")) +
        " on " + a.host;
    if (a.price_per_hour > 0) text += " at " + format_usd(a.price_per_hour) + "/h";
    if (a.end) text += ", " + format_duration(*a.end - a.start);
    if (!a.how.empty()) text += ", " + a.how;
    return text;
}

}  // namespace

std::vector<std::string> summary_lines(const RunSummary& s) {
    std::vector<std::string> lines;
    lines.push_back("summary of run " + (s.run_id.empty() ? std::string("-") : s.run_id) + " of " +
                    s.model + ": " + s.status + " (exit " + std::to_string(s.exit_code) + ")");
    if (!s.attempts.empty()) {
        std::string list;
        for (const auto& a : s.attempts) list += (list.empty() ? "" : "; ") + describe_attempt(a);
        lines.push_back("  attempts: " + list);
    }
    if (s.duration_s >= 0)
        lines.push_back("  time: " + format_duration(s.duration_s) + "; cost: " +
                        (s.cost ? format_usd(*s.cost)
                                : std::string("not known (no --price or price_per_hour)")));
    if (!s.gpu_use.empty()) lines.push_back("  GPU use: " + s.gpu_use);
    if (!s.archive.empty()) lines.push_back("  archive: " + s.archive);
    if (!s.logs.empty())
        lines.push_back("  logs: " + s.logs + " (console log: " + s.console + ")");
    else if (!s.console.empty())
        lines.push_back("  console log: " + s.console);
    if (!s.collect_hint.empty()) lines.push_back("  results: " + s.collect_hint);
    if (!s.billing_host.empty())
        lines.push_back("  " + billing_reminder(s.billing_host, s.detached));
    return lines;
}

std::string billing_reminder(const std::string& host, bool detached) {
    return "reminder: the remote machine " + host +
           " may still be billing: " + (detached ? "once the run is collected, " : "") +
           "stop or destroy it when you are done";
}

bool powers_host_off(const std::vector<std::string>& shutdown_cmds) {
    for (const auto& line : shutdown_cmds) {
        for (const auto& w : command_words(line)) {
            if (w.empty()) continue;
            const std::string first = fs::path(w[0]).filename().string();
            const std::string second = w.size() > 1 ? w[1] : "";
            if (first == "shutdown" || first == "poweroff" || first == "halt" ||
                (first == "systemctl" && (second == "poweroff" || second == "halt")) ||
                (first == "vastai" && (second == "stop" || second == "destroy")))
                return true;
        }
    }
    return false;
}

}  // namespace mlt
