#pragma once

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mlt/job/job.h"
#include "mlt/job/status.h"
#include "mlt/ssh/connection.h"
#include "mlt/train/run/checkpoints.h"
#include "mlt/train/run/train_plan.h"
#include "mlt/transfer/ranges.h"
#include "mlt/transfer/sync.h"
#include "mlt/util/reporter.h"

namespace mlt {

// What lets a host answer sooner: commands sent ahead of their answers (with the next
// command, on the same round trip), hints of what comes next, and the release that goes
// with the job's follows. Optional: a RemoteJob without it (pipelining() null) runs each
// protocol step as its own command, and a run reaches the same end. docs/remote-protocol.md
// describes each; the methods throw as RemoteJob's do.
class JobPipelining {
  public:
    virtual ~JobPipelining() = default;

    // A hint, given before the run plans its upload: the lock's command follows that local
    // work, and the link may get ready for it meanwhile (Remote::prepare).
    virtual void prepare() = 0;
    // Given before upload_ahead() and lock(): the job's start goes along with the lock's
    // command, on the condition `current_test` (start_job_ahead_if_current), and the
    // upload's listings go as guesses. start_sent_ahead() must follow right after lock().
    virtual void start_ahead_if_current(const std::string& run_id, const std::string& ticket,
                                        const std::string& current_test) = 0;
    // Given just before lock(): upload(uploads) follows it, so its listings may go along
    // with the lock's command (sync_up_ahead).
    virtual void upload_ahead(const std::map<std::string, std::vector<UploadItem>>& uploads) = 0;
    // The answer to that start (start_job_if_current): the process group when the job
    // started, nullopt when it did not (upload() and start() follow) or none was sent.
    virtual std::optional<long> start_sent_ahead() = 0;
    // Whether the last lock() found the start claimed by a start sent ahead with an earlier
    // lock of the run (acquire_run): then nothing may be uploaded, and start() reports the
    // job.
    virtual bool start_claimed() const = 0;
    // Voids the start tickets of `run_id` (void_start_tickets): true when a start sent ahead
    // claimed the start already.
    virtual bool void_start_tickets(const std::string& run_id) = 0;
    // Given just before start(): follow(task, run_id, offset, seconds) follows it, so it may
    // go along with the start's command (follow_log_ahead).
    virtual void follow_ahead(Task task, const std::string* run_id, uint64_t offset,
                              int seconds) = 0;
    // A guess, given after follow_ahead: the job of `run_id` ends within that segment and
    // records no archive, so collect() follows, and its first command (the log dir's
    // listing) may go along (collect_results_ahead).
    virtual void collect_ahead_on_guess(const TrainPlan& plan, const std::string& run_id) = 0;
    // From now on, every follow of the job carries `release` (ReleaseAtEnd): the one that
    // sees the job end may release the run's lock (JobResult::released).
    virtual void release_with_follow(const ReleaseAtEnd& release) = 0;
    // Takes the lock of `run_id` back, marked so that no follow releases it any more
    // (retake_run): after a follow that carried a release and may have released it. Throws
    // (conflict) when the lock is neither the run's nor one a follow of the run released.
    virtual void retake(const std::string& run_id) = 0;
};

// The job of one model in one remote dir of one host: everything a run asks of that host,
// one method per step of the job protocol (docs/remote-protocol.md). TrainRun talks only to
// this; ShellJob speaks the protocol over SSH, unit tests give an in-memory host. Every
// method is one remote command unless it says otherwise, and throws mlt::Error: a lost link
// as the Connection reports it, (conflict) when the job dir belongs to another run.
class RemoteJob {
  public:
    virtual ~RemoteJob() = default;

    // What this host offers to answer sooner; null: nothing (every step its own command).
    virtual JobPipelining* pipelining() { return nullptr; }

    // The job's state as its files show it (query_jobs): empty when there is none.
    virtual std::vector<JobStatus> status() = 0;
    // Takes the lock for a new run (acquire_run): false when another run holds it.
    virtual bool lock(const NewRun& run) = 0;
    // Records the run's phase in its lock (set_run_phase).
    virtual void set_phase(const std::string& run_id, RunPhase phase) = 0;
    // Releases the lock if it is still `run_id`'s (release_run).
    virtual void release(const std::string& run_id) = 0;
    // Removes every file of the job (--force, after stop()).
    virtual void discard() = 0;
    // --clean on the remote: removes the archive and, when named, the log dir (checked
    // remotely to hold nothing but the model's logs).
    virtual void clean(const std::string& archive, const std::string& log_dir) = 0;
    // Sends what changed of the uploads (several commands).
    virtual SyncResult upload(const std::map<std::string, std::vector<UploadItem>>& uploads) = 0;
    // Starts the recorded job, at most once per run (start_job); returns its process group.
    virtual long start(const std::string& run_id) = 0;
    // From now on, a follow of the job samples the host every `every_s` seconds (0: never)
    // and passes each sample line to `on_sample` (follow_log). No command of its own.
    virtual void watch(int every_s, OutputSink on_sample) = 0;
    // Marks the lock of `run_id` as one the run moved away from, to `where` (mark_run_moved).
    virtual void mark_moved(const std::string& run_id, const std::string& where) = 0;
    // Readies the job dir for attempt `attempt` of a gang that restarts together
    // (begin_gang_attempt).
    virtual void begin_gang_attempt(const std::string& run_id, int attempt,
                                    const std::string& wrapper) = 0;
    // Starts the host's guard of the run's running job again when it is gone (start_guard):
    // true when it did. With `deadline`, first records it in the lock in place of the old one.
    virtual bool restart_guard(const std::string& run_id,
                               const JobDir::GuardDeadline* deadline = nullptr) = 0;
    // Hands the host's guard the run's notifications (hand_notifications): the host's HTTP
    // client, or "none: WHY".
    virtual std::string hand_notifications(const std::string& run_id,
                                           const std::vector<NotifyTarget>& targets,
                                           const std::string& info) = 0;
    // Restarts the run's lost job as attempt `attempt` (restart_job); returns its process
    // group.
    virtual long restart(const std::string& run_id, int attempt, bool failed) = 0;
    // Stops the job (stop_job); with a run id, only that run's. True when something ran.
    virtual bool stop(int grace_s, const std::string* run_id) = 0;
    // One bounded segment of a task's log from `offset` (follow_log): at the task's end it
    // brings its result, and for the job records phase finished.
    virtual FollowStep follow(Task task, const std::string* run_id, uint64_t offset, int seconds,
                              const OutputSink& sink) = 0;
    // What the job left (read_job_result).
    virtual JobResult result() = 0;
    // Brings the job's results home (collect_results; several commands).
    virtual TransferStats collect(const TrainPlan& plan, const JobResult& result,
                                  Reporter& reporter) = 0;
    // Starts shutdown_cmds at most once per run (start_shutdown): true when this call did.
    // With `record_collected`, phase collected is recorded first, in the same command.
    virtual bool start_shutdown(const std::string& run_id, const std::string& script,
                                bool record_collected) = 0;
    // The status the shutdown script recorded; nullopt while it runs or if it never ran.
    virtual std::optional<int> shutdown_status() = 0;
};

// The job protocol over SSH: the free functions of mlt/job/job.h on the Connection's current
// link, for one (remote dir, model). The remote's compressor is asked once, at the first
// transfer.
class ShellJob : public RemoteJob, public JobPipelining {
  public:
    ShellJob(Connection& connection, std::string remote_dir, std::string model,
             const std::string& compression, int transfer_connections = 0);

    JobPipelining* pipelining() override { return this; }

    // RemoteJob
    std::vector<JobStatus> status() override;
    bool lock(const NewRun& run) override;
    void set_phase(const std::string& run_id, RunPhase phase) override;
    void release(const std::string& run_id) override;
    void discard() override;
    void clean(const std::string& archive, const std::string& log_dir) override;
    SyncResult upload(const std::map<std::string, std::vector<UploadItem>>& uploads) override;
    long start(const std::string& run_id) override;
    void watch(int every_s, OutputSink on_sample) override;
    void mark_moved(const std::string& run_id, const std::string& where) override;
    void begin_gang_attempt(const std::string& run_id, int attempt,
                            const std::string& wrapper) override;
    bool restart_guard(const std::string& run_id,
                       const JobDir::GuardDeadline* deadline = nullptr) override;
    std::string hand_notifications(const std::string& run_id,
                                   const std::vector<NotifyTarget>& targets,
                                   const std::string& info) override;
    long restart(const std::string& run_id, int attempt, bool failed) override;
    bool stop(int grace_s, const std::string* run_id) override;
    FollowStep follow(Task task, const std::string* run_id, uint64_t offset, int seconds,
                      const OutputSink& sink) override;
    JobResult result() override;
    TransferStats collect(const TrainPlan& plan, const JobResult& result,
                          Reporter& reporter) override;
    bool start_shutdown(const std::string& run_id, const std::string& script,
                        bool record_collected) override;
    std::optional<int> shutdown_status() override;

    // JobPipelining
    void prepare() override { remote().prepare(); }
    void start_ahead_if_current(const std::string& run_id, const std::string& ticket,
                                const std::string& current_test) override;
    void upload_ahead(const std::map<std::string, std::vector<UploadItem>>& uploads) override;
    std::optional<long> start_sent_ahead() override;
    bool start_claimed() const override { return start_claimed_; }
    bool void_start_tickets(const std::string& run_id) override;
    void follow_ahead(Task task, const std::string* run_id, uint64_t offset, int seconds) override;
    void collect_ahead_on_guess(const TrainPlan& plan, const std::string& run_id) override;
    void release_with_follow(const ReleaseAtEnd& release) override;
    void retake(const std::string& run_id) override;

  private:
    Remote& remote() { return connection_.remote(); }
    // The upload's links, made on first use.
    ConnectionLinks& upload_links();
    // Closes the upload's links unless one is still connecting.
    void close_idle_links();

    Connection& connection_;
    std::string remote_dir_;
    std::string model_;
    CompressionCheck compression_;
    bool compression_ahead_ = false;  // its check went with the lock (upload_ahead)
    // The start sent ahead (start_ahead_if_current), until its answer is read: run id,
    // ticket, test.
    std::optional<std::array<std::string, 3>> start_ahead_;
    bool start_claimed_ = false;           // what the last lock() found
    int transfer_connections_;             // 0: auto
    int sample_every_ = 0;                 // watch(): a job's follow samples the host this often
    std::optional<ReleaseAtEnd> release_;  // release_with_follow(): a job's follow carries it
    OutputSink on_sample_;
    // The upload's links: made by upload_ahead (its first may start connecting then), closed
    // after the upload, or by the follow when one was still connecting (close_idle_links).
    std::unique_ptr<ConnectionLinks> upload_links_;
};

// Pulls what a finished (or running, for `download`) job left: the archive when `result`
// names its sha256 (checked before it replaces the local one; never another run's, never
// through a remote symlink), the remote log dir into the local one, and download_files (a
// `from|to` pair naming a remote directory copies the directory). Returns what moved. An
// archive the job recorded that cannot be collected as that file (a symlink now: tampered;
// gone: remote) throws once the rest was collected: no older local archive passes as it.
// `links`: the connections big files move over as ranges (none: one range at a time).
TransferStats collect_results(Remote& remote, const TrainPlan& plan, const JobResult& result,
                              const CompressionChoice& compression, Reporter& reporter,
                              LinkPool* links = nullptr);
// Sends the first command of collect_results ahead (Remote::run_ahead; on a guess of the
// result with `guess`) when it is the log dir's listing: no archive to fetch and no MLTK CLI
// log first.
void collect_results_ahead(Remote& remote, const TrainPlan& plan, const JobResult& result,
                           bool guess);

// The remote log dir of a job: the one it recorded (`recorded`: it asked the remote MLTK),
// else the one the settings name (remote_log_dir, in the remote dir); "" when neither.
std::string remote_log_dir_of(const TrainPlan& plan, const std::string& recorded);

// The top-level names in the local log dir that are mlt's own (the console copy, the metrics,
// MLTK's train.log with `have_cli_log`, a pull's staging dir): never a remote file's copy.
std::vector<std::string> local_own_names(const TrainPlan& plan, bool have_cli_log);
// Whether collect_results brings nothing but the log dir the settings name (plus an archive,
// when the job records one): no download_files, no MLTK CLI log.
bool logs_only_collection(const TrainPlan& plan);
// What collect_results says when the local log dir holds the remote one's `files` files
// already (a release that went with the follow saw it: ReleaseAtEnd) and the job recorded
// no archive: the same notices, with nothing moved.
void collected_in_place(const TrainPlan& plan, const JobResult& result, size_t files,
                        Reporter& reporter);

// What pull_logs brought.
struct LogsPull {
    TransferStats cli_log;       // MLTK's CLI log (train.log), when there is one
    bool log_dir_known = false;  // false: no log dir to pull yet (nothing was pulled)
    SyncResult logs;
    CheckpointTally checkpoints;  // with `checkpoints:` and a ledger on the host
};

// The remote log dir into plan.local_logs (sync_down: only what is new or changed, only
// whole versions), MLTK's CLI log beside it; the console copy and that train.log are mlt's
// own names there. The one piece of code for the final collection and the pulls of
// --sync-every while the job runs (`report` quiet).
LogsPull pull_logs(Remote& remote, const TrainPlan& plan, const std::string& recorded_log_dir,
                   const CompressionChoice& compression, PullReport report,
                   LinkPool* links = nullptr);

}  // namespace mlt
