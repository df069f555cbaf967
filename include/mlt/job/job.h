#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "mlt/config/settings.h"
#include "mlt/job/status.h"
#include "mlt/ssh/remote.h"

namespace mlt {

// Files of one model's job, relative to the remote dir (docs/remote-protocol.md).
struct JobPaths {
    explicit JobPaths(const std::string& model);
    std::string dir;  // .mlt/<model>
    std::string lock, run_id, run_sh, cmd, started, pid, console_log, exit_status, sha256;
    std::string shutdown_sh, shutdown_started, shutdown_pid, shutdown_log, shutdown_status;
    std::string batch, shutdown_batch;  // the user's commands, written by the scripts
    std::string log_dir;                // the absolute log dir, once the job knows it
    std::string training;               // marker: the startup commands succeeded
    std::string stopped;                // mlt's stop ended the job: the status it recorded
    std::string disk_full;              // marker: the wrapper found the remote disk full
    // The sha256 of every download_files file as the job left it (docs/remote-protocol.md,
    // "download_files record"): written by the wrapper at the job's end.
    std::string downloads;
    // Files pushed before the start (--restore, a failover): the wrapper moves them into the
    // log dir once it knows it, before the training starts.
    std::string restore;
    std::string ready, go;  // the barrier of a multi-node run (WrapperSpec::gang_barrier)
    // A start sent ahead with the lock (start_job_if_current) may start the job only by
    // renaming its ticket (`start.ticket.<token>`, written by that lock) to start_claimed: a
    // later lock of the run, or void_start_tickets(), removes the tickets first.
    std::string start_tickets;  // the prefix, up to the token
    std::string start_claimed;
    // Locked (flock) by the job's wrapper for as long as it runs, where the host has flock(1):
    // a follow waits on it between its looks, and wakes as the job ends.
    std::string running;
};

// A detached remote task of a run: the training job, or the shutdown_cmds batch. Each has a
// log, a pid file (its process group) and a status file written when it ends.
enum class Task { job, shutdown };

// Where a run stands, as the lock records it (`phase=`). Every phase is written by the mlt
// that holds the lock; "finished" and "collected" only once it has seen them happen.
enum class RunPhase { uploading, starting, running, finished, collected };

// "uploading", "starting", ...
const char* to_string(RunPhase phase);

// What the wrapper script of a job does, in order.
struct WrapperSpec {
    std::string model;
    std::string run_id;     // recorded results are written only while the job dir is this run's
    std::string spec_file;  // uploaded spec, relative to the remote dir
    // Remote log dir the settings name (may start with ~); empty: found on the remote (the
    // remote MLTK's for mltk_train, else ${MLTK_CACHE_DIR:-~/.mltk}/models/<model>).
    std::string log_dir;
    std::string archive;      // relative to the remote dir
    bool mltk_train = false;  // train_cmd is MLTK's `mltk train`
    bool clean = false;
    bool verbose = false;
    // Exported in double quotes: `$VAR` in a value expands on the remote, as in MLTK.
    std::vector<std::pair<std::string, std::string>> environment;
    // Exported literally (node variables).
    std::vector<std::pair<std::string, std::string>> fixed_environment;
    // A node of a multi-node run: NCCL_SOCKET_IFNAME and GLOO_SOCKET_IFNAME are set to the
    // interface of the route to MASTER_ADDR (`ip route get`), unless already set.
    bool node_ifname = false;
    // A node of a multi-node run: once set up (venv, startup_cmds, log dir), the batch creates
    // `ready` in the job dir and waits for `go` before the training starts (the barrier).
    bool gang_barrier = false;
    bool create_venv = false;
    std::vector<std::string> venv_packages;           // pip-installed into a new venv
    std::vector<std::string> venv_fallback_packages;  // tried when those fail (none: none)
    std::vector<std::string> startup_cmds;
    std::string train_cmd;                // a shell command line, placeholders already filled
    std::vector<std::string> train_args;  // appended quoted
    // download_files, for the record of their sha256 that the job writes at its end
    // (JobPaths::downloads): the globs as find regexes (glob_find_regex), and the remote side
    // of each pair as written (`$VAR` and `~` expand on the remote).
    std::vector<std::string> download_regexes;
    std::vector<std::string> download_pairs;
};

// The POSIX sh wrapper for a job: records its process group, exports mlt's variables, then
// runs the user's commands as ONE batch in `bash --login` (sh without bash): the settings'
// environment, the venv, startup_cmds under `set -e`, the log dir (recorded in log_dir) and
// train_cmd, all output in the console log. Then it writes sha256 and exit_status atomically,
// by absolute paths (nothing the batch does changes them), and only while the job dir still
// belongs to its run.
std::string make_wrapper_script(const WrapperSpec& spec);

// What a run's shutdown_cmds need.
struct ShutdownSpec {
    std::string model;
    std::string run_id;
    std::vector<std::pair<std::string, std::string>> environment;
    bool create_venv = false;  // activate <remote_dir>/.venv when it exists
    std::vector<std::string> commands;
    // "vast" or "runpod": after the commands the rented machine stops itself
    // (shutdown_release.sh; the guard's unattended shutdown only). Empty: none.
    std::string release_provider;
    std::string release_id;  // the instance it must be: another is never stopped
};

// The POSIX sh script of a run's shutdown_cmds: one batch in `bash --login` in the remote
// dir, with the settings' environment and the venv, each command in turn without `set -e`;
// a failing one is reported in its log and the others still run. Its status file gets the
// batch's status: the last failure's (0 when all succeeded).
std::string make_shutdown_script(const ShutdownSpec& spec);

// Exports settings environment entries as MLTK's `export K="V"` (values expand `$VAR`,
// `$(...)` remotely). A value the shell cannot expand (`${X:?}`) is named on stderr, then
// `on_failure` (a shell command: `exit 1`, or `:` to go on) runs.
std::string export_environment(const std::vector<std::pair<std::string, std::string>>& env,
                               const std::string& on_failure);

// Replaces `{key}` in a settings command by the shell word given for key (the caller quotes
// it). Unknown `{...}` stay as they are.
std::string fill_placeholders(const std::string& command,
                              const std::vector<std::pair<std::string, std::string>>& words);

// The job dir's `checkpoints` file for the guard (checkpoints.sh): `mlt-checkpoints 1`, then
// pattern=, keep_last=, best_n=, best_mode=, settle=, marker=, metric=, metric_file= (values
// without a line end: the settings refuse them). Throws mlt::Error (config) for a metric the
// host cannot read (the settings checked it already).
std::string checkpoints_file_text(const CheckpointSettings& c);

// One line of the checkpoint ledger (checkpoints.sh): a checkpoint of the log dir as the
// host's guard last saw it. `name` is relative to the log dir.
struct CheckpointEntry {
    std::string name;
    uint64_t size = 0;
    int64_t mtime_s = 0;  // whole seconds
    bool whole = false;   // 1 in the ledger (0: not yet, 2: never)
    std::string metric;   // the metric's value when this version was first seen; empty: none
    bool kept = true;     // false: the guard deleted it (mlt deletes the local copy too)
    std::string line;     // the ledger's line, as read
};
struct CheckpointLedger {
    bool read = false;  // the host had a ledger
    // No ledger yet, but the run has checkpoints: the guard has not looked yet, so none is
    // known to be whole.
    bool not_yet = false;
    std::vector<CheckpointEntry> entries;
    std::unordered_map<std::string, size_t> index;  // entries by name
    std::string text;  // as read, kept locally as <local log dir>/.mlt-checkpoints
    const CheckpointEntry* find(const std::string& name) const;
};

// The ledger's text as the host wrote it, which a hostile host may have forged: a line
// that is not 7 tab-separated fields of the right kinds, or whose name is no relative path
// inside the log dir (absolute, a `..` or empty part, a control byte), or a name listed
// again, is dropped; at most kMaxLedgerEntries lines are read.
inline constexpr size_t kMaxLedgerEntries = 100000;
CheckpointLedger parse_checkpoint_ledger(const std::string& text);

// A new run, as it takes the lock.

struct NewRun {
    std::string run_id;
    std::string owner;         // "user@host pid N", for people
    std::string wrapper;       // run.sh (make_wrapper_script)
    std::string command_text;  // cmd: the training command, for people
    std::string archive;       // the model archive, relative to the remote dir
    bool clean = false;        // recorded, so that a --resume of an upload also cleans
    // The run's attempt that starts here: 1, or the next one when the run continues on this
    // host after its host was lost (recorded as `attempt=N` in the lock; start_job then
    // gives the job MLT_ATTEMPT=N and writes a marker line into the console log).
    int attempt = 1;
    // The ticket of a start sent ahead with this lock (start_job_if_current): the lock
    // removes every older ticket of the run and writes this one. Empty: none.
    std::string start_ticket = {};
    // The host the run continued here from after it was lost there (a failover): recorded
    // as `from=HOST` in the lock, for people and `status`. Empty: none.
    std::string came_from = {};
    // What is left of the run's budget (--max-hours, --max-cost) for this attempt, in seconds,
    // and the limit that sets it ("--max-hours 2"): recorded in the lock as the run's deadline
    // by the host's clock, which the host's guard enforces with or without an mlt attached.
    // None: no limit.
    std::optional<long> budget_seconds = {};
    std::string limit = {};
    // watch.silent_minutes in seconds (0: off) and watch.stop_silent: recorded in the lock as
    // `silent=` and `silent_stop=1`; the host's guard says when the console log got no new
    // output that long, and stops the job with stop_silent.
    long silent_seconds = 0;
    bool stop_silent = false;
    // unattended_shutdown_minutes in seconds (0: off) and the shutdown script
    // (make_shutdown_script) the host's guard runs when no mlt collected the ended job that
    // long: recorded as `unattended=` in the lock and `shutdown.pending.sh`.
    long unattended_seconds = 0;
    std::string shutdown_script = {};
    // watch.idle_gpu_minutes in seconds (0: off), watch.stop_idle and watch.every: recorded as
    // `idle=`, `idle_stop=1`, `idle_below=` and `every=`; the host's guard samples the host
    // every that many seconds into the job dir's `samples` (which a follow relays), says when
    // every GPU was under idle_below % that long, and stops the job with stop_idle.
    long idle_seconds = 0;
    bool stop_idle = false;
    // The watch.stop_when rules the host's guard decides on the console log (host_rules_text;
    // empty: none): written as the job dir's `rules`, with `rules=1` in the lock.
    std::string rules_text = {};
    // checkpoints: the guard's settings file (checkpoints_file_text; empty: off), written as
    // the job dir's `checkpoints`, with `ckpt=1` in the lock.
    std::string checkpoints_text = {};
    // The host's guard sends the run's notifications (`notify=1` in the lock; the targets come
    // after the lock, JobDir::hand_notifications).
    bool notify = false;
    int idle_below_percent = 10;
    int sample_every = 0;
};

// What `stop` found.
enum class StopOutcome {
    none,      // nothing of the job was running
    stopped,   // it ran and was stopped
    finished,  // it had ended, and its results were not collected: the lock stays
};

// What a job left when it ended.
struct JobResult {
    std::string run_id;               // the run the job dir belongs to ("" for old layouts)
    std::optional<int> exit_status;   // none while running, or when it was lost
    std::string sha256;               // of the archive it wrote; empty: it wrote none
    std::string log_dir;              // absolute remote log dir; empty: the job never got there
    bool training_started = false;    // the setup (environment, venv, startup_cmds) succeeded
    std::optional<int> stopped_with;  // mlt's stop ended the job, with this status (143, 137)
    bool disk_full = false;           // the remote disk was full when the job ended, or is now
    bool released = false;            // its follow released the run's lock (ReleaseAtEnd)
    bool lock_gone = false;  // another follow of the run released it: retake_run before more
    // The host's guard stopped the job: why ("limit --max-hours 2"); empty: it did not.
    std::string guard_stop;
    // The host's guard ran shutdown_cmds unattended (shutdown.unattended).
    bool shutdown_unattended = false;
    // The host's guard sends the run's notifications (it holds notify.targets): the job's end
    // and the unattended shutdown are its to tell.
    bool host_notifies = false;
};

// A release of the run's lock that goes with the follow of its job (follow_log), so that a
// run whose logs are home already ends without a round trip after its job. At the job's end,
// after the result, the follow releases the lock (JobResult::released) only if the job
// recorded an exit status, no archive and no log dir but `log_dir`, and that dir's listing
// hashes to `listing_sha256` (remote_tree_digest: the local copy holds every file of it).
struct ReleaseAtEnd {
    std::string log_dir;  // as the collection lists it (remote_log_dir_of)
    std::string listing_sha256;
};

// What one bounded piece of a log follow saw.
struct FollowStep {
    uint64_t offset = 0;  // the new offset: what was there before plus what was received
    bool ended = false;   // the task has ended and everything it wrote was sent
    // Once ended: what the task left, read by the same remote command after the log's last
    // byte. Task::job: what read_job_result reads; Task::shutdown: exit_status is the status
    // of shutdown_cmds (read_shutdown_status). None when the remote did not report it.
    std::optional<JobResult> result;
};

// How long one follow_log command runs at most: in between, the connection is free for
// other commands, and every wait has an end even on a link whose keepalives are off.
constexpr int kFollowSegmentSeconds = 15;

// Exit status of mlt's own job scripts when the job dir belongs to another run.
constexpr int kForeignRunStatus = 79;
// What a run-scoped command exits with when the remote dir, or the model's job dir in it, is
// gone (the host was re-imaged or wiped while it still answers).
constexpr int kDirGoneStatus = 80;
// Exit status of mlt's own job scripts when a write failed on a full remote disk.
constexpr int kNoSpaceStatus = 78;
// Exit status of a log follow whose task has neither started nor recorded an end.
constexpr int kNotStartedStatus = 83;
// Exit status of a log follow whose segment ran out of time while the task goes on.
constexpr int kSegmentOverStatus = 81;
// Exit status of a restart whose job is not lost.
constexpr int kNotLostStatus = 82;
// Each status means one thing: a command that may exit with two of them must tell them apart.
static_assert(kNoSpaceStatus != kForeignRunStatus && kNoSpaceStatus != kDirGoneStatus &&
                  kNoSpaceStatus != kNotStartedStatus && kNoSpaceStatus != kSegmentOverStatus &&
                  kNoSpaceStatus != kNotLostStatus && kForeignRunStatus != kDirGoneStatus &&
                  kForeignRunStatus != kNotStartedStatus &&
                  kForeignRunStatus != kSegmentOverStatus && kForeignRunStatus != kNotLostStatus &&
                  kDirGoneStatus != kNotStartedStatus && kDirGoneStatus != kSegmentOverStatus &&
                  kDirGoneStatus != kNotLostStatus && kNotStartedStatus != kSegmentOverStatus &&
                  kNotStartedStatus != kNotLostStatus && kSegmentOverStatus != kNotLostStatus,
              "the job protocol's exit statuses are distinct");

// The error for a job dir that now belongs to another run than `run_id`; `err` is what the
// remote script said (it names the other run).
Error foreign_run(const Remote& remote, const std::string& model, const std::string& run_id,
                  const std::string& err);
// The same, for the host named `host`.
Error foreign_run(const std::string& host, const std::string& model, const std::string& run_id,
                  const std::string& err);
// The error of kDirGoneStatus (kind gone): the job of run `run_id` went with the remote dir.
Error remote_dir_gone(const std::string& host, const std::string& remote_dir,
                      const std::string& model, const std::string& run_id);

// A model's job dir on a host: `.mlt/<model>/` under `remote_dir`, reached through `remote`
// (which must outlive it; a copy is cheap). Each method is one step of the job protocol
// (docs/remote-protocol.md) and sends one remote command.
class JobDir {
  public:
    JobDir(Remote& remote, std::string remote_dir, std::string model);
    Remote& remote() const { return *remote_; }
    const std::string& remote_dir() const { return remote_dir_; }
    const std::string& model() const { return model_; }

    // Takes the job lock for a new run in one round trip: creates `lock` atomically (O_EXCL)
    // holding owner, start time, run id and phase uploading; moves the previous run's state
    // files and the remote archive into `previous/`; records run_id, run.sh, cmd and an empty
    // console.log. Returns false (and changes nothing) when another run holds the lock. Calling
    // it again for the same run id (a retry after a lost link) completes what is missing and
    // returns true. The previous run's restore dir goes aside too. Throws mlt::Error when the
    // transport or a remote step fails.
    // `start_claimed` (when given) is set when a start sent ahead with an earlier lock of the run
    // claimed the start (start_job_if_current): the job is started, or about to be, so nothing
    // may be uploaded; start_job then reports it.
    bool acquire_run(const NewRun& run, bool* start_claimed = nullptr);

    // Records `phase` in the lock of run `run_id`. Throws mlt::Error (conflict, exit 3) when the
    // lock is no longer that run's (another mlt took it with --force).
    void set_run_phase(const std::string& run_id, RunPhase phase);

    // Removes the lock if it is run `run_id`'s; nothing when it is gone already or another's.
    void release_run(const std::string& run_id);

    // Marks the lock of run `run_id` as one the run moved away from: a `moved=WHERE` line (the
    // host it went to and its attempt there), which `status` reads and a --resume here, from any
    // machine, refuses. Nothing when the lock is gone or another run's. Throws mlt::Error when the
    // transport or the write fails.
    void mark_run_moved(const std::string& run_id, const std::string& where);

    // A gang that restarts every node together (a --resume after a rank was lost): with the lock
    // of run `run_id` held again, clears what the attempt before left in the job dir (its start
    // marker, process group, exit status, barrier files, result records) while keeping the
    // run's files and console log, so that start_job starts attempt `attempt` (the lock records
    // it) once. Once per attempt; refused while the attempt before still runs. Throws mlt::Error.
    void begin_gang_attempt(const std::string& run_id, int attempt, const std::string& wrapper);

    // Takes the lock of run `run_id` back, so that no follow of the run releases it any more
    // (ReleaseAtEnd): the run's lock stays, and the one a follow of the run released is put back
    // while the job files are still that run's. Throws mlt::Error (conflict, exit 3) when
    // another run took the model meanwhile, or the lock went otherwise (`stop` released it).
    void retake_run(const std::string& run_id);

    // Starts the job of run `run_id` from its recorded run.sh, detached in its own session, and
    // waits (bounded, 10 s) until it has recorded its process group; returns that id. At most
    // one start per run: a marker file created atomically makes a repeated call (a retry after a
    // lost link, a --resume) wait for the job already launched instead of launching another.
    // Records phase starting, then running. When the lock records an attempt N > 1 (a run that
    // continues here after its host was lost), the job gets MLT_ATTEMPT=N and one marker line
    // goes into the console log before it starts (after what the earlier attempts showed, when
    // that was pushed as the console log). Throws mlt::Error when it does not start, (conflict)
    // when the job dir belongs to another run.
    long start_job(const std::string& run_id);

    // start_job sent ahead of acquire_run (Remote::run_ahead), in the same round trip, on a
    // condition: it starts the job only if `current_test` (uploads_current_test: nothing is left
    // to upload) holds on the remote and the lock of that acquire_run wrote `ticket`
    // (NewRun::start_ticket), which it claims by renaming. A job started or claimed already by
    // an earlier start of the run is started as start_job does (at most once). Then
    // start_job_if_current() with the same arguments, right after acquire_run, reads the answer:
    // the process group, or nullopt when it did not start (something is to be uploaded; the
    // ticket is gone). A start sent ahead whose answer was lost (a cut link) can start the job
    // later only until the next lock of the run or void_start_tickets().
    void start_job_ahead_if_current(const std::string& run_id, const std::string& ticket,
                                    const std::string& current_test);
    std::optional<long> start_job_if_current(const std::string& run_id, const std::string& ticket,
                                             const std::string& current_test);

    // Removes every start ticket of run `run_id` (a run taken up by --resume in its upload, whose
    // mlt may have sent a start ahead): none can start the job afterwards. True when one had
    // claimed the start already (the job is started, or about to be): no upload may follow.
    bool void_start_tickets(const std::string& run_id);

    // Restarts the lost job of run `run_id` in place as attempt `attempt` (2 for the first
    // restart) from the same run.sh, and returns its process group. Lost: its process group is
    // recorded and gone, with no exit status, its results were not collected, and the lock (the
    // run's) records attempt `attempt - 1`. The first call creates the attempt's start marker
    // atomically, removes the old pid, appends one marker line to console.log and records
    // `attempt=N` in the lock; a repeated or concurrent call waits for that job instead of
    // starting another. The job's environment has MLT_ATTEMPT=N. With `failed`, a job that
    // ended with a failing status (not 0, not stopped) counts as lost too: its status is moved
    // aside (exit_status.N-1) and its archive hash dropped (a watch.on_failure `restart`).
    // Throws mlt::Error (conflict) when the job is not lost or the job dir belongs to another
    // run.
    long restart_job(const std::string& run_id, int attempt, bool failed = false);

    // Stops a job: TERM to its process group and to every process that carries its run id
    // (MLT_RUN_ID in /proc/*/environ), then KILL after `grace_s` seconds; records exit status
    // 143/137 when the wrapper could not, and in `stopped` that mlt's stop ended it. Returns true
    // when something was running. With a `run_id`, only that run's job is stopped (mlt::Error
    // conflict otherwise).
    bool stop_job(int grace_s, const std::string* run_id = nullptr);

    // `stop`: stops the job as stop_job does (every process of it: its group, and those that
    // carry its run id in their environment), then, in the same remote command, removes the lock
    // only if it still names the run that held it when the stop began; a finished job whose
    // results were not collected keeps its lock, for --resume.
    StopOutcome stop_and_release(int grace_s);

    // Removes every file of a job (for --force).
    void discard_job();

    // Starts the guard of run `run_id`'s job again when its process is gone (killed) while the
    // job runs with a duty for it (the lock's deadline=, silent=, ...). True when it started
    // one. With `deadline`, first records it in the lock of the running job in place of the
    // one there (a --resume with a limit: what is left of the run's budget by then; a running
    // guard takes it up within 5 s), or removes it (no budget_seconds).
    struct GuardDeadline {
        std::optional<long> budget_seconds;
        std::string limit;
    };
    bool start_guard(const std::string& run_id, const GuardDeadline* deadline = nullptr);

    // Hands the host's guard the run's notifications (notify_put.sh), after the lock was taken
    // with `notify=1` and before the job starts: the targets (notify_targets_text, a 0600 file;
    // sent on the command's stdin, never in its text) and `info` (the notify.info lines: host=,
    // elapsed= and cost= of the run before this lock, price= of this host; the guard counts
    // from the lock's started=). Returns the host's HTTP client: "curl", "wget",
    // "python3", or "none: WHY" (then the host keeps no targets and sends nothing).
    std::string hand_notifications(const std::string& run_id,
                                   const std::vector<NotifyTarget>& targets,
                                   const std::string& info);

    // --clean on the remote: removes the model archive `archive` (relative to the remote dir)
    // and, when `log_dir` is not empty, that log dir (a path of the settings: `~` and `$NAME`
    // expand there), checked there to hold nothing but the model's logs. Throws mlt::Error
    // (remote) when it refuses or fails.
    void clean_outputs(const std::string& archive, const std::string& log_dir);

    // The barrier of a multi-node run (WrapperSpec::gang_barrier): whether this node's job
    // waits at it, and letting it through. False when the command failed; a lost link throws.
    bool barrier_ready();
    bool open_barrier();

    // Streams a task's log from byte `offset` to `sink` for at most about `seconds` (one remote
    // command), or until the task has ended and its log was sent to the end; then, in the same
    // command, the task's result (FollowStep::result, on stderr after a marker line: never mixed
    // with the log's bytes), and for the job of a `run_id`, phase finished in its lock. Several
    // calls make a follow that leaves the connection free in between. With a `run_id`, the job
    // dir must still be that run's, and at the job's end its lock too (mlt::Error conflict
    // otherwise). Throws mlt::Error (remote) when the task was never started.
    // With `sample_every` > 0 the same command samples the host at its start and every that many
    // seconds (GPU use and memory from nvidia-smi when present, load, free disk): each sample
    // line ("mlt-sample ...", parse_sample) goes to `on_sample` as it comes.
    FollowStep follow_log(Task task, const std::string* run_id, uint64_t offset, int seconds,
                          const OutputSink& sink, int sample_every = 0,
                          const OutputSink* on_sample = nullptr,
                          const ReleaseAtEnd* release = nullptr);

    // Sends that follow_log command ahead (Remote::run_ahead), for a follow_log() of the same
    // arguments after the next command (the job's start).
    void follow_log_ahead(Task task, const std::string* run_id, uint64_t offset, int seconds,
                          int sample_every = 0, const ReleaseAtEnd* release = nullptr);

    // follow_log, segment after segment, until the task has ended and its log was sent to the
    // end; returns the last segment's step. `offset` is updated after every segment, so a caller
    // that catches a lost link knows where to go on. Throws as follow_log.
    FollowStep follow_to_end(Task task, const std::string* run_id, uint64_t& offset, int seconds,
                             const OutputSink& sink);

    // Sends what a task's log holds from byte `offset` now; returns the new offset. A missing
    // log reads as empty.
    uint64_t read_log(Task task, uint64_t offset, const OutputSink& sink);

    // Sends that read ahead on a guess (Remote::run_ahead_on_guess), for a read_log() of the same
    // arguments after the next command.
    void read_log_ahead_on_guess(Task task, uint64_t offset);

    // Starts TensorBoard on the remote for the model's log dir (the one its job recorded): the
    // job's venv's `tensorboard` (<remote dir>/.venv), else one on PATH, on 127.0.0.1:`port`,
    // detached (its own session, pid in .mlt/<model>/tensorboard.pid, output in
    // tensorboard.log), and waits (bounded, 60 s) until it serves. Throws mlt::Error (remote,
    // exit 1) when there is no log dir yet, no tensorboard, or it ended first (quoting it).
    void start_tensorboard(int port);

    // Stops the TensorBoard that start_tensorboard started (TERM to its group, KILL after 5 s).
    void stop_tensorboard();

    // Reads the job dir's run id, exit status, archive sha256, log dir, whether the training
    // started, whether mlt's stop ended it and whether the remote disk is full, in one round trip.
    JobResult read_job_result();

    // Starts the shutdown_cmds script of run `run_id` detached, at most once per run (a marker
    // created atomically; a repeated call after a lost link finds it). Returns true when this
    // call started it. With `record_collected`, phase collected is recorded in the lock first,
    // in the same round trip (set_run_phase). Throws mlt::Error (conflict) when the job dir, or
    // with `record_collected` the lock, belongs to another run.
    bool start_shutdown(const std::string& run_id, const std::string& script,
                        bool record_collected = false);

    // The status the shutdown script recorded; nullopt while it runs (or if it never ran).
    std::optional<int> read_shutdown_status();

    // The model's job as its files show it (status.sh): none (no job dir, no remote dir), or
    // one. Throws mlt::Error (usage) for an invalid model name, and on transport failure.
    // Every model's: query_jobs (status.h).
    std::vector<JobStatus> query_jobs();

    // checkpoints: the job dir's ledger (checkpoints.sh) for a pull of the log dir, in one
    // round trip; with `hold`, the guard deletes nothing until end_checkpoint_pull() (or for
    // 10 min). Not `read` when the job dir has no ledger (yet). Throws mlt::Error on transport
    // failure.
    CheckpointLedger read_checkpoints(bool hold);
    void end_checkpoint_pull();

  private:
    Remote* remote_;
    std::string remote_dir_, model_;
};

}  // namespace mlt
