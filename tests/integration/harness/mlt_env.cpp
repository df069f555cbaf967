#include "harness/mlt_env.h"

#include <cstdlib>

#include "harness/files.h"

namespace mlt_test {

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
    for (const char* name : {"ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"})
        if (const char* value = std::getenv(name)) vars_[name] = value;
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
