#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "mlt/ssh/remote.h"

namespace mlt {

// Files of one model's job, relative to the remote dir (docs/remote-protocol.md).
struct JobPaths {
    explicit JobPaths(const std::string& model);
    std::string dir;  // .mlt/<model>
    std::string lock, run_sh, pid, cmd, console_log, exit_status, sha256;
};

// What the wrapper script of a job does, in order.
struct WrapperSpec {
    std::string model;
    std::string spec_file;  // uploaded spec, relative to the remote dir
    std::string log_dir;    // remote log dir (may start with ~)
    std::string archive;    // relative to the remote dir
    bool clean = false;
    bool verbose = false;
    // Exported in double quotes: `$VAR` in a value expands on the remote, as in MLTK.
    std::vector<std::pair<std::string, std::string>> environment;
    // Exported literally (node variables).
    std::vector<std::pair<std::string, std::string>> fixed_environment;
    bool create_venv = false;
    std::vector<std::string> venv_packages;
    std::vector<std::string> startup_cmds;
    std::string train_cmd;                // a shell command line, placeholders already filled
    std::vector<std::string> train_args;  // appended quoted
};

// The POSIX sh wrapper for a job: records its process group, exports the variables, runs
// startup and training with all output in the console log, then writes sha256 and
// exit_status atomically.
std::string make_wrapper_script(const WrapperSpec& spec);

// `export K="V"` lines for settings environment entries (values expand `$VAR` remotely).
std::string export_environment(const std::vector<std::pair<std::string, std::string>>& env);

// Fills `{model}`, `{spec}`, `{log_dir}`, `{archive}`, `{remote_dir}` in a settings command
// with shell-quoted values. Unknown `{...}` stay as they are.
std::string fill_placeholders(const std::string& command,
                              const std::vector<std::pair<std::string, std::string>>& values);

// Creates `<dir>/lock` atomically holding `owner` and the start time. Returns false when a
// lock exists (another job, running or uncollected). Throws on transport errors.
bool acquire_lock(Remote& remote, const std::string& remote_dir, const std::string& model,
                  const std::string& owner);

// Removes the lock (the other job files stay for inspection).
void release_lock(Remote& remote, const std::string& remote_dir, const std::string& model);

// Uploads the wrapper, clears the previous run's state and console log, starts the wrapper
// detached in its own session, and waits (bounded) until it has recorded its process group.
// Returns that id. Throws when it does not start.
long start_job(Remote& remote, const std::string& remote_dir, const std::string& model,
               const std::string& script, const std::string& command_text);

// Stops a job's process group: TERM, then KILL after `grace_s` seconds; records exit status
// 143/137 when the wrapper could not. Returns true when something was running.
bool stop_job(Remote& remote, const std::string& remote_dir, const std::string& model,
              int grace_s);

// Removes every file of a job (for --force on a finished job).
void discard_job(Remote& remote, const std::string& remote_dir, const std::string& model);

// Streams the console log from byte `offset` to `sink` until the job's wrapper has exited
// (follow=true), or just what is there now (follow=false). Returns the new offset.
uint64_t read_console(Remote& remote, const std::string& remote_dir, const std::string& model,
                      uint64_t offset, bool follow, const OutputSink& sink);

// The recorded exit status and archive sha256 of a finished job (-1 / empty if absent).
std::pair<int, std::string> read_job_result(Remote& remote, const std::string& remote_dir,
                                            const std::string& model);

}  // namespace mlt
