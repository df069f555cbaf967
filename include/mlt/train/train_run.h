#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "mlt/job/job.h"
#include "mlt/job/status.h"
#include "mlt/ssh/connection.h"
#include "mlt/train/local_state.h"
#include "mlt/transfer/sync.h"
#include "mlt/util/reporter.h"

namespace mlt {

// Everything a run needs, worked out locally before any remote action: names, where files
// go on both sides, what to upload, the job's wrapper, and what to tell the user.
struct TrainPlan {
    std::string model;       // model name (my_model, my_model-test)
    std::string remote_dir;  // remote working directory (may start with ~)
    // Placeholders filled; relative to remote_dir unless absolute/~. Empty: the one the job
    // recorded (it asked the remote MLTK).
    std::string remote_log_dir;
    std::string archive;        // <model>.mltk.zip, relative to remote_dir
    std::string spec_dir;       // local: where the archive and download_files land
    std::string local_logs;     // local log dir
    std::string local_console;  // local copy of the console log (MLTK's name)
    std::string local_archive;
    std::string local_state_dir;  // local_state_dir(model): which run the console copy is
    bool spec_here = true;        // false: --resume by a NAME whose spec is not here; no uploads
    std::map<std::string, std::vector<UploadItem>> uploads;        // remote base -> files
    WrapperSpec wrapper;                                           // run_id is filled in by the run
    std::vector<std::pair<std::string, std::string>> environment;  // for shutdown_cmds
    bool create_venv = false;                                      // for shutdown_cmds
    bool mltk_train = false;  // train_cmd is MLTK's: its CLI log is collected too
    std::vector<std::string> download_files;
    std::vector<std::string> shutdown_cmds;
    std::string compression = "zstd";
    bool clean = false;
    bool force = false;
    bool resume = false;
    bool no_wait = false;
    int reconnect_timeout_s = 600;  // 0: a lost link ends the run at once
    std::string owner;              // "user@host pid N", recorded in the lock
    std::string resume_line;        // `mlt ssh ... train MODEL --resume`, shell-quoted
    std::string stop_line;          // `mlt ssh ... stop MODEL`
};

// The phases of one run on one node, in order. Each can be entered again, from the remote
// state, after the link was lost inside it (docs/architecture.md).
enum class Phase { connect, lock, clean, upload, start, follow, collect, shutdown, release, done };

// "connecting", "taking the lock", ... "releasing the lock": the words after "while".
const char* describe(Phase phase);

// Time for the reconnect loop: the real clock in mlt, a simulated one in unit tests.
class RunClock {
  public:
    virtual ~RunClock() = default;
    // Seconds on a monotonic clock.
    virtual double now() = 0;
    // Waits `seconds`, or less when a signal arrives (the caller looks at the signals).
    virtual void sleep(double seconds) = 0;
};

// steady_clock, and a sleep that a signal cuts short.
RunClock& real_clock();

// A new run id: the start time (seconds, hex) and 24 random bits, e.g. "673f1c2a-9b3e01".
std::string new_run_id();

// One `train` run on one node: the phases of docs/architecture.md over a Connection, all
// output through a Reporter. A lost link (reset or silent) in any phase is followed by
// reconnecting with capped exponential backoff for plan.reconnect_timeout_s and by entering
// that phase again; the remote state says what is already done.
class TrainRun {
  public:
    TrainRun(Connection& connection, TrainPlan plan, Reporter& reporter, RunClock& clock);

    // Runs every phase and returns the exit code: the training's status (0: success), 130
    // after a Ctrl+C, 143/129 after SIGTERM/SIGHUP. Throws mlt::Error for everything else
    // (exit 3 conflicts, 255 when the link did not come back in time).
    int run();

    // The run's id: new, or the resumed run's.
    const std::string& run_id() const { return run_id_; }
    // The phase reached (Phase::done after a complete run).
    Phase phase() const { return phase_; }
    // How often the link was opened again.
    int reconnects() const { return reconnects_; }

  private:
    // An error that ends the run: thrown past the error handling of drive().
    struct Fatal {
        Error error;
    };
    int drive();
    void step();
    void take_lock();
    void adopt(const JobStatus& job);
    void clean();
    void upload();
    void start();
    void follow();
    void collect();
    void shutdown();
    void release();

    // The link is gone: reconnects (backoff, one line per attempt) or throws (exit 255)
    // once plan_.reconnect_timeout_s has passed.
    void reconnect(const Error& cause);
    // A signal arrived: returns the exit code to leave with, or -1 to go on (Ctrl+C once
    // while the job runs: stop it, then collect).
    int on_signal(const Error& signal);
    int leave(const Error& signal);
    // A phase failed for good: releases a lock that guards nothing yet, or runs
    // shutdown_cmds for a job that has ended. Returns the error to report (with a hint that
    // the job runs on, when it may).
    Error fail_cleanup(const Error& error);
    // Appends this run's record to the local history (`mlt jobs` shows the newest per id).
    void record(const std::string& status, std::optional<int> exit_status);
    // "the remote job of M is STILL RUNNING on H; stop it with: ...; reattach with: ...".
    std::string still_running() const;
    Remote& remote() { return connection_.remote(); }

    Connection& connection_;
    TrainPlan plan_;
    Reporter& reporter_;
    RunClock& clock_;
    LocalConsole console_;
    Phase phase_ = Phase::connect;
    std::string run_id_;
    std::string started_iso_;
    bool lock_held_ = false;       // the lock is this run's (taken or adopted)
    bool job_may_run_ = false;     // the start was sent: a job may exist
    bool stop_requested_ = false;  // Ctrl+C once: stop the job, then collect
    bool stop_sent_ = false;       // the stop command went out: it ends the job without mlt
    bool stop_done_ = false;
    bool interrupted_ = false;
    bool detached_ = false;  // --no-wait returned after the start
    bool shutdown_sent_ = false;
    std::optional<int> exit_status_;
    bool setup_failed_ = false;    // the job ended before its training started
    bool stopped_by_mlt_ = false;  // mlt's stop (a Ctrl+C) sent the signal that ended it
    uint64_t shutdown_offset_ = 0;
    std::optional<JobResult> followed_;  // the result the follow read at the job's end
    bool record_collected_ = false;      // collect() succeeded: the shutdown's start records it
    TransferStats up_, down_;
    int reconnects_ = 0;
    CompressionChoice compression_;  // the remote's compressor, asked once per run
};

// Pulls what a finished (or running, for `download`) job left: the archive when `result`
// names its sha256 (checked before it replaces the local one; never another run's, never
// through a remote symlink), the remote log dir into the local one, and download_files (a
// `from|to` pair naming a remote directory copies the directory). Returns what moved.
TransferStats collect_results(Remote& remote, const TrainPlan& plan, const JobResult& result,
                              const CompressionChoice& compression, Reporter& reporter);

}  // namespace mlt
