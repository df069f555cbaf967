#pragma once
// The pieces of the job protocol's remote commands that job.cpp and restart.cpp share.

#include <string>

#include "mlt/job/job.h"
#include "mlt/ssh/remote.h"

namespace mlt::job_detail {

// `mlt_st_gone=80 mlt_st_foreign=79 mlt_st_nospace=78`: the exit statuses of the job
// protocol (kDirGoneStatus, ...) as the shell variables the remote scripts exit with.
std::string job_status_variables();

// `cd DIR && ...`: every job command starts in the remote dir.
std::string in_dir(const std::string& remote_dir, const std::string& command);

// `cd DIR && j=.mlt/MODEL && r=RUN` and the run-scoped shell functions (mlt_mine,
// mlt_files_mine, mlt_phase, mlt_foreign, mlt_nospace): the start of every command that
// acts for one run.
std::string run_command(const std::string& remote_dir, const std::string& model,
                        const std::string& run_id, const std::string& body);

// Throws the error a job command's exit status stands for (another run's job dir, a full
// disk, a failure); nothing for status 0.
void check_status(const Remote& remote, const std::string& what, const RemoteOutput& out,
                  const std::string& model, const std::string& run_id);

// The files of a task, as shell words.
struct TaskFiles {
    std::string log, pid, status;
};
TaskFiles task_files(const JobPaths& p, Task task);

// Launches a task's script detached unless its marker exists (created atomically first);
// `fresh` runs after the marker and before the launch, `again` when it existed already.
// Then waits (bounded, 10 s) for the pid file.
std::string launch_once(const std::string& marker, const std::string& script, const TaskFiles& f,
                        const std::string& shell, const std::string& fresh = ":",
                        const std::string& again = ":");

}  // namespace mlt::job_detail
