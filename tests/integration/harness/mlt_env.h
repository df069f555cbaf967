#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "harness/process.h"
#include "harness/time_factor.h"

namespace mlt_test {

// Bound for one mlt run in the tests.
inline const std::chrono::seconds kMltTimeout = scaled(std::chrono::seconds{30});

// The absolute path of the mlt binary under test (MLT_BINARY from CMake).
std::string mlt_binary();

// The environment mlt runs with in a test: HOME=<home> (so the settings file is
// <home>/.mltk/user_settings.yaml), MLTK_CACHE_DIR=<home>/.mltk, PATH of this process (with
// <home>/.mlt-test-python first: a python3 that sees no site-packages, hence no MLTK unless a
// test puts the stand-in on PYTHONPATH), LANG=C, the sanitizer options (ASAN_OPTIONS,
// UBSAN_OPTIONS, LSAN_OPTIONS, TSAN_OPTIONS) of this process when set, and nothing else (so no
// SSH_AUTH_SOCK: no agent). Variables can be added.
class MltEnv {
  public:
    explicit MltEnv(std::string home);

    // Sets (or replaces) one variable.
    void set(const std::string& name, const std::string& value) { vars_[name] = value; }
    // Removes one variable.
    void unset(const std::string& name) { vars_.erase(name); }
    // The variables as "NAME=value" strings.
    std::vector<std::string> vars() const;
    // The binary to run: mlt, or mlt_hold (mlt with the test observer that reads
    // MLT_TEST_HOLD) while that variable is set.
    std::string binary() const;

    // The HOME of the runs.
    const std::string& home() const { return home_; }
    // $HOME/.ssh (the constructor creates it, 0700).
    std::string ssh_dir() const { return home_ + "/.ssh"; }
    // The settings file mlt reads: the default one under HOME (MLTK_USER_SETTINGS_PATH is not
    // set, and must name an existing file when a test sets it); not created.
    std::string settings_path() const { return home_ + "/.mltk/user_settings.yaml"; }
    // Writes the settings file (creating $HOME/.mltk) with `yaml`.
    void write_settings(const std::string& yaml) const;

    // Runs `mlt args...` with this environment, no terminal and `stdin_text` on stdin.
    ProcessResult run_mlt(const std::vector<std::string>& args,
                          std::chrono::milliseconds timeout = kMltTimeout,
                          const std::string& stdin_text = {}) const;
    // Runs `mlt args...` on a pseudo-terminal (TERM=dumb added) playing `script`.
    PtyResult run_mlt_in_pty(const std::vector<std::string>& args,
                             const std::vector<ScriptStep>& script,
                             std::chrono::milliseconds timeout = kMltTimeout) const;
    // Runs any program (e.g. ssh, ssh-keygen) with this environment.
    ProcessResult run(const std::vector<std::string>& argv,
                      std::chrono::milliseconds timeout = kMltTimeout) const;

  private:
    std::string home_;
    std::map<std::string, std::string> vars_;
};

// A readable summary of a run for assertion messages: exit code, stdout and stderr.
std::string describe(const ProcessResult& result);
// The same for a pty run.
std::string describe(const PtyResult& result);

}  // namespace mlt_test
