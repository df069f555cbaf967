#pragma once
// The pieces every remote command of the job layer is made of: values as quoted variable
// assignments, then the texts of scripts from src/job/sh/ (remote_scripts.h), never a value
// spliced into a script's text.

#include <string>
#include <string_view>

#include "mlt/job/job.h"
#include "mlt/ssh/remote.h"
#include "remote_scripts.h"

namespace mlt::job_detail {

// A remote command being assembled: each value is assigned (quoted) before the scripts that
// read it, then the scripts follow in order.
class ShellCommand {
  public:
    // `name=VALUE`, the value quoted (shell_quote).
    ShellCommand& set(std::string_view name, std::string_view value);
    // `name=VALUE` for a remote path of the settings (shell_quote_path: `~` and `$NAME` expand
    // on the remote, as the assignment runs).
    ShellCommand& path(std::string_view name, std::string_view remote_path);
    // `name=N`.
    ShellCommand& number(std::string_view name, long long value);
    // `name=1`, or `name=` when off.
    ShellCommand& flag(std::string_view name, bool on);
    // The text of a script (its comments stripped already, as embedded).
    ShellCommand& add(std::string_view script);
    const std::string& text() const { return text_; }

  private:
    std::string text_;
};

// A command in the remote dir (enter.sh), outside a run.
ShellCommand remote_dir_command(const std::string& remote_dir);

// A command on a model's job dir outside a run: remote_dir_command with `j`, the job dir
// relative to the remote dir.
ShellCommand job_dir_command(const std::string& remote_dir, const std::string& model);

// The start of every command that acts for one run: `j`, `r` (the run id) and the exit
// statuses of the job protocol as the C++ constants say (mlt_st_gone, mlt_st_foreign,
// mlt_st_nospace); in the remote dir (enter_run.sh: kDirGoneStatus when it is gone; with
// `create_dir`, created first), and the run-scoped shell functions (run_functions.sh:
// mlt_mine, mlt_files_mine, mlt_phase, mlt_foreign, mlt_nospace).
ShellCommand run_command(const std::string& remote_dir, const std::string& model,
                         const std::string& run_id, bool create_dir = false);

// Throws the error a job command's exit status stands for (another run's job dir, a full
// disk, a failure); nothing for status 0.
void check_status(const Remote& remote, const std::string& what, const RemoteOutput& out,
                  const std::string& model, const std::string& run_id);

// Runs `command` (with `input` on its stdin), then check_status; returns what it printed.
RemoteOutput run_checked(Remote& remote, const ShellCommand& command, const std::string& what,
                         const std::string& model, const std::string& run_id,
                         std::string_view input = {});

// Runs `command` (outside a run); throws remote_failure(`what`, `hint`) unless it exits 0.
RemoteOutput run_or_fail(Remote& remote, const ShellCommand& command, const std::string& what,
                         const std::string& hint = "run with -v for details");

// Whether tickets.sh said "claimed" (a start sent ahead claimed the start) in `out`.
bool said_claimed(const std::string& out);

// The files of a task, relative to the remote dir.
struct TaskFiles {
    std::string log, pid, status;
};
TaskFiles task_files(const JobPaths& p, Task task);

// The result in result.sh's tagged lines (other lines are skipped).
JobResult parse_job_result(std::string_view text);

// The host's guard (guard.sh with the libraries it needs), as `sh -c` runs it.
std::string guard_script();

// The batches of the user's commands that the wrappers write (scripts.cpp): the job's
// (batch.sh) and that of shutdown_cmds (shutdown.batch.sh).
std::string make_user_batch(const WrapperSpec& spec);
std::string make_shutdown_batch(const ShutdownSpec& spec);

}  // namespace mlt::job_detail
