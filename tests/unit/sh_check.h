#pragma once
// Runs remote sh text locally for the tests of the remote scripts: under dash and BusyBox's sh
// (the two small shells a host may have as sh), and through shellcheck. All three come from
// Debian's packages (scripts/install-deps.sh); a missing one fails the test that needs it.

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "mlt/util/process.h"

namespace mlt::sh_check {

// The shells every remote script is run under: argv before the script's file.
inline const std::vector<std::vector<std::string>>& shells() {
    static const std::vector<std::vector<std::string>> all{{"dash"}, {"busybox", "sh"}};
    return all;
}

inline std::string shell_name(const std::vector<std::string>& shell) {
    std::string name;
    for (const std::string& word : shell) name += (name.empty() ? "" : " ") + word;
    return name;
}

// A file holding `text`, removed with the object.
class ScriptFile {
  public:
    explicit ScriptFile(const std::string& text) {
        std::string pattern =
            (std::filesystem::temp_directory_path() / "mlt-sh-check-XXXXXX").string();
        const int fd = ::mkstemp(pattern.data());
        EXPECT_GE(fd, 0);
        if (fd >= 0) ::close(fd);
        path_ = pattern;
        std::ofstream(path_, std::ios::binary) << text;
    }
    ~ScriptFile() { std::filesystem::remove(path_); }
    ScriptFile(const ScriptFile&) = delete;
    ScriptFile& operator=(const ScriptFile&) = delete;
    const std::string& path() const { return path_; }

  private:
    std::string path_;
};

// What one run printed (stdout and stderr, one line each) and its status.
struct Run {
    int status = -1;
    std::string output;
};

// Runs `argv` (bounded: 20 s) and collects its lines; a program that cannot start fails the
// calling test.
inline Run run(const std::vector<std::string>& argv) {
    Run r;
    const ChildResult child = run_child(argv, std::chrono::seconds(20),
                                        [&](const std::string& line) { r.output += line + "\n"; });
    EXPECT_TRUE(child.started) << argv.front() << " is not installed (scripts/install-deps.sh)";
    EXPECT_FALSE(child.timed_out) << argv.front() << " did not end within 20 s";
    r.status = child.exit_code;
    return r;
}

// `text` run by `shell` with the arguments `args` (as $1, ...), in the current directory.
inline Run run_script(const std::vector<std::string>& shell, const std::string& text,
                      const std::vector<std::string>& args = {}) {
    ScriptFile file(text);
    std::vector<std::string> argv = shell;
    argv.push_back(file.path());
    argv.insert(argv.end(), args.begin(), args.end());
    return run(argv);
}

// `shell -n`: the text parses. Returns the shell's complaint, "" when it parses.
inline std::string syntax_errors(const std::vector<std::string>& shell, const std::string& text) {
    ScriptFile file(text);
    std::vector<std::string> argv = shell;
    argv.push_back("-n");
    argv.push_back(file.path());
    const Run r = run(argv);
    return r.status == 0 ? "" : r.output + "(status " + std::to_string(r.status) + ")";
}

// shellcheck's findings on `text` as POSIX sh (`shellcheck -s sh`); "" when it finds none.
// `exclude`: codes it may not report for this text (each with its reason at the caller).
inline std::string shellcheck(const std::string& text, const std::string& exclude = "") {
    ScriptFile file(text);
    std::vector<std::string> argv{"shellcheck", "-s", "sh", "-f", "gcc"};
    if (!exclude.empty()) argv.push_back("--exclude=" + exclude);
    argv.push_back(file.path());
    const Run r = run(argv);
    return r.status == 0 ? "" : r.output;
}

// shellcheck's findings on each of `texts` (name, text) in one run (each run costs a fraction
// of a second), as lines "NAME:LINE:COL: ..."; "" when it finds none. `exclude` as above.
inline std::string shellcheck_all(const std::vector<std::pair<std::string, std::string>>& texts,
                                  const std::string& exclude = "") {
    std::vector<std::unique_ptr<ScriptFile>> files;
    std::vector<std::string> argv{"shellcheck", "-s", "sh", "-f", "gcc"};
    if (!exclude.empty()) argv.push_back("--exclude=" + exclude);
    for (const auto& [name, text] : texts) {
        files.push_back(std::make_unique<ScriptFile>(text));
        argv.push_back(files.back()->path());
    }
    const Run r = run(argv);
    if (r.status == 0) return "";
    std::string named = r.output;
    for (size_t i = 0; i < texts.size(); ++i) {
        const std::string& path = files[i]->path();
        for (size_t at = named.find(path); at != std::string::npos; at = named.find(path, at))
            named.replace(at, path.size(), texts[i].first);
    }
    return named;
}

}  // namespace mlt::sh_check
