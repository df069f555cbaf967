#pragma once
// The corpus of watch.stop_when decisions (tests/data/stop_rules_corpus.txt, whose head says
// its format), read for the tests of the host's rule engine, and the decisions std::regex
// ECMAScript makes on it.

#include <gtest/gtest.h>

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "mlt/config/settings.h"

namespace mlt::test {

struct CorpusRule {
    std::string id;
    StopRule rule;
};

struct CorpusLine {
    std::string text;
    std::string end;  // "\n", "\r", or "" (the log's last line, not yet complete)
    std::set<std::string> fires;
    int source_line = 0;  // in the corpus file
};

struct CorpusLog {
    std::string name;
    std::vector<CorpusLine> lines;

    // The console log's bytes.
    std::string bytes() const {
        std::string out;
        for (const CorpusLine& line : lines) out += line.text + line.end;
        return out;
    }
    // The offset just after each line's end.
    std::vector<size_t> ends() const {
        std::vector<size_t> out;
        size_t at = 0;
        for (const CorpusLine& line : lines)
            out.push_back(at += line.text.size() + line.end.size());
        return out;
    }
};

struct Corpus {
    std::vector<CorpusRule> rules;
    std::vector<CorpusLog> logs;
};

inline StopRule regex_rule(const std::string& regex) {
    StopRule rule;
    rule.regex = regex;
    return rule;
}

inline StopRule plateau_rule(const std::string& regex, int patience, bool maximize = false) {
    StopRule rule;
    rule.regex = regex;
    rule.plateau = true;
    rule.patience = patience;
    rule.maximize = maximize;
    return rule;
}

// A line's TEXT with its escapes undone (\t, \\, \xHH); its end from a trailing \r or \c.
inline CorpusLine corpus_line(std::string escaped) {
    CorpusLine out;
    out.end = "\n";
    if (escaped.size() >= 2 && escaped[escaped.size() - 2] == '\\' &&
        (escaped.back() == 'r' || escaped.back() == 'c')) {
        out.end = escaped.back() == 'r' ? "\r" : "";
        escaped.resize(escaped.size() - 2);
    }
    for (size_t i = 0; i < escaped.size(); ++i) {
        if (escaped[i] != '\\' || i + 1 >= escaped.size()) {
            out.text += escaped[i];
        } else if (escaped[i + 1] == 't') {
            out.text += '\t';
            ++i;
        } else if (escaped[i + 1] == 'x' && i + 3 < escaped.size()) {
            out.text += static_cast<char>(std::stoi(escaped.substr(i + 2, 2), nullptr, 16));
            i += 3;
        } else {
            out.text += escaped[i + 1];
            ++i;
        }
    }
    return out;
}

inline void read_corpus_entry(Corpus& corpus, const std::string& line, int number) {
    std::istringstream words(line);
    std::string kind, id;
    words >> kind;
    if (kind == "rule" || kind == "plateau") {
        CorpusRule rule;
        words >> rule.id;
        if (kind == "plateau") {
            std::string mode;
            words >> mode >> rule.rule.patience;
            rule.rule.plateau = true;
            rule.rule.maximize = mode == "max";
        }
        words >> std::ws;
        std::getline(words, rule.rule.regex);
        corpus.rules.push_back(rule);
    } else if (kind == "log") {
        corpus.logs.push_back(CorpusLog{});
        words >> corpus.logs.back().name;
    } else if (const size_t bar = line.find('|');
               bar != std::string::npos && !corpus.logs.empty()) {
        CorpusLine entry = corpus_line(line.substr(bar + 1));
        std::istringstream ids(line.substr(0, bar));
        for (std::string id_of; std::getline(ids, id_of, ',');) entry.fires.insert(id_of);
        entry.source_line = number;
        corpus.logs.back().lines.push_back(entry);
    } else {
        ADD_FAILURE() << "stop_rules_corpus.txt:" << number << ": not an entry: " << line;
    }
}

// The corpus file, read; a malformed entry fails the calling test.
inline Corpus read_corpus() {
    Corpus corpus;
    std::ifstream in(std::string(MLT_SOURCE_DIR) + "/tests/data/stop_rules_corpus.txt",
                     std::ios::binary);
    EXPECT_TRUE(in) << "tests/data/stop_rules_corpus.txt";
    int number = 0;
    for (std::string line; std::getline(in, line);) {
        ++number;
        if (line.empty() || line[0] == '#') continue;
        read_corpus_entry(corpus, line, number);
    }
    return corpus;
}

// The value of a plateau rule's group text as docs/usage.md defines it: a decimal number
// read from its start (after spaces), or none.
inline std::optional<double> plateau_value(const std::string& text) {
    static const std::regex number("^[-+]?([0-9]+\\.?[0-9]*|\\.[0-9]+)([eE][-+]?[0-9]+)?");
    size_t start = 0;
    while (start < text.size() && std::isspace(static_cast<unsigned char>(text[start]))) ++start;
    std::smatch m;
    const std::string rest = text.substr(start);
    if (!std::regex_search(rest, m, number)) return std::nullopt;
    return std::strtod(m.str(0).c_str(), nullptr);
}

// The lines (indexes) of `log` on which `rule` fires by std::regex ECMAScript on the rule as
// written, fed alone and going on after it fired; a plateau rule's value is what its first
// group captures.
inline std::set<size_t> ecmascript_fires(const StopRule& rule, const CorpusLog& log) {
    const std::regex re(rule.regex, std::regex::ECMAScript);
    std::set<size_t> out;
    std::optional<double> best;
    int count = 0;
    for (size_t i = 0; i < log.lines.size(); ++i) {
        const CorpusLine& line = log.lines[i];
        std::smatch m;
        if (line.end.empty() || line.text.empty() || !std::regex_search(line.text, m, re)) continue;
        if (!rule.plateau) {
            out.insert(i);
            continue;
        }
        const auto value = plateau_value(m.str(1));
        if (!value) continue;
        if (!best || (rule.maximize ? *value > *best : *value < *best)) {
            best = value;
            count = 0;
        } else if (++count >= rule.patience) {
            out.insert(i);
        }
    }
    return out;
}

// The lines (indexes) of `log` whose IDS name `id`.
inline std::set<size_t> corpus_fires(const std::string& id, const CorpusLog& log) {
    std::set<size_t> out;
    for (size_t i = 0; i < log.lines.size(); ++i)
        if (log.lines[i].fires.count(id)) out.insert(i);
    return out;
}

}  // namespace mlt::test
