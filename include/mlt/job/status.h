#pragma once

#include <optional>
#include <string>
#include <vector>

#include "mlt/ssh/remote.h"

namespace mlt {

// The state of one model's job as its `.mlt/<model>/` directory shows it
// (docs/remote-protocol.md).
enum class JobState {
    starting,  // lock taken, no process group recorded yet
    running,   // the recorded process group is alive
    finished,  // exit_status was written, results not collected yet (lock held)
    collected, // finished and collected: the lock is released
    lost,      // a process group was recorded, is gone, and left no exit status
};

struct JobStatus {
    std::string model;
    JobState state = JobState::starting;
    long pgid = 0;                   // 0: none recorded
    long started = 0;                // remote epoch seconds; 0: unknown
    long remote_now = 0;             // remote clock when queried
    std::optional<int> exit_status;  // when finished
    bool locked = false;             // the job lock is held
};

// Throws mlt::Error (usage) unless `name` is a valid model name: letters, digits, `.`, `_`,
// `-`, not starting with `.` or `-` (it becomes a remote directory name).
void validate_model_name(const std::string& name);

// Reads the jobs under `<remote_dir>/.mlt/` (all, or only `model`) in one round trip.
// A missing remote dir or `.mlt` means no jobs. Throws mlt::Error on transport failure.
std::vector<JobStatus> query_jobs(Remote& remote, const std::string& remote_dir,
                                  const std::string& model = {});

// "running", "finished", ...
const char* to_string(JobState state);

// A human table of `jobs` (or a "no job" line naming the remote dir and host).
std::string format_jobs(const std::vector<JobStatus>& jobs, const std::string& remote_dir,
                        const std::string& host);

}  // namespace mlt
