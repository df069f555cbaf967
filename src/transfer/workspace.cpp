// The workspace to upload: its files, less the ignored, the secret and links out of it.

#include "mlt/transfer/workspace.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "mlt/util/error.h"

namespace fs = std::filesystem;

namespace mlt {

namespace {

std::string basename_of(const std::string& path) {
    auto slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string read_if_exists(const fs::path& path) {
    std::ifstream in(path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// Why the walk does not send `path` ("" when it does, as far as the name goes).
std::string left_out_reason(const std::string& path, bool is_dir, const IgnoreRules& rules) {
    if (is_secret_path(path, is_dir)) return "looks like a secret: never synced";
    if (is_never_synced(path, is_dir)) return "version control or mlt's state: never synced";
    return rules.ignored_by(path, is_dir);
}

void walk(const fs::path& root, const std::string& rel, const IgnoreRules& rules,
          std::vector<UploadItem>& out, std::vector<LeftOutFile>* left_out) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(root / rel, ec)) {
        const std::string name = entry.path().filename().string();
        const std::string path = rel.empty() ? name : rel + "/" + name;
        // symlink_status: a link to a directory is not entered (it may leave the workspace).
        const bool is_dir = entry.symlink_status(ec).type() == fs::file_type::directory;
        if (std::string why = left_out_reason(path, is_dir, rules); !why.empty()) {
            if (left_out) left_out->push_back({is_dir ? path + "/" : path, std::move(why)});
            continue;
        }
        if (is_dir) {
            walk(root, path, rules, out, left_out);
        } else if (links_outside(root.string(), entry.path().string())) {
            // A link out of the workspace (say to ~/.ssh/id_rsa) would send that file.
            spdlog::warn(
                "workspace: not sending {}: it links outside the workspace or to a "
                "secret",
                path);
            if (left_out) left_out->push_back({path, "links outside the workspace or to a secret"});
        } else if (entry.is_regular_file(ec)) {
            out.push_back({(root / path).string(), path});
        }
    }
    if (ec)
        throw io_error("cannot read the workspace directory " + (root / rel).string() + ": " +
                       ec.message());
}

}  // namespace

void IgnoreRules::add(const std::string& text, const std::string& source) {
    std::istringstream lines(text);
    std::string line;
    while (std::getline(lines, line)) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        while (!line.empty() && (line.back() == ' ' || line.back() == '\t')) line.pop_back();
        if (line.empty() || line[0] == '#') continue;
        Rule rule;
        rule.text = line;
        rule.source = source;
        if (line[0] == '!') {
            rule.negate = true;
            line.erase(0, 1);
        } else if (line[0] == '\\') {
            line.erase(0, 1);  // "\#file", "\!file": literal first character
        }
        if (!line.empty() && line.back() == '/') {
            rule.dir_only = true;
            line.pop_back();
        }
        if (!line.empty() && line[0] == '/') {
            rule.anchored = true;
            line.erase(0, 1);
        } else if (line.find('/') != std::string::npos) {
            rule.anchored = true;
        }
        if (line.empty()) continue;
        rule.pattern = line;
        rules_.push_back(rule);
    }
}

const IgnoreRules::Rule* IgnoreRules::deciding_rule(const std::string& path, bool is_dir) const {
    const Rule* last = nullptr;
    const std::string name = basename_of(path);
    for (const auto& rule : rules_) {
        if (rule.dir_only && !is_dir) continue;
        const bool match =
            rule.anchored ? glob_match(rule.pattern, path) : glob_match(rule.pattern, name);
        if (match) last = &rule;
    }
    return last;
}

bool IgnoreRules::ignored(const std::string& path, bool is_dir) const {
    const Rule* rule = deciding_rule(path, is_dir);
    return rule && !rule->negate;
}

std::string IgnoreRules::ignored_by(const std::string& path, bool is_dir) const {
    const Rule* rule = deciding_rule(path, is_dir);
    if (!rule || rule->negate) return {};
    return "ignored by " + (rule->source.empty() ? std::string("a rule") : rule->source) + ": " +
           rule->text;
}

bool is_secret_path(const std::string& path, bool is_dir) {
    // Every directory on the way, then the name itself.
    std::size_t start = 0;
    for (std::size_t slash; (slash = path.find('/', start)) != std::string::npos; start = slash + 1)
        if (path.compare(start, slash - start, ".ssh") == 0) return true;
    const std::string name = path.substr(start);
    if (is_dir) return name == ".ssh";
    return name == ".env" || name.rfind(".env.", 0) == 0 || name.rfind("id_", 0) == 0 ||
           name == ".netrc" || glob_match("*.pem", name) || glob_match("*.key", name);
}

bool links_outside(const std::string& root, const std::string& path) {
    std::error_code ec;
    if (!fs::is_symlink(fs::symlink_status(path, ec))) return false;
    const fs::path target = fs::canonical(path, ec);
    if (ec) return true;
    const std::string base = fs::canonical(root, ec).string();
    if (ec) return true;
    // The root itself may be `/`: its canonical form already ends in the separator.
    const std::string prefix = base.back() == '/' ? base : base + "/";
    if (target.string().rfind(prefix, 0) != 0) return true;
    return is_secret_path(target.string().substr(prefix.size()), fs::is_directory(target, ec));
}

bool is_never_synced(const std::string& path, bool is_dir) {
    const std::string name = basename_of(path);
    if (is_dir && (name == ".git" || name == ".mlt")) return true;
    return is_secret_path(path, is_dir);
}

std::vector<UploadItem> collect_workspace(const std::string& root,
                                          std::vector<LeftOutFile>* left_out) {
    if (!fs::is_directory(root))
        throw usage_error("workspace " + root + " is not a directory",
                          "check --workspace / ssh.workspace");
    IgnoreRules rules;
    rules.add(read_if_exists(fs::path(root) / ".gitignore"), ".gitignore");
    rules.add(read_if_exists(fs::path(root) / ".mltignore"), ".mltignore");  // later rules win
    std::vector<UploadItem> items;
    walk(fs::path(root), "", rules, items, left_out);
    std::sort(items.begin(), items.end(), [](const UploadItem& a, const UploadItem& b) {
        return a.remote_path < b.remote_path;
    });
    return items;
}

}  // namespace mlt
