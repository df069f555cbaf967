// MLTK's upload/download globs: matching, and expanding against a local directory.

#include <fnmatch.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "internal.h"
#include "mlt/transfer/workspace.h"

namespace mlt {

using namespace transfer_detail;
namespace fs = std::filesystem;

namespace {

constexpr char kWildcards[] = "*?[";

bool has_wildcard(const std::string& segment) {
    return segment.find_first_of(kWildcards) != std::string::npos;
}

// One path segment against one pattern segment. No FNM_PERIOD: `*` matches names starting
// with a dot too. FNM_NOESCAPE: a backslash is an ordinary character, as in MLTK's Python
// globs.
bool segment_match(const std::string& pattern, const std::string& segment) {
    return ::fnmatch(pattern.c_str(), segment.c_str(), FNM_NOESCAPE) == 0;
}

// Adds every file under `dir` (whose path relative to `base` is `rel_dir`) that `keep`
// accepts. Directory symlinks are not entered; file symlinks count as files (upload reads
// through them) unless they lead out of `base`. What `keep` accepts but is_secret_path
// refuses, or links out of `base`, goes to `skipped` instead. `max_depth` < 0: no limit.
template <typename Keep>
void walk(const fs::path& base, const fs::path& dir, const fs::path& rel_dir, int max_depth,
          Keep keep, std::vector<UploadItem>& items, std::vector<std::string>& skipped) {
    std::error_code ec;
    fs::recursive_directory_iterator it(dir, fs::directory_options::none, ec);
    if (ec) throw io_error("cannot read " + dir.string() + ": " + ec.message());
    for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
        if (ec) throw io_error("cannot read " + dir.string() + ": " + ec.message());
        const fs::directory_entry& entry = *it;
        const fs::file_status own = entry.symlink_status(ec);
        if (ec) throw io_error("cannot read " + entry.path().string() + ": " + ec.message());
        if (fs::is_directory(own)) {
            if (max_depth >= 0 && it.depth() >= max_depth) it.disable_recursion_pending();
            continue;
        }
        const fs::path rel = rel_dir / entry.path().lexically_relative(dir);
        if (fs::is_symlink(own)) {
            const fs::file_status target = entry.status(ec);
            if (!fs::is_regular_file(target)) {
                if (fs::is_directory(target))
                    spdlog::debug("not following directory symlink {}", entry.path().string());
                continue;
            }
        } else if (!fs::is_regular_file(own)) {
            continue;
        }
        const std::string rel_str = rel.generic_string();
        if (!keep(rel_str)) continue;
        // The workspace's rules: a wildcard or a directory walk picks up what lies there, so
        // what looks like a secret, or a link to elsewhere, is left for the user to name.
        if (is_secret_path(rel_str, false) || links_outside(base.string(), entry.path().string()))
            skipped.push_back(rel_str);
        else
            items.push_back(UploadItem{entry.path().string(), rel_str});
    }
}

}  // namespace

bool glob_match(const std::string& pattern, const std::string& path) {
    const std::vector<std::string> pat = split_path(pattern);
    const std::vector<std::string> segs = split_path(path);
    // The classic wildcard algorithm one level up: `**` is the star, every other pattern
    // segment consumes exactly one path segment; on a mismatch the last `**` takes one more.
    size_t p = 0, s = 0;
    size_t star = std::string::npos, star_s = 0;
    while (s < segs.size()) {
        if (p < pat.size() && pat[p] == "**") {
            star = p++;
            star_s = s;
        } else if (p < pat.size() && segment_match(pat[p], segs[s])) {
            ++p;
            ++s;
        } else if (star != std::string::npos) {
            p = star + 1;
            s = ++star_s;
        } else {
            return false;
        }
    }
    while (p < pat.size() && pat[p] == "**") ++p;
    return p == pat.size();
}

namespace {

// The end of the `[...]` class that starts at `open` in a segment, as fnmatch reads it (a `]`
// right after `[`, `[!` or `[^` is a member, `[:name:]` and the like are whole); npos when
// it is not closed (then the `[` is an ordinary character).
size_t class_end(const std::string& seg, size_t open) {
    size_t j = open + 1;
    if (j < seg.size() && (seg[j] == '!' || seg[j] == '^')) ++j;
    if (j < seg.size() && seg[j] == ']') ++j;
    while (j < seg.size() && seg[j] != ']') {
        if (seg[j] == '[' && j + 1 < seg.size() && std::strchr(":.=", seg[j + 1])) {
            const size_t close = seg.find(std::string(1, seg[j + 1]) + "]", j + 2);
            if (close == std::string::npos) return std::string::npos;
            j = close + 2;
            continue;
        }
        ++j;
    }
    return j < seg.size() ? j : std::string::npos;
}

// One pattern segment (not `**`) as an ERE that never matches a `/`.
std::string segment_regex(const std::string& seg) {
    std::string r;
    for (size_t i = 0; i < seg.size(); ++i) {
        const char c = seg[i];
        const size_t end = c == '[' ? class_end(seg, i) : std::string::npos;
        if (c == '*') {
            r += "[^/]*";
        } else if (c == '?') {
            r += "[^/]";
        } else if (end != std::string::npos) {
            std::string body = seg.substr(i + 1, end - i - 1);
            const bool negated = body[0] == '!' || body[0] == '^';
            if (negated) body.erase(0, 1);
            // A leading `]` must stay first in the class; `/` goes after it.
            if (negated)
                r += body[0] == ']' ? "[^]/" + body.substr(1) + "]" : "[^/" + body + "]";
            else
                r += "[" + body + "]";
            i = end;
        } else if (std::strchr(".[]^$+?(){}|*\\", c)) {
            r += '\\';
            r += c;
        } else {
            r += c;
        }
    }
    return r;
}

}  // namespace

std::string glob_find_regex(const std::string& pattern) {
    const std::vector<std::string> pat = split_path(pattern);
    std::string r = "\\./";
    for (size_t i = 0; i < pat.size(); ++i) {
        const bool last = i + 1 == pat.size();
        if (pat[i] != "**") {
            r += segment_regex(pat[i]) + (last ? "" : "/");
        } else if (!last) {
            r += "([^/]+/)*";  // no segment, or some, each with its slash
        } else if (r.back() == '/' && r != "\\./") {
            r.pop_back();  // `a/**`: `a` itself, or `a` and some segments below it
            r += "(/[^/]+)*";
        } else {
            r += "[^/]+(/[^/]+)*";  // the pattern ends in `**` after nothing or a `**`
        }
    }
    return r;
}

std::vector<UploadItem> expand_local_glob(const std::string& base_dir, const std::string& pattern,
                                          std::vector<std::string>* skipped) {
    if (pattern.empty() || pattern[0] == '/' || has_dotdot(pattern))
        throw usage_error(
            "upload pattern '" + pattern + "' must be relative to " + base_dir + " without '..'",
            "write 'from|to' for a file outside it");
    const std::vector<std::string> parts = split_path(pattern);
    size_t literal = 0;
    while (literal < parts.size() && !has_wildcard(parts[literal])) ++literal;
    const bool wild = literal < parts.size();

    // The literal part of the pattern is looked up component by component, so that a
    // directory symlink on the way never leads the walk out of base_dir.
    fs::path start(base_dir);
    fs::path rel;
    std::error_code ec;
    std::vector<UploadItem> items;
    for (size_t i = 0; i < literal; ++i) {
        start /= parts[i];
        rel /= parts[i];
        const fs::file_status own = fs::symlink_status(start, ec);
        if (!fs::exists(own)) return items;
        const bool last = !wild && i + 1 == literal;
        if (fs::is_symlink(own)) {
            if (last && fs::is_regular_file(fs::status(start, ec)))
                items.push_back(UploadItem{start.string(), rel.generic_string()});
            else
                spdlog::warn("not following symlink {} (upload pattern '{}')", start.string(),
                             pattern);
            return items;
        }
        if (last && fs::is_regular_file(own)) {
            items.push_back(UploadItem{start.string(), rel.generic_string()});
            return items;
        }
        if (!fs::is_directory(own)) return items;
    }
    // base_dir itself may be a symlink: it is the user's choice, not the pattern's.
    if (literal == 0 && !fs::is_directory(start, ec)) return items;

    std::vector<std::string> left_out;
    if (!wild) {
        walk(
            base_dir, start, rel, -1, [](const std::string&) { return true; }, items, left_out);
    } else {
        // Without `**`, nothing deeper than the pattern can match: skip those subtrees.
        const bool deep = std::find(parts.begin() + static_cast<std::ptrdiff_t>(literal),
                                    parts.end(), "**") != parts.end();
        const int max_depth = deep ? -1 : static_cast<int>(parts.size() - literal) - 1;
        walk(
            base_dir, start, rel, max_depth,
            [&](const std::string& p) { return glob_match(pattern, p); }, items, left_out);
    }
    std::sort(items.begin(), items.end(), [](const UploadItem& a, const UploadItem& b) {
        return a.remote_path < b.remote_path;
    });
    std::sort(left_out.begin(), left_out.end());
    if (skipped) skipped->insert(skipped->end(), left_out.begin(), left_out.end());
    return items;
}

}  // namespace mlt
