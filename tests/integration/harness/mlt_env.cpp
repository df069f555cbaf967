#include "harness/mlt_env.h"

#include <unistd.h>

#include <cstdlib>
#include <sstream>

#include "harness/files.h"
#include "mlt/util/shell.h"

namespace mlt_test {

namespace {

// The first executable `name` in the `:`-separated `path`, or "".
std::string find_in_path(const std::string& name, const std::string& path) {
    std::stringstream dirs(path);
    std::string dir;
    while (std::getline(dirs, dir, ':')) {
        const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
        if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    }
    return {};
}

// Puts a `python3` first on PATH that runs this machine's python3 with -S: no site-packages,
// so an MLTK installed here is never the local MLTK of mlt's `spec_loader` (auto by default),
// and every test sees the same thing: no MLTK, unless the test puts the stand-in MLTK
// (tests/integration/mltk_standin) on PYTHONPATH, which -S leaves in effect. Without a
// python3 here, PATH stays as it is (mlt then finds none and reads the spec's literals).
void shield_python(const std::string& home, std::map<std::string, std::string>& vars) {
    const std::string python = find_in_path("python3", vars["PATH"]);
    if (python.empty()) return;
    const std::string dir = home + "/.mlt-test-python";
    make_dir(dir, 0700);
    write_file(dir + "/python3", "#!/bin/sh\nexec " + mlt::shell_quote(python) + " -S \"$@\"\n",
               0700);
    vars["PATH"] = dir + ":" + vars["PATH"];
}

}  // namespace

std::string mlt_binary() {
    return MLT_BINARY;
}

std::string MltEnv::binary() const {
    return vars_.count("MLT_TEST_HOLD") ? MLT_HOLD_BINARY : mlt_binary();
}

MltEnv::MltEnv(std::string home) : home_(std::move(home)) {
    make_dir(home_, 0755);
    make_dir(ssh_dir(), 0700);
    vars_["HOME"] = home_;
    vars_["MLTK_CACHE_DIR"] = home_ + "/.mltk";
    vars_["LANG"] = "C";
    if (const char* path = std::getenv("PATH")) vars_["PATH"] = path;
    // A sanitizer build's mlt reports as the suite asks (scripts/test.sh: to files).
    for (const char* name : {"ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS", "TSAN_OPTIONS"})
        if (const char* value = std::getenv(name)) vars_[name] = value;
    shield_python(home_, vars_);
}

std::vector<std::string> MltEnv::vars() const {
    std::vector<std::string> env;
    for (const auto& [name, value] : vars_) env.push_back(name + "=" + value);
    return env;
}

void MltEnv::write_settings(const std::string& yaml) const {
    make_dir(home_ + "/.mltk", 0755);
    write_file(settings_path(), yaml, 0644);
}

ProcessResult MltEnv::run_mlt(const std::vector<std::string>& args,
                              std::chrono::milliseconds timeout,
                              const std::string& stdin_text) const {
    std::vector<std::string> argv = {binary()};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_process(argv, vars(), timeout, stdin_text);
}

PtyResult MltEnv::run_mlt_in_pty(const std::vector<std::string>& args,
                                 const std::vector<ScriptStep>& script,
                                 std::chrono::milliseconds timeout) const {
    std::vector<std::string> argv = {binary()};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<std::string> env = vars();
    env.push_back("TERM=dumb");
    return run_in_pty(argv, env, timeout, script);
}

ProcessResult MltEnv::run(const std::vector<std::string>& argv,
                          std::chrono::milliseconds timeout) const {
    return run_process(argv, vars(), timeout);
}

std::string describe(const ProcessResult& result) {
    return "exit code " + std::to_string(result.exit_code) +
           (result.timed_out ? " (timed out)" : "") + "\n--- stdout ---\n" + result.out +
           "\n--- stderr ---\n" + result.err + "\n--------------";
}

std::string describe(const PtyResult& result) {
    return "exit code " + std::to_string(result.exit_code) +
           (result.timed_out ? " (timed out)" : "") + ", script steps done " +
           std::to_string(result.steps_done) + "\n--- terminal ---\n" + result.output +
           "\n----------------";
}

}  // namespace mlt_test
