#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mlt/ssh/remote.h"

namespace mlt {

// The state of one model's job as its `.mlt/<model>/` directory shows it
// (docs/remote-protocol.md).
enum class JobState {
    uploading,  // lock taken by a new run that is still sending its files
    starting,   // the run is starting its job; no process group recorded yet
    running,    // the recorded process group is alive
    finished,   // exit_status was written, results not collected yet (lock held)
    collected,  // finished and collected (the lock is released, or only shutdown is left)
    lost,       // a process group was recorded, is gone, and left no exit status (locked or not)
    aborted,    // the lock was released before the run's job started (a failed upload)
};

// The host's guard of a running job with a deadline or a silence rule.
enum class GuardState {
    none,     // no duty, or the job does not run
    running,  // its process lives
    gone,     // its process is gone (killed): nothing guards the job; --resume starts it again
};

struct JobStatus {
    std::string model;
    JobState state = JobState::starting;
    long pgid = 0;                   // 0: none recorded
    long started = 0;                // remote epoch seconds; 0: unknown
    long remote_now = 0;             // remote clock when queried
    std::optional<int> exit_status;  // when finished
    bool locked = false;             // the job lock is held
    std::string run_id;              // the run the job dir belongs to ("" for old layouts)
    std::string phase;               // the phase the lock records ("" without a lock)
    bool clean = false;              // the run was started with --clean
    int attempt = 1;                 // the run's attempt (2 on: restarts of a lost job)
    // Where the run went after this host was lost, as the lock says (an mlt that reached the
    // host again marked it: "HOST as attempt N"); empty: it did not move.
    std::string moved_to;
    long logged = 0;  // remote epoch seconds of the console log's last change; 0: unknown
    // What the host's guard enforces (the lock's deadline=, limit=, silent=; 0/empty: none),
    // whether it runs while the job does, and why it stopped the job (guard.stop).
    long deadline = 0;  // remote epoch seconds
    std::string limit;
    long silent_s = 0;
    GuardState guard = GuardState::none;
    std::string guard_stop;
    long idle_s = 0;     // the lock's idle= (watch.idle_gpu_minutes); 0: none
    std::string sample;  // the guard's last sample of the host ("mlt-sample ..."), if any
    int rules = 0;       // the watch.stop_when rules the host decides
    // The guard's notifications (notify.log): whether it sent any, the tries sent and failed.
    bool notifies = false;
    int notify_sent = 0;
    int notify_failed = 0;
};

// The state a job's files show: lock, the phase it records, the recorded process group and
// whether it is alive, and the exit status.
JobState job_state(bool locked, const std::string& phase, long pgid, bool alive,
                   bool has_exit_status);

// Throws mlt::Error (usage) unless `name` is a valid model name: letters, digits, `.`, `_`,
// `-`, not starting with `.` or `-` (it becomes a remote directory name).
void validate_model_name(const std::string& name);

// Reads every model's job under `<remote_dir>/.mlt/` in one round trip (one model's:
// JobDir::query_jobs). A missing remote dir or `.mlt` means no jobs. Throws mlt::Error on
// transport failure.
std::vector<JobStatus> query_jobs(Remote& remote, const std::string& remote_dir);

// An exit status as a sentence's end: "exit status 3", or for 129..159, as the remote shell
// reports a process a signal killed, "exit status 137 (killed by SIGKILL)" (the signal
// numbers of Linux, where the jobs run). A SIGKILL gets the hint "out of memory? see dmesg",
// unless `by_mlt_stop`: mlt's own stop sent it ("sent by mlt's stop").
std::string describe_exit_status(int status, bool by_mlt_stop = false);

// An exit status as a job file records it: a plain decimal 0..INT_MAX, else nullopt (a
// half-written or foreign file is no status, never 0).
std::optional<int> recorded_status(std::string_view text);

// "running", "finished", ...
const char* to_string(JobState state);

// A human table of `jobs` (or a "no job" line naming the remote dir and host).
std::string format_jobs(const std::vector<JobStatus>& jobs, const std::string& remote_dir,
                        const std::string& host);

// One node of a multi-node run as `status` shows it: its jobs, or why none could be read.
struct NodeJobs {
    std::string host;  // as the node's connection names it
    std::vector<JobStatus> jobs;
    std::string problem;  // the error that kept the jobs from being read; empty: read
};

// One table for every node, a row per node and job, rank first (a node without a job has a
// row that says "none", an unreachable node one that says why).
std::string format_node_jobs(const std::vector<NodeJobs>& nodes);

}  // namespace mlt
