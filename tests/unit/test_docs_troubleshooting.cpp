// docs/troubleshooting.md has a row for every error and warning a user can meet: the start
// of each message in mlt's sources must appear in it. A new message without a row fails here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "mlt/util/paths.h"

namespace {

namespace fs = std::filesystem;

// Messages that need no row, each with the reason. Keyed by the message start the scan
// finds (see message_start), so that an entry outlives edits elsewhere in its file.
const std::map<std::string, std::string>& allowed() {
    static const std::map<std::string, std::string> kAllowed = {
        // The WHAT of the generic row `WHAT on U@H:P failed (exit N): LAST LINES`.
        {"discarding the old job", "a WHAT of the generic remote-command row"},
        {"reading the job result", "a WHAT of the generic remote-command row"},
        {"reading the shutdown status", "a WHAT of the generic remote-command row"},
        {"reading the checkpoint ledger", "a WHAT of the generic remote-command row"},
        {"ending the checkpoint pull", "a WHAT of the generic remote-command row"},
        {"for download", "a WHAT of the generic remote-command row (packing DIR for download)"},
        {"creating the directories of the upload in", "a WHAT of the generic remote-command row"},
        {"expanding download_files path", "a WHAT of the generic remote-command row"},
        // Progress lines of the job's console log, not trouble.
        {"creating .venv", "console progress line of the job's setup"},
        {"job finished with exit status", "console line at the job's end; the status is mlt's"},
        // The message is the origin plus the host parser's own error; the row quotes it as
        // `ProxyJump at FILE:LINE: ...`, and the scan finds only the hint.
        {"write ProxyJump [user@]host[:port][,...]", "hint of the `ProxyJump at FILE:LINE` row"},
        // The message starts with the spec's path, so the scan finds only the hint; the rows
        // quote `SPEC failed to load through MLTK` and `SPEC did not load through MLTK`.
        {"its last lines are above, -v shows all it printed; fix the spec (mltk ssh train stops "
         "here too), or set spec_loader: literals to read its literal ssh_* values without "
         "running it",
         "hint of the `SPEC ... load through MLTK` rows"},
        // Said by a run-scoped command on the remote; mlt reports it as remote_dir_gone
        // (the row `the remote dir DIR on U@H:P holds no job of M any more`).
        {"the remote dir holds no job of this model any more", "the remote side of a row"},
        {"the remote dir is gone", "the remote side of a row"},
        // Not trouble: what ssh-keygen made, and the program's own description.
        {"private, 0600) and", "ssh-keygen's report of the files it wrote"},
        {"train machine-learning models on remote machines over SSH", "mlt --help's title"},
    };
    return kAllowed;
}

// A source file as code and string literals: comments are dropped, each literal (adjacent
// ones joined, escapes undone, raw strings too) becomes "\x01N\x02" in the code, N its index.
struct Lexed {
    std::string code;
    std::vector<std::string> literals;
};

char unescape(char c) {
    switch (c) {
        case 'n':
            return '\n';
        case 't':
            return '\t';
        default:
            return c;  // \" \' \\ and the rest: the character itself
    }
}

Lexed lex(const std::string& s) {
    Lexed out;
    bool joinable = false;  // the last token was a literal: a next one continues it
    size_t i = 0;
    while (i < s.size()) {
        const char c = s[i];
        if (s.compare(i, 2, "//") == 0) {
            i = s.find('\n', i);
            if (i == std::string::npos) break;
            continue;
        }
        if (s.compare(i, 2, "/*") == 0) {
            const size_t end = s.find("*/", i);
            if (end == std::string::npos) break;
            out.code.append(
                static_cast<size_t>(std::count(s.begin() + static_cast<long>(i),
                                               s.begin() + static_cast<long>(end), '\n')),
                '\n');  // keeps the line numbers
            i = end + 2;
            continue;
        }
        std::string text;
        bool literal = false;
        const bool raw =
            c == 'R' && i + 1 < s.size() && s[i + 1] == '"' &&
            (i == 0 || !(std::isalnum(static_cast<unsigned char>(s[i - 1])) || s[i - 1] == '_'));
        if (raw) {
            const size_t open = s.find('(', i + 2);
            const std::string close = ")" + s.substr(i + 2, open - i - 2) + "\"";
            const size_t end = s.find(close, open);
            text = s.substr(open + 1, end - open - 1);
            i = end + close.size();
            literal = true;
        } else if (c == '"') {
            for (++i; i < s.size() && s[i] != '"'; ++i)
                text += s[i] == '\\' ? unescape(s[++i]) : s[i];
            ++i;
            literal = true;
        } else if (c == '\'' && i + 2 < s.size() &&
                   (s[i + 2] == '\'' ||
                    (s[i + 1] == '\\' && i + 3 < s.size() && s[i + 3] == '\''))) {
            // A character literal ('"', '\''): kept out of the code so that it opens nothing.
            i += s[i + 2] == '\'' ? 3 : 4;
            out.code += "' '";
            joinable = false;
            continue;
        }
        if (literal) {
            if (joinable) {
                out.literals.back() += text;
            } else {
                out.literals.push_back(text);
                out.code += "\x01" + std::to_string(out.literals.size() - 1) + "\x02";
            }
            joinable = true;
            continue;
        }
        if (!std::isspace(static_cast<unsigned char>(c))) joinable = false;
        out.code += c;
        ++i;
    }
    return out;
}

std::string squeeze(const std::string& text) {
    std::string out;
    for (char c : text) {
        if (std::isspace(static_cast<unsigned char>(c))) {
            if (!out.empty() && out.back() != ' ') out += ' ';
        } else {
            out += c;
        }
    }
    return out;
}

// The first fixed part of a message long enough to name it: the text before or between
// placeholders ({} of fmt, %s of printf, $var, ${...} and $(...) of the shell). Empty when
// there is none (a message made of variables only).
std::string message_start(const std::string& message) {
    static const std::regex placeholder(R"(\{\}|%s|%d|\$(\w+|\{[^}]*\}|\([^)]*\))|\n)");
    std::sregex_token_iterator it(message.begin(), message.end(), placeholder, -1);
    for (; it != std::sregex_token_iterator(); ++it) {
        std::string piece = squeeze(*it);
        const auto trim = [](char ch) {
            return std::string(" :;,.()'\"").find(ch) != std::string::npos;
        };
        while (!piece.empty() && trim(piece.front())) piece.erase(0, 1);
        while (!piece.empty() && trim(piece.back())) piece.pop_back();
        if (piece.size() >= 8) return piece;
    }
    return {};
}

struct Message {
    std::string where;  // file:line
    std::string start;
};

std::string line_of(const std::string& file, const Lexed& lexed, size_t code_pos) {
    // The lines of the code up to the hit, plus those inside the literals before it.
    size_t lines = static_cast<size_t>(
        std::count(lexed.code.begin(), lexed.code.begin() + static_cast<long>(code_pos), '\n'));
    for (size_t p = lexed.code.find('\x01'); p != std::string::npos && p < code_pos;
         p = lexed.code.find('\x01', p + 1)) {
        const std::string& lit = lexed.literals[std::stoul(lexed.code.substr(p + 1))];
        lines += static_cast<size_t>(std::count(lit.begin(), lit.end(), '\n'));
    }
    return file + ":" + std::to_string(lines + 1);
}

// Every message start of one source file (or remote script): those of error and warning calls (the
// first literal of the call), the job scripts' own `mlt: ...` lines, and their `echo ... >&2`.
void scan(const fs::path& path, const std::string& name, std::vector<Message>& out) {
    Lexed lexed;
    // A remote script (src/*/sh/*.sh) is all text the shell runs: one literal, no calls.
    if (path.extension() == ".sh")
        lexed.literals.push_back(mlt::read_file(path.string()));
    else
        lexed = lex(mlt::read_file(path.string()));
    static const std::regex call(
        R"((throw\s+[\w:]+|spdlog::(warn|error|critical)|\balert|\bwarn|\bwarning|\b(usage|config|io|remote)_error|\bremote_failure|\brun_or_fail)\s*\()");
    for (std::sregex_iterator it(lexed.code.begin(), lexed.code.end(), call), end; it != end;
         ++it) {
        // The call's text up to its closing parenthesis.
        size_t at = static_cast<size_t>(it->position() + it->length());
        int depth = 1;
        size_t stop = at;
        for (; stop < lexed.code.size() && depth > 0; ++stop) {
            if (lexed.code[stop] == '(') ++depth;
            if (lexed.code[stop] == ')') --depth;
            if (lexed.code[stop] == ';') break;
        }
        for (size_t p = lexed.code.find('\x01', at); p != std::string::npos && p < stop;
             p = lexed.code.find('\x01', p + 1)) {
            const std::string start =
                message_start(lexed.literals[std::stoul(lexed.code.substr(p + 1))]);
            if (start.empty()) continue;
            out.push_back({line_of(name, lexed, static_cast<size_t>(it->position())), start});
            break;
        }
    }
    // Up to the end of the literal's line or a double quote; a single quote may be an
    // apostrophe ("the job's setup"), so only a closing one (then a blank or the end) ends it.
    static const std::regex script_line(R"(mlt: ([^"\n]*))");
    static const std::regex to_stderr(R"re(echo\s+(?:"([^"]*)"|'([^']*)')\s*>&2)re");
    for (const std::string& lit : lexed.literals) {
        for (std::sregex_iterator it(lit.begin(), lit.end(), script_line), end; it != end; ++it) {
            std::string text = (*it)[1];
            const size_t quote = text.find("' ");
            if (quote != std::string::npos) text.erase(quote);
            for (const char* level : {"error: ", "warning: "})
                if (text.rfind(level, 0) == 0) text.erase(0, std::string(level).size());
            const std::string start = message_start(text);
            if (!start.empty()) out.push_back({name + " (mlt: line)", start});
        }
        for (std::sregex_iterator it(lit.begin(), lit.end(), to_stderr), end; it != end; ++it) {
            const std::string start = message_start((*it)[1].matched ? (*it)[1] : (*it)[2]);
            if (!start.empty()) out.push_back({name + " (echo >&2)", start});
        }
    }
}

std::vector<Message> all_messages() {
    std::vector<Message> out;
    const fs::path src = fs::path(MLT_SOURCE_DIR) / "src";
    std::vector<fs::path> files;
    for (const auto& e : fs::recursive_directory_iterator(src))
        if (e.path().extension() == ".cpp" || e.path().extension() == ".h" ||
            e.path().extension() == ".sh")
            files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) scan(f, fs::relative(f, MLT_SOURCE_DIR).generic_string(), out);
    return out;
}

std::string doc_text() {
    std::string doc = mlt::read_file(std::string(MLT_SOURCE_DIR) + "/docs/troubleshooting.md");
    // Table cells escape `|` as `\|`.
    for (size_t p = doc.find("\\|"); p != std::string::npos; p = doc.find("\\|", p))
        doc.erase(p, 1);
    return squeeze(doc);
}

}  // namespace

TEST(TroubleshootingDoc, ScanFindsTheMessagesOfTheSources) {
    // Guards the scan itself: messages of each kind that have rows are found.
    std::set<std::string> starts;
    for (const auto& m : all_messages()) starts.insert(m.start);
    for (const char* known :
         {"key file",                                   // throw key_error(...)
          "not all output was shown: standard output",  // main's fprintf of a warning
          "the job's setup (environment, venv or startup_cmds) failed with exit status",
          "setsid not found (util-linux",  // echo ... >&2 of the start command
          "the lock belongs to run",       // the same in a raw string
          "upload_files: not sending",     // spdlog::warn
          "refusing to remove"})
        EXPECT_TRUE(starts.count(known)) << known;
    EXPECT_GT(starts.size(), 150u);
}

TEST(TroubleshootingDoc, EveryMessageStartHasARow) {
    const std::string doc = doc_text();
    std::set<std::string> used;
    std::string missing;
    for (const auto& m : all_messages()) {
        if (allowed().count(m.start)) {
            used.insert(m.start);
            continue;
        }
        if (doc.find(m.start) == std::string::npos)
            missing += "\n  " + m.where + ": '" + m.start + "'";
    }
    EXPECT_TRUE(missing.empty())
        << "docs/troubleshooting.md lacks a row quoting these message starts (add one: message "
           "start | exit | cause and fix; or, for a message no user needs help with, an entry "
           "with its reason in allowed() of this test):"
        << missing;
    for (const auto& [start, reason] : allowed())
        EXPECT_TRUE(used.count(start))
            << "allowed() names '" << start << "', which no source produces any more: remove it";
}
