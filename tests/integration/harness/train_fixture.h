#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "harness/ssh_test.h"
#include "harness/time_factor.h"
#include "harness/train_process.h"

namespace mlt_test {

// Bound for one training run in these tests (the models train for a second or two).
inline const std::chrono::seconds kTrainTimeout = scaled(std::chrono::seconds{60});
// Bound for waiting on a remote effect (a file, a log line, a process going away).
inline const std::chrono::seconds kEffectTimeout = scaled(std::chrono::seconds{20});

// Polls `condition` every 20 ms until it holds (true) or `timeout` passes (false).
bool wait_until(const std::function<bool()>& condition, std::chrono::milliseconds timeout);

// The content of `path`, or "" when it cannot be read.
std::string read_or_empty(const std::string& path);

// True when process `pid` exists and is not a zombie (/proc/<pid>/stat).
bool process_alive(long pid);
// The live (non-zombie) processes of process group `pgid`.
std::vector<long> group_members(long pgid);
// The live processes whose working directory is `dir` or below it, as "pid cmdline".
std::vector<std::string> processes_in(const std::string& dir);
// The same, and the processes whose command line names a path under `dir` (a tool of a
// hostile host that has not reached its `cd` yet).
std::vector<std::string> processes_naming(const std::string& dir);

// The number of lines of `text` that are exactly `line`.
std::size_t count_lines(const std::string& text, const std::string& line);
// The lines of `text` that start with `prefix`.
std::vector<std::string> lines_starting(const std::string& text, const std::string& prefix);

// Success when `text` has each line "epoch i/<epochs> ..." of the example model
// (i = 1..epochs) exactly once and no other line starting with "epoch ".
::testing::AssertionResult each_epoch_once(const std::string& text, int epochs);

// The hex sha256 of a local file (`sha256sum`); "" when it cannot be read.
std::string sha256_of(const std::string& path);

// The top-level members of one JSON object: strings unescaped, other values (numbers,
// true/false/null, arrays, objects) as their JSON text. Empty when `line` is not an object.
using JsonRecord = std::map<std::string, std::string>;
JsonRecord parse_json_record(const std::string& line);

// A fixture for `mlt ssh ... train` and the job commands: SshTest plus a local project dir
// (the model spec's dir), the server trusted in $HOME/.ssh/known_hosts, and every path
// the remote job writes (remote dir, remote log dir, markers) inside the sshd's temp dir.
// TearDown kills whatever a test left running in that dir (remote jobs are detached from
// mlt and from sshd), so no process outlives a test.
class TrainTest : public SshTest {
  protected:
    void SetUp() override;
    void TearDown() override;

    // The local project dir holding the model specs.
    std::string project() const;
    // The remote working dir (sshd().remote_dir()).
    std::string remote() const { return sshd().remote_dir(); }
    // The parent of every remote log dir: remote_log_dir is "<this>/{model}".
    std::string remote_logs_root() const;
    // <remote>/.mlt/<model> and a file in it.
    std::string job_dir(const std::string& model) const;
    std::string job_file(const std::string& model, const std::string& name) const;
    // <home>/.mltk/models/<model>, its console log copy, and <project>/<model>.mltk.zip.
    std::string local_logs(const std::string& model) const;
    std::string local_console(const std::string& model) const;
    std::string local_archive(const std::string& model) const;
    // <home>/.mltk/ssh/history.jsonl.
    std::string history_path() const;

    // Copies examples/basic/logistic_model.py to <project>/<stem>.py.
    void copy_example(const std::string& stem = "logistic_model") const;
    // Writes <project>/<stem>.py with a shell script body (run with `sh {spec}`).
    void write_shell_model(const std::string& stem, const std::string& script) const;
    // Writes <project>/<stem>.ssh.yaml with `yaml` (which starts with "ssh:").
    void write_model_settings(const std::string& stem, const std::string& yaml) const;
    // The `ssh:` lines every test shares: remote_dir, remote_log_dir under the temp dir;
    // with `connection`, also hostname/port/username/key_filename of the test server.
    std::string base_settings(bool connection = true) const;
    // Writes the user settings: base_settings(true) followed by `extra` (indented lines).
    void write_user_settings(const std::string& extra = {}) const;

    // Runs `mlt args...` in the project dir (the environment of env()).
    ProcessResult mlt(const std::vector<std::string>& args,
                      std::chrono::milliseconds timeout = kTrainTimeout) const;
    // Starts `mlt args...` in the project dir in the background.
    std::unique_ptr<BackgroundProcess> start_mlt(const std::vector<std::string>& args) const;

    // The process group id the job's wrapper recorded; 0 when there is none.
    long job_pgid(const std::string& model) const;
    // The recorded exit status of the job; -1 while there is none.
    int job_exit_status(const std::string& model) const;
    // Waits (bounded) until the job of `model` has recorded its exit status.
    ::testing::AssertionResult wait_job_finished(const std::string& model) const;
    // Waits (bounded) until the remote console log of `model` contains `text`.
    ::testing::AssertionResult wait_console(const std::string& model,
                                            const std::string& text) const;
    // Waits (bounded) until no process of group `pgid` is alive.
    ::testing::AssertionResult wait_group_gone(long pgid) const;
    // Waits (bounded) until each pid listed (one per line) in `pid_file` is gone.
    ::testing::AssertionResult wait_pids_gone(const std::string& pid_file) const;
    // Waits (bounded) until no process runs in the remote dir any more.
    ::testing::AssertionResult wait_no_remote_processes() const;

    // The runs of the local history (the newest record per run id, in the order the runs
    // started), as parsed by parse_json_record.
    std::vector<JsonRecord> history() const;
    // "remote .mlt of <model>: <file>=<content>..." for assertion messages.
    std::string job_state(const std::string& model) const;

    // `python3 -m zipfile -t <path>` succeeded (a complete, valid zip).
    ::testing::AssertionResult valid_zip(const std::string& path) const;
    // The member names of a zip (`python3 -m zipfile -l`), as its output text.
    std::string zip_listing(const std::string& path) const;

  private:
    void kill_leftovers() const;
};

}  // namespace mlt_test
