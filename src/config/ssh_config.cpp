#include "mlt/config/ssh_config.h"

#include <fnmatch.h>
#include <strings.h>

#include <fstream>
#include <sstream>
#include <vector>

namespace mlt {

namespace {

// Splits a config line into words; `Key=Value` counts as two words, quotes group words.
std::vector<std::string> words_of(const std::string& line) {
    std::vector<std::string> words;
    std::string current;
    bool quoted = false, have = false;
    for (size_t i = 0; i < line.size(); ++i) {
        char c = line[i];
        if (c == '"') {
            quoted = !quoted;
            have = true;
        } else if (!quoted && (c == ' ' || c == '\t' || (c == '=' && words.empty()))) {
            if (have) words.push_back(current);
            current.clear();
            have = false;
        } else if (!quoted && c == '#' && !have) {
            break;
        } else {
            current += c;
            have = true;
        }
    }
    if (have) words.push_back(current);
    return words;
}

// OpenSSH Host matching: some pattern matches and no negated pattern does.
bool host_matches(const std::vector<std::string>& patterns, const std::string& host) {
    bool matched = false;
    for (size_t i = 1; i < patterns.size(); ++i) {
        const std::string& p = patterns[i];
        const bool negated = !p.empty() && p[0] == '!';
        const char* pattern = p.c_str() + (negated ? 1 : 0);
        if (::fnmatch(pattern, host.c_str(), FNM_CASEFOLD) == 0) {
            if (negated) return false;
            matched = true;
        }
    }
    return matched;
}

}  // namespace

std::optional<std::string> ssh_config_lookup(const std::string& path, const std::string& host,
                                             const std::string& keyword) {
    std::ifstream in(path);
    if (!in) return std::nullopt;
    bool active = true;  // lines before the first Host apply to every host
    std::string line;
    while (std::getline(in, line)) {
        auto words = words_of(line);
        if (words.empty()) continue;
        if (::strcasecmp(words[0].c_str(), "Host") == 0) {
            active = host_matches(words, host);
        } else if (::strcasecmp(words[0].c_str(), "Match") == 0) {
            active = false;  // not evaluated: libssh decides those for the options it reads
        } else if (active && words.size() >= 2 && ::strcasecmp(words[0].c_str(), keyword.c_str()) == 0) {
            return words[1];
        }
    }
    return std::nullopt;
}

}  // namespace mlt
