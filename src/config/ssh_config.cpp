// The OpenSSH client config read as ssh reads it: Host and Match blocks, Include, the entry
// of one host.
#include "mlt/config/ssh_config.h"

#include <glob.h>
#include <pwd.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <fstream>

#include "mlt/util/error.h"
#include "mlt/util/paths.h"
#include "mlt/util/text.h"

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
        if (wildcard_match(pattern, host, true)) {
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

std::string local_user() {
    if (const passwd* pw = ::getpwuid(::getuid()); pw && pw->pw_name) return pw->pw_name;
    if (const char* u = std::getenv("USER")) return u;
    return {};
}

// Match criteria OpenSSH knows that mlt does not evaluate (they need a command run, the
// network addresses of the connection, or tags).
bool is_unevaluated_criterion(const std::string& c) {
    static const char* const kNames[] = {"exec",    "address",     "localaddress", "localport",
                                         "rdomain", "tagged",      "version",      "sessiontype",
                                         "command", "localnetwork"};
    for (const char* n : kNames)
        if (c == n) return true;
    return false;
}

class Reader {
  public:
    Reader(SshConfigEntry& out, std::string user) : out_(out), user_(std::move(user)) {}

    // Whether some `Match final` asked for a second pass.
    bool wants_final_pass() const { return wants_final_; }

    // Reads one file; `active` is true until a Host or Match line says otherwise. As in ssh,
    // an Include is read only where it applies, and does not change whether the lines after
    // it apply. `final_pass`: the second reading that `Match final` asks for.
    void read(const std::string& path, int depth, bool final_pass) {
        // An Include of a FIFO or device would block or never end: only plain files are read.
        struct stat st {};
        if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return;
        std::ifstream in(path);
        if (!in) return;
        bool active = true;  // lines before the first Host apply to every host
        std::string line;
        for (int n = 1; std::getline(in, line); ++n) {
            std::string raw;
            const auto words = words_of(line, &raw);
            if (words.empty()) continue;
            const std::string keyword = lower(words[0]);
            const std::string where = path + ":" + std::to_string(n);
            if (keyword == "host") {
                active = host_matches(words, out_.host());
            } else if (keyword == "match") {
                active = match_applies(words, where, final_pass);
            } else if (!active || words.size() < 2) {
                continue;
            } else if (keyword == "include") {
                if (depth >= kMaxIncludeDepth)
                    throw config_error("Include nested deeper than " +
                                           std::to_string(kMaxIncludeDepth) + " levels at " + where,
                                       "an included file probably includes itself");
                for (size_t w = 1; w < words.size(); ++w)
                    for (const auto& file : include_paths(words[w]))
                        read(file, depth + 1, final_pass);
            } else {
                SshConfigValue v;
                v.args.assign(words.begin() + 1, words.end());
                v.raw = std::move(raw);
                v.file = path;
                v.line = n;
                v.order = order_ + 1;
                if (out_.add(keyword, std::move(v))) ++order_;
            }
        }
    }

  private:
    // Evaluates a `Match` line as OpenSSH's match_cfg_line does: every criterion must hold.
    bool match_applies(const std::vector<std::string>& words, const std::string& where,
                       bool final_pass) {
        if (words.size() < 2)
            throw config_error("Match without criteria at " + where,
                               "write e.g. `Match host NAME` or `Match all`");
        bool result = true;
        for (size_t i = 1; i < words.size(); ++i) {
            std::string criterion = lower(words[i]);
            const bool negated = !criterion.empty() && criterion[0] == '!';
            if (negated) criterion.erase(0, 1);
            if (criterion == "all") {
                continue;
            } else if (criterion == "canonical" || criterion == "final") {
                if (criterion == "final") wants_final_ = true;
                if (final_pass == negated) result = false;
                continue;
            }
            if (i + 1 >= words.size())
                throw config_error("Match " + criterion + " without a value at " + where,
                                   "write `Match " + criterion + " PATTERN[,PATTERN...]`");
            const std::string& arg = words[++i];
            bool hit = false;
            if (criterion == "host") {
                hit = match_pattern_list(arg, out_.hostname(), true);
            } else if (criterion == "originalhost") {
                hit = match_pattern_list(arg, out_.host(), true);
            } else if (criterion == "user") {
                const std::string user =
                    !user_.empty() ? user_ : out_.value("User").value_or(local_user());
                hit = match_pattern_list(arg, user, false);
            } else if (criterion == "localuser") {
                hit = match_pattern_list(arg, local_user(), false);
            } else if (is_unevaluated_criterion(criterion)) {
                out_.warn("Match " + criterion + " at " + where +
                          " is not evaluated by mlt: the lines of that block are not used");
                return false;
            } else {
                throw config_error("unknown Match criterion '" + words[i - 1] + "' at " + where,
                                   "ssh does not know it either: fix that line");
            }
            if (hit == negated) result = false;
        }
        return result;
    }

    SshConfigEntry& out_;
    std::string user_;
    int order_ = 0;
    bool wants_final_ = false;
};

}  // namespace

bool match_pattern_list(const std::string& list, const std::string& value, bool fold_case) {
    bool matched = false;
    size_t start = 0;
    while (start <= list.size()) {
        size_t comma = list.find(',', start);
        if (comma == std::string::npos) comma = list.size();
        std::string p = list.substr(start, comma - start);
        start = comma + 1;
        if (p.empty()) continue;
        const bool negated = p[0] == '!';
        if (negated) p.erase(0, 1);
        if (wildcard_match(p, value, fold_case)) {
            if (negated) return false;
            matched = true;
        }
    }
    return matched;
}

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

std::vector<std::pair<std::string, const SshConfigValue*>> SshConfigEntry::keywords() const {
    std::vector<std::pair<std::string, const SshConfigValue*>> out;
    for (const auto& [keyword, values] : values_)
        if (!values.empty()) out.emplace_back(keyword, &values.front());
    return out;
}

bool SshConfigEntry::add(std::string keyword, SshConfigValue value) {
    auto& values = values_[lower(keyword)];
    for (const auto& v : values)
        if (v.file == value.file && v.line == value.line) return false;
    values.push_back(std::move(value));
    return true;
}

void SshConfigEntry::warn(std::string text) {
    for (const auto& w : warnings_)
        if (w == text) return;
    warnings_.push_back(std::move(text));
}

SshConfigEntry read_ssh_config(const std::string& path, const std::string& host,
                               const std::string& user) {
    SshConfigEntry entry(host);
    Reader reader(entry, user);
    reader.read(path, 0, false);
    // As ssh: a `Match final` reads the whole file again, where `final` and `canonical`
    // hold; the first value of a keyword still wins.
    if (reader.wants_final_pass()) reader.read(path, 0, true);
    return entry;
}

std::optional<std::string> ssh_config_lookup(const std::string& path, const std::string& host,
                                             const std::string& keyword) {
    return read_ssh_config(path, host).value(keyword);
}

void check_ssh_config_file(const std::string& typed) {
    const std::string path = expand_user(typed);
    const std::string hint = "give -F a readable ssh client config file (text), or leave it out";
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || ::access(path.c_str(), R_OK) != 0)
        throw usage_error("cannot read ssh config " + typed, "check the -F path");
    if (!S_ISREG(st.st_mode))
        throw usage_error("ssh config " + typed + " is not a regular file" +
                              (S_ISDIR(st.st_mode)    ? " (a directory)"
                               : S_ISFIFO(st.st_mode) ? " (a FIFO)"
                                                      : ""),
                          hint);
    if (read_file(path).find('\0') != std::string::npos)
        throw usage_error("ssh config " + typed + " is not a text file (it has NUL bytes)", hint);
}

}  // namespace mlt
