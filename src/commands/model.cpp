// MODEL to a spec: where NAME.py is looked for (MLTK's order), a spec path, the test model.
#include "mlt/commands/model.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <set>
#include <utility>

#include "mlt/job/status.h"
#include "mlt/util/error.h"
#include "mlt/util/paths.h"
#include "mlt/util/reporter.h"

namespace fs = std::filesystem;

namespace mlt {

namespace {

constexpr char kTestSuffix[] = "-test";
// Bounds of one recursive search dir: a model_paths entry like `~` must not walk for ever.
constexpr std::size_t kMaxDirsPerRoot = 20000;
constexpr int kMaxDepth = 32;

bool ends_with_test(const std::string& s) {
    const std::size_t n = sizeof kTestSuffix - 1;
    return s.size() > n && s.compare(s.size() - n, n, kTestSuffix) == 0;
}

ModelRef from_path(const fs::path& path, const std::string& name) {
    ModelRef ref;
    std::error_code ec;
    fs::path abs = fs::absolute(path, ec);
    ref.spec_path = abs.lexically_normal().string();
    ref.spec_dir = abs.lexically_normal().parent_path().string();
    ref.spec_file = abs.filename().string();
    ref.name = name;
    validate_model_name(ref.name);
    return ref;
}

// MLTK walks every subdirectory. These never hold a model spec of the user but can be huge
// (or loop), so they are skipped: hidden ones (.git, .venv, .cache), Python's caches and
// installed packages, node's packages, and any virtual environment (it has pyvenv.cfg).
bool skipped_dir(const fs::path& dir) {
    const std::string name = dir.filename().string();
    if (name.empty() || name[0] == '.' || name == "__pycache__" || name == "node_modules" ||
        name == "site-packages" || name == "dist-packages")
        return true;
    std::error_code ec;
    return fs::exists(dir / "pyvenv.cfg", ec);
}

// The identity of a directory through symlinks, so a link loop is walked once.
std::pair<dev_t, ino_t> dir_identity(const fs::path& dir) {
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0) return {0, 0};
    return {st.st_dev, st.st_ino};
}

struct Matches {
    std::vector<std::string> paths;  // in walk order
    bool truncated = false;          // the walk stopped at kMaxDirsPerRoot / kMaxDepth
};

// Calls `visit` on `dir` and, when recursive, on each directory below it: depth first, each
// directory before its subdirectories, subdirectories in name order. That is the order of
// MLTK's os.walk, with the one thing os.walk leaves to the file system (the order of
// siblings) made fixed. Symlinked directories are followed once. Stops when `visit` returns
// false; returns true when the walk stopped at kMaxDirsPerRoot / kMaxDepth.
bool walk_search_dir(const ModelSearchDir& dir, const std::function<bool(const fs::path&)>& visit) {
    bool truncated = false;
    std::set<std::pair<dev_t, ino_t>> seen;
    std::vector<std::pair<fs::path, int>> stack{{fs::path(dir.path), 0}};
    std::size_t visited = 0;
    while (!stack.empty()) {
        auto [current, depth] = std::move(stack.back());
        stack.pop_back();
        if (!seen.insert(dir_identity(current)).second) continue;
        if (++visited > kMaxDirsPerRoot) return true;
        if (!visit(current) || !dir.recursive) break;
        if (depth >= kMaxDepth) {
            truncated = true;
            continue;
        }
        std::error_code ec;
        std::vector<fs::path> subdirs;
        // An unreadable directory is skipped, as os.walk does.
        for (fs::directory_iterator it(current, fs::directory_options::skip_permission_denied, ec),
             end;
             !ec && it != end; it.increment(ec)) {
            std::error_code type_ec;
            if (it->is_directory(type_ec) && !skipped_dir(it->path()))
                subdirs.push_back(it->path());
        }
        std::sort(subdirs.rbegin(), subdirs.rend());  // popped in name order
        for (auto& s : subdirs) stack.emplace_back(std::move(s), depth + 1);
    }
    return truncated;
}

// Looks for `file` in `dir` (and below it when recursive) in walk_search_dir's order; stops
// after `limit` matches.
Matches find_spec(const ModelSearchDir& dir, const std::string& file, std::size_t limit) {
    Matches out;
    out.truncated = walk_search_dir(dir, [&](const fs::path& current) {
        std::error_code ec;
        const fs::path candidate = current / file;
        if (fs::is_regular_file(candidate, ec)) out.paths.push_back(candidate.string());
        return out.paths.size() < limit;
    });
    return out;
}

// The directory as MLTK's fullpath() makes it: `~` expanded, absolute, normalized.
std::string full_dir(const std::string& path) {
    std::error_code ec;
    fs::path abs = fs::absolute(expand_user(path), ec);
    std::string s = (ec ? fs::path(path) : abs).lexically_normal().string();
    while (s.size() > 1 && s.back() == '/') s.pop_back();
    return s;
}

std::string join(const std::vector<std::string>& items) {
    std::string out;
    for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
    return out;
}

}  // namespace

bool is_spec_path(const std::string& arg) {
    return arg.find('/') != std::string::npos ||
           (arg.size() > 3 && arg.compare(arg.size() - 3, 3, ".py") == 0);
}

std::vector<ModelSearchDir> model_search_dirs(const std::vector<std::string>& model_paths) {
    std::error_code ec;
    const fs::path cwd_path = fs::current_path(ec);
    const std::string cwd = ec ? std::string() : full_dir(cwd_path.string());
    std::vector<std::string> entries(model_paths.begin(), model_paths.end());
    const std::size_t cwd_at = entries.size();
    entries.push_back(cwd);
    if (const char* env = std::getenv("MLTK_MODEL_PATHS"); env && *env) {
        const std::string all = env;
        for (std::size_t start = 0; start <= all.size();) {
            std::size_t colon = all.find(':', start);
            entries.push_back(all.substr(start, colon - start));
            if (colon == std::string::npos) break;
            start = colon + 1;
        }
    }
    std::vector<ModelSearchDir> dirs;
    std::set<std::string> seen;
    for (std::size_t i = 0; i < entries.size(); ++i) {
        if (entries[i].empty()) continue;  // no cwd, or an empty MLTK_MODEL_PATHS entry
        const std::string path = full_dir(entries[i]);
        if (!seen.insert(path).second) continue;
        // MLTK never recurses into the current directory, however it is named.
        dirs.push_back({path, i != cwd_at && path != cwd});
    }
    return dirs;
}

ModelRef resolve_model(const std::string& argument, const std::vector<std::string>& model_paths,
                       bool test, bool spec_optional) {
    if (argument.empty()) throw usage_error("no model given", "mlt ssh ... train MODEL");
    // An archive is a training's result: sent and "trained", it would train nothing.
    const std::string archive = ".mltk.zip";
    if (argument.size() > archive.size() &&
        argument.compare(argument.size() - archive.size(), archive.size(), archive) == 0)
        throw usage_error("MODEL " + argument + " is a model archive, not a model specification",
                          "give the model's spec (NAME.py) or its NAME");
    if (is_spec_path(argument)) {
        fs::path path = expand_user(argument);
        if (!fs::is_regular_file(path))
            throw usage_error("model specification " + argument + " not found",
                              "check the path, or give the model name");
        std::string name = path.stem().string();
        if (test && !ends_with_test(name)) name += kTestSuffix;
        return from_path(path, name);
    }

    // As MLTK: `NAME-test` is always the test model of NAME.py, whether or not --test is given.
    std::string stem = argument;
    if (ends_with_test(stem)) {
        stem.resize(stem.size() - (sizeof kTestSuffix - 1));
        test = true;
    }
    const std::string name = test ? stem + kTestSuffix : stem;
    validate_model_name(name);
    const std::string file = stem + ".py";
    const std::vector<ModelSearchDir> dirs = model_search_dirs(model_paths);
    std::vector<std::string> searched;
    for (std::size_t i = 0; i < dirs.size(); ++i) {
        const ModelSearchDir& dir = dirs[i];
        // Up to 3 matches: the first is used, the others are named in a warning.
        Matches m = find_spec(dir, file, 3);
        if (m.paths.empty()) {
            std::error_code ec;
            std::string where = dir.path + (dir.recursive ? " (and below)" : "");
            if (!fs::is_directory(dir.path, ec)) where += " (missing)";
            if (m.truncated)
                where += " (stopped after " + std::to_string(kMaxDirsPerRoot) + " directories)";
            searched.push_back(where);
            continue;
        }
        // MLTK takes the first match silently. Two specs of one name are likely a copy the
        // user forgot, so the run goes on with the first (MLTK's choice) and says which. A
        // later directory is only looked at when that costs one stat (the current directory).
        std::vector<std::string> others(m.paths.begin() + 1, m.paths.end());
        for (std::size_t j = i + 1; j < dirs.size(); ++j) {
            std::error_code ec;
            const fs::path p = fs::path(dirs[j].path) / file;
            if (!dirs[j].recursive && fs::is_regular_file(p, ec)) others.push_back(p.string());
        }
        if (!others.empty())
            reporter().warning("model " + name + ": using " + m.paths.front() + "; also found " +
                               join(others) + " (give the spec path to use another)");
        return from_path(m.paths.front(), name);
    }
    if (spec_optional) {
        ModelRef ref;
        ref.name = name;
        return ref;
    }
    throw usage_error(
        "model '" + argument + "' not found (looked for " + file + " in " + join(searched) + ")",
        "give the spec path, or add its directory to model_paths or MLTK_MODEL_PATHS");
}

std::vector<std::string> model_names(const std::vector<std::string>& model_paths) {
    std::set<std::string> names;
    for (const ModelSearchDir& dir : model_search_dirs(model_paths))
        walk_search_dir(dir, [&names](const fs::path& current) {
            std::error_code ec;
            for (fs::directory_iterator it(current, ec), end; !ec && it != end; it.increment(ec)) {
                std::error_code type_ec;
                const fs::path& file = it->path();
                if (file.extension() != ".py" || !it->is_regular_file(type_ec)) continue;
                try {
                    validate_model_name(file.stem().string());
                    names.insert(file.stem().string());
                } catch (const Error&) {
                    // not a name MODEL could take (a space, a quote): not offered
                }
            }
            return true;
        });
    return {names.begin(), names.end()};
}

std::string local_log_dir(const std::string& model) {
    return mltk_dir() + "/models/" + model;
}

}  // namespace mlt
