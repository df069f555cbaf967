#include "mlt/config/ssh_config.h"

#include <fnmatch.h>
#include <glob.h>
#include <strings.h>

#include <cctype>
#include <fstream>

#include "mlt/util/error.h"
#include "mlt/util/paths.h"

namespace mlt {

namespace {

// OpenSSH's limit; deeper nesting is almost surely a file that includes itself.
constexpr int kMaxIncludeDepth = 16;

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

// Splits a config line as ssh does: the keyword ends at blanks or `=`, then optional blanks,
// one optional `=` and blanks; the arguments are blank-separated, `"` groups words, and a word
// starting with `#` starts a comment. `raw` receives the text after the keyword as written
// (ProxyCommand is taken whole).
std::vector<std::string> words_of(const std::string& line, std::string* raw) {
    std::vector<std::string> words;
    size_t i = line.find_first_not_of(" \t\r");
    if (i == std::string::npos || line[i] == '#') return words;
    const size_t key_end = line.find_first_of(" \t\r=", i);
    words.push_back(line.substr(i, key_end - i));
    if (key_end == std::string::npos) return words;
    i = line.find_first_not_of(" \t\r", key_end);
    if (i != std::string::npos && line[i] == '=') i = line.find_first_not_of(" \t\r", i + 1);
    if (i != std::string::npos) {
        *raw = line.substr(i);
        raw->erase(raw->find_last_not_of(" \t\r") + 1);
    }
    std::string current;
    bool quoted = false, have = false;
    for (; i != std::string::npos && i < line.size(); ++i) {
        const char c = line[i];
        if (c == '"') {
            quoted = !quoted;
            have = true;
        } else if (!quoted && (c == ' ' || c == '\t' || c == '\r')) {
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

// The files an Include argument names: `~` expanded, relative to ~/.ssh, globbed (sorted).
std::vector<std::string> include_paths(const std::string& arg) {
    std::string pattern = expand_user(arg);
    if (pattern.empty() || pattern[0] != '/') pattern = home_dir() + "/.ssh/" + pattern;
    std::vector<std::string> paths;
    glob_t g{};
    if (::glob(pattern.c_str(), 0, nullptr, &g) == 0) {
        for (size_t i = 0; i < g.gl_pathc; ++i) paths.emplace_back(g.gl_pathv[i]);
    }
    ::globfree(&g);
    return paths;
}

class Reader {
  public:
    explicit Reader(SshConfigEntry& out) : out_(out) {}

    // Reads one file; `active` is true until a Host or Match line says otherwise. As in ssh,
    // an Include is read only where it applies, and does not change whether the lines after
    // it apply.
    void read(const std::string& path, int depth) {
        std::ifstream in(path);
        if (!in) return;
        bool active = true;  // lines before the first Host apply to every host
        std::string line;
        for (int n = 1; std::getline(in, line); ++n) {
            std::string raw;
            const auto words = words_of(line, &raw);
            if (words.empty()) continue;
            const std::string keyword = lower(words[0]);
            if (keyword == "host") {
                active = host_matches(words, out_.host());
            } else if (keyword == "match") {
                active = false;  // not evaluated: libssh decides those for the options it reads
            } else if (!active || words.size() < 2) {
                continue;
            } else if (keyword == "include") {
                if (depth >= kMaxIncludeDepth)
                    throw config_error("Include nested deeper than " +
                                           std::to_string(kMaxIncludeDepth) + " levels at " + path +
                                           ":" + std::to_string(n),
                                       "an included file probably includes itself");
                for (size_t w = 1; w < words.size(); ++w)
                    for (const auto& file : include_paths(words[w])) read(file, depth + 1);
            } else {
                SshConfigValue v;
                v.args.assign(words.begin() + 1, words.end());
                v.raw = std::move(raw);
                v.file = path;
                v.line = n;
                v.order = ++order_;
                out_.add(keyword, std::move(v));
            }
        }
    }

  private:
    SshConfigEntry& out_;
    int order_ = 0;
};

}  // namespace

const SshConfigValue* SshConfigEntry::first(std::string_view keyword) const {
    auto it = values_.find(lower(keyword));
    return it == values_.end() || it->second.empty() ? nullptr : &it->second.front();
}

std::optional<std::string> SshConfigEntry::value(std::string_view keyword) const {
    const SshConfigValue* v = first(keyword);
    if (!v) return std::nullopt;
    return v->args.front();
}

std::vector<SshConfigValue> SshConfigEntry::all(std::string_view keyword) const {
    auto it = values_.find(lower(keyword));
    return it == values_.end() ? std::vector<SshConfigValue>{} : it->second;
}

std::string SshConfigEntry::hostname() const {
    auto name = value("HostName");
    if (!name) return host_;
    // HostName knows only these two tokens.
    std::string out;
    for (size_t i = 0; i < name->size(); ++i) {
        if ((*name)[i] == '%' && i + 1 < name->size()) {
            const char t = (*name)[i + 1];
            if (t == 'h') {
                out += host_;
                ++i;
                continue;
            }
            if (t == '%') {
                out += '%';
                ++i;
                continue;
            }
        }
        out += (*name)[i];
    }
    return out;
}

void SshConfigEntry::add(std::string keyword, SshConfigValue value) {
    values_[lower(keyword)].push_back(std::move(value));
}

SshConfigEntry read_ssh_config(const std::string& path, const std::string& host) {
    SshConfigEntry entry(host);
    Reader(entry).read(path, 0);
    return entry;
}

std::optional<std::string> ssh_config_lookup(const std::string& path, const std::string& host,
                                             const std::string& keyword) {
    return read_ssh_config(path, host).value(keyword);
}

}  // namespace mlt
