#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "mlt/job/job.h"
#include "mlt/job/status.h"
#include "mlt/ssh/connection.h"
#include "mlt/train/cost/run_account.h"
#include "mlt/train/cost/run_ledger.h"
#include "mlt/train/local/history.h"
#include "mlt/train/local/local_state.h"
#include "mlt/train/nodes/gang.h"
#include "mlt/train/nodes/gang_seat.h"
#include "mlt/train/recovery/failover.h"
#include "mlt/train/recovery/on_failure.h"
#include "mlt/train/run/follow_release.h"
#include "mlt/train/run/remote_job.h"
#include "mlt/train/run/run_parts.h"
#include "mlt/train/run/status_line.h"
#include "mlt/train/run/train_plan.h"
#include "mlt/train/watch/gpu_watch.h"
#include "mlt/train/watch/live_pull.h"
#include "mlt/train/watch/live_sync.h"
#include "mlt/train/watch/run_watchers.h"
#include "mlt/transfer/transfer.h"
#include "mlt/util/console_filter.h"
#include "mlt/util/reporter.h"

namespace mlt {

// The phases of one run on one node, in order. Each can be entered again, from the remote
// state, after the link was lost inside it (docs/architecture.md).
enum class Phase {
    connect,
    lock,
    clean,
    upload,
    start,
    restart,  // a lost job starts again, as the run's next attempt
    follow,
    collect,
    shutdown,
    release,
    done
};

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

// Sees a run's steps from outside: the integration tests pause mlt at a phase with one, to
// cut the link or kill mlt exactly there. mlt itself installs none.
class RunObserver {
  public:
    virtual ~RunObserver() = default;
    // Before each step of `phase` (also when it is entered again after a reconnect), before
    // its first remote command.
    virtual void entering(Phase phase) = 0;
};

// The observer that the train command gives its runs: none, unless a test build installed
// one before main() (tests/integration/harness/hold_observer.cpp).
RunObserver* installed_run_observer();
void install_run_observer(RunObserver* observer);

// A new run id: the start time (seconds, hex) and 24 random bits, e.g. "673f1c2a-9b3e01".
std::string new_run_id();

// Whether this run holds the job lock.
enum class LockHold {
    none,      // not taken (yet), or the lock round trip failed
    held,      // taken, or adopted by --resume
    released,  // given back
};

// What this run knows of its remote job.
struct JobWatch {
    enum class Life {
        none,     // never started by this run: no job to care for
        may_run,  // the start went out, or --resume found it running
        ended,    // its end was seen (the log followed to its end), or found ended
    };
    enum class Stop {
        none,
        wanted,  // Ctrl+C once: stop it at the next chance, then collect
        sent,    // the stop command went out; it runs on the remote by itself
        done,    // the stop command returned: the job has ended
    };
    Life life = Life::none;
    Stop stop = Stop::none;
    // The job ended with a failing status and a watch.on_failure rule restarts it: the
    // restart moves that status aside (a lost job has none).
    bool restarts_failed = false;

    // A job of this run may exist on the remote.
    bool started() const { return life != Life::none; }
    // It may still be training: started, not seen to end, not stopped by mlt.
    bool may_still_run() const { return life == Life::may_run && stop != Stop::done; }
    // mlt's stop must (still) be sent before the log is followed further.
    bool stop_pending() const { return stop == Stop::wanted || stop == Stop::sent; }
    // The stop went out but was not seen to return.
    bool stop_under_way() const { return stop == Stop::sent; }
    // The job is over for sure: seen to end, or stopped by mlt.
    bool over() const { return life == Life::ended || stop == Stop::done; }
};

// Where shutdown_cmds stand.
struct ShutdownProgress {
    enum class Start {
        not_sent,
        sent,       // this run sent their start (it may have reached the remote)
        following,  // started: their log is being followed
    } start = Start::not_sent;
    uint64_t offset = 0;  // how much of their log was shown
    // What their start records: with the results collected, phase collected (a run without
    // them releases the lock next; a cut before that leaves phase finished, and --resume
    // collects again, moving nothing).
    enum class Record { nothing, collected } record = Record::nothing;
};

// One `train` run on one node: the phases of docs/architecture.md against a RemoteJob, all
// output through a Reporter. A lost link (reset or silent) in any phase is followed by
// reconnecting with capped exponential backoff for plan.reconnect_timeout_s and by entering
// that phase again; the remote state says what is already done.
class TrainRun {
  public:
    // With a `failover`, a host lost for good (not back within reconnect_timeout) while the
    // job may still run, or before it started, is replaced by the next standby host
    // (run_failover.cpp); `connection` and `job` must then be the ones it points elsewhere.
    TrainRun(Connection& connection, RemoteJob& job, TrainPlan plan, Reporter& reporter,
             RunClock& clock, RunObserver* observer = nullptr, Failover* failover = nullptr);
    ~TrainRun();  // stops the pulls of --sync-every
    TrainRun(const TrainRun&) = delete;
    TrainRun& operator=(const TrainRun&) = delete;

    // Runs every phase and returns the exit code: the training's status (0: success), 130
    // after a Ctrl+C, 143/129 after SIGTERM/SIGHUP. Throws mlt::Error for everything else
    // (exit 3 conflicts, 255 when the link did not come back in time).
    int run();

    // The same in steps (run() is this loop): begin() opens the first
    // connection, then each advance() does one step (a phase, or one segment of a log
    // follow) and handles what went wrong in it; it returns false once the run is over, and
    // exit_code() says how it ended. Both throw as run() does; the run is over then.
    void begin();
    bool advance();
    bool over() const { return outcome_.exit_code.has_value(); }
    int exit_code() const { return outcome_.exit_code.value_or(exit_code::kInternal); }

    // Makes this run node `rank` of a multi-node run (before begin()): its job starts only
    // once every node of `gang` is set up; once a node fails, it stops its job, and a job of
    // its own that fails stops the others (docs/multi-node.md).
    // Every node of a new run takes the lock under the gang's one `run_id`.
    void join_gang(Gang& gang, int rank, const std::string& run_id) {
        gang_.gang = &gang;
        gang_.rank = rank;
        run_id_ = run_id;
    }

    // Makes this node's run attempt `attempt` of a gang that restarts every node together
    // (after join_gang, before begin()): its lock is taken for the gang's run again, the job
    // dir readied for the new attempt (begin_gang_attempt), the earlier attempts kept from
    // the local history, on this host and on `earlier_hosts` (where this node's rank ran
    // before: a lost host a standby replaced, so that its budget counts them). `came_from`:
    // the lost host this node's rank leaves now (its console copy is pushed as the job's
    // console log, as after a failover); empty: none.
    void continue_gang(int attempt, const std::string& came_from = {},
                       const std::vector<std::string>& earlier_hosts = {});
    // The limit (--max-hours, --max-cost: this node's share) the run has reached; empty: none.
    std::string limit_now() const { return limit_reached(wall_now()); }
    int gang_rank() const { return gang_.rank; }
    // This node's run only settles what its job left before the gang restarts (a
    // --resume): collected as usual, recorded, but with no summary of its own (the
    // restart's follows).
    void settle_for_restart() { gang_.role = GangSeat::Role::settling; }
    // Whether the gang stop stopped this node's job (another node failed).
    bool stopped_for_gang() const { return gang_.stop == GangSeat::Stop::for_another_node; }
    // Whether mlt left this node's run on a signal, as it was (leave()).
    bool left_on_signal() const { return outcome_.left; }

    // The run's id: new, or the resumed run's.
    const std::string& run_id() const { return run_id_; }
    // Whether something of the run may be on a host: it took a job lock there, or moved
    // after one (a failover lets the lock go).
    bool took_lock() const { return lock_ != LockHold::none || relocation_.moved(); }
    // Whether the run is over on its host: its results collected and its job lock released
    // (not detached, not left on a lost link).
    bool results_home() const {
        return lock_ == LockHold::released && outcome_.ending != Ending::detached;
    }
    // The phase reached (Phase::done after a complete run).
    Phase phase() const { return phase_; }
    // How often the link was opened again.
    int reconnects() const { return outcome_.reconnects; }
    const std::string& host() const { return connection_.name(); }
    // The time and cost of the run's attempts so far (times in epoch seconds, wall_now()).
    const RunLedger& ledger() const { return account_.ledger; }
    // Now in epoch seconds, on the run's clock (simulated in unit tests).
    double wall_now() const { return clock_.now() + account_.wall_offset; }

  private:
    static constexpr int kStopGraceSeconds = 10;
    // How long one follow segment of a gang's node runs at most: a failed node stops the
    // others within this plus the stop's own time.
    static constexpr int kGangSegmentSeconds = 2;
    // An error that ends the run: thrown past the error handling of advance().
    struct Fatal {
        Error error;
    };
    // The phases (train_run.cpp): each returns the phase to go on with (itself, for one more
    // step of a log follow).
    Phase step();
    Phase take_lock();
    bool take_over(const NewRun& run);
    Phase adopt(const JobStatus& job);
    Phase clean();
    Phase upload();
    Phase start();
    // What follows the job's start (by start() or with the lock): the notice, the local
    // console copy, the follow (or the end of a --no-wait run).
    Phase launched(long pgid);
    Phase restart();
    // The follow saw the job end (recovery/run_restart.cpp): what comes next. A failed or lost
    // attempt is judged by watch.on_failure (judge_attempt): restarted in place, left for a
    // standby host, or collected; a lost one that no rule judges restarts within max_restarts.
    Phase after_the_job(const std::optional<JobResult>& result);
    std::optional<FailureVerdict> judge_attempt(const std::optional<JobResult>& result) const;
    // The verdict on a job that ended (any node's): none for a success or a stop (by mlt or
    // the host's guard); the default no_restart rules not for a loss.
    std::optional<FailureVerdict> judge_job(const JobResult& result) const;
    // The run's host is marked bad (watch.on_failure exclude_host): in the history for 24 h,
    // and no standby host of the run any more. `left`: it answered when the run left it.
    void mark_host_bad(bool left);
    // The host was left by such a rule (leave_host), not lost.
    bool left_by_rule() const;
    // True when the attempt is restarted in place (max_restarts allows one more; with `rule`,
    // a `restart` rule, at least one), with the attempt recorded. Without a rule only a lost
    // job restarts.
    bool restart_attempt(const std::optional<JobResult>& result, const FailureVerdict* rule);
    // exclude_host: the host is marked bad, the attempt's log dir comes home, and the run
    // fails over (fail_over). False when it cannot (no standby host): the run collects here.
    bool leave_host(const JobResult& result);
    // A gang's node whose job failed or was lost: the cause it tells the gang, as
    // watch.on_failure judges it (no_restart: other, exclude_host: host_lost, restart: a restart
    // counted in max_restarts).
    Gang::Cause gang_cause(const JobResult& result);
    Phase follow();
    Phase collect();
    Phase shutdown();
    Phase release();
    // The end of a run that went through its phases.
    int finish();
    // The block after a run that ends (run_budget.cpp): status, attempts, time and cost,
    // results, the billing reminder; only the reminder when the run never held the lock.
    // `error`: the run failed with it.
    void summarize(const Error* error);
    // --max-hours / --max-cost (run_budget.cpp): asks for the job's stop once a limit is
    // reached while it may run; the seconds the next follow segment may last; the live line.
    void check_budget();
    int segment_seconds() const;
    // Before the upload and the start of a job that has not started (a failover's standby, a
    // slow push): true when a limit is reached, and the run ends there as limited.
    bool limit_blocks_start();
    // The run's shutdown wrapper (make_shutdown_script): what start_shutdown sends, and what
    // the lock hands the guard for an unattended shutdown.
    // `unattended`: the guard's, which also stops a rented machine (unattended_release).
    std::string shutdown_script(bool unattended = false) const;
    // The host's guard (run_guard.cpp). What it enforces for the attempt a lock opens here: what is
    // left of the budget (NewRun::budget_seconds, NewRun::limit), the silence rule
    // (silent_seconds, stop_silent) and the idle-GPU rule; a gang's nodes only the idle rule
    // (their limit of several prices is the client's).
    void hand_to_guard(NewRun& run) const;
    // The deadline hand_to_guard gives: what is left of the run's budget now, and the limit
    // that sets it; none without a limit that can be reached.
    JobDir::GuardDeadline guard_deadline() const;
    // A --resume that reattaches to the running job `job`: hands its guard the deadline of
    // this mlt's limit, if any, and starts it again when it is gone.
    void reguard(const JobStatus& job);
    // The run's budget as this node's ledger counts it: the nodes of a gang bill together
    // (the same time, each at its price), so each node's share of --max-cost is the
    // nodes' count's part of it; and the limit it reached by `now` as the user gave it
    // ("--max-cost 3"), or "".
    Budget node_budget() const;
    std::string limit_reached(double now) const;
    // The run's id, and (at its first lock) what the local log dir held before it.
    void open_run();
    // The local log dir's files that are not this run's (an earlier run's, there when it
    // began); nullopt (said once) when that is not known.
    std::optional<std::set<std::string>> not_this_runs() const;
    // The host's guard stopped the job (JobResult::guard_stop: a limit, silence, an idle
    // GPU): the run ends as limited (exit 5).
    void note_guard_stop(const std::string& why);
    // Notifications (run_notify.cpp). After the lock: hands the host's guard the run's targets
    // (notify_from: host), or learns that it cannot send (then this mlt sends).
    void hand_notifications();
    // An event of the run as this mlt sees it: sent from here unless the host's guard sends
    // it (the host's events, when it notifies), once per id; a gang's rank 0 only.
    void notify(NotifyEventKind kind, const std::string& reason = {},
                std::optional<int> exit_status = std::nullopt);
    // A stop by the guard's rule engine ("INDEX<TAB>LINE"): the run ends as ruled (exit 6).
    // False for a record no guard writes.
    bool rule_stop(const std::string& hit);
    void show_cost();
    // The attempt of the run on this host opens at `when` (a start, a restart, an adoption).
    void begin_attempt(double when);
    // Handles an error of a step and the ones its handling raises; returns an exit code
    // when the run ends there.
    std::optional<int> handle(Error error);

    // The link is gone (run_reconnect.cpp): reconnects (backoff, one line per attempt) or
    // throws Fatal (exit 255) once plan_.reconnect_timeout_s has passed.
    void reconnect(const Error& cause);
    [[noreturn]] void give_up_reconnecting(double elapsed, double limit, const std::string& last);
    // The host is lost for good (run_failover.cpp): moves the run to the next standby host,
    // as the next attempt when its job may have started, and returns true; false when there
    // is no failover, none is wanted now (the job ended: its results are on the lost host;
    // a stop is under way) or no standby host is left.
    bool fail_over(const std::string& why);
    // A host lost with its job is a lost attempt: false when a watch.on_failure rule ends the
    // run (no_restart, said); an exclude_host rule marks it bad. `how`: "following the log and
    // not back after 2 s". Not for a host that a rule left (left_by_rule).
    bool judge_lost_host(const std::string& how);
    // The host answers, but the run's remote dir is gone (`error`, kind gone): the host is
    // lost with the job; the run fails over, or ends with `error` and the --restore line.
    void lost_with_dir(const Error& error);
    // --resume whose first connect failed with a lost link's error, of a run the local
    // history has on that host: the host is treated as lost (reconnect, then failover) with
    // the run's id and attempt; false (nothing changed) otherwise.
    bool resume_unreachable(const Error& error, const std::vector<nlohmann::json>& runs);
    // --resume whose first connect failed with a lost link's error, of a run the local
    // history has gone on on another host after this one was lost (a failover, finished or
    // cut off): the run is resumed there, as if that host had been named; false (nothing
    // changed) otherwise, or when that host does not answer either.
    bool resume_where_it_went(const Error& error, const std::vector<nlohmann::json>& runs);
    // The plan follows the run to `next` (a failover): remote dir, uploads, resume and stop
    // lines, price.
    void point_plan_at(const NextHost& next);
    // --resume on a host with no job of the run, where the local history shows the run's
    // failover from another host cut off before it took this host's lock: continues it here
    // as that failover would have (run_failover.cpp).
    Phase continue_cut_failover(const std::vector<nlohmann::json>& runs, const CutFailover& cut);
    // --resume of run `run_id` on a host the run moved away from (a failover): refused
    // (conflict, exit 3), naming where it went, as the lock says (`marked`, from any
    // machine) or this machine's history; with `may_mark` (the host answered with the run's
    // lock) the lock is marked moved first. Returns when the run did not move.
    void refuse_moved_away(const std::vector<nlohmann::json>& runs, const std::string& run_id,
                           const std::string& marked, bool may_mark);
    // Adopting `job`, a run this machine has no record of whose console log has been still
    // for longer than reconnect_timeout: warns that another machine may have failed it over.
    void warn_if_silent(const std::vector<nlohmann::json>& runs, const JobStatus& job);
    // The resume line with --restore for --resume: a new run from the local log dir.
    std::string restore_line() const;
    // The uploads of this host: the plan's, plus, for --restore or after a failover, the
    // local log dir into the job's restore dir (and after a failover the console copy as the
    // job's console log, so the log's offsets go on where they were).
    std::map<std::string, std::vector<UploadItem>> uploads() const;
    // A signal arrived (run_signals.cpp): returns the exit code to leave with, or nullopt
    // to go on (Ctrl+C once while the job runs: stop it, then collect).
    std::optional<int> on_signal(const Error& signal);
    int leave(const Error& signal);
    std::string leave_state() const;
    // A phase failed for good (run_cleanup.cpp): releases a lock that guards nothing yet, or
    // runs shutdown_cmds for a job that has ended. Returns the error to report (with a hint
    // that the job runs on, when it may).
    Error fail_cleanup(const Error& error);
    // Appends this run's record to the local history (`mlt jobs` shows the newest per id).
    void record(const std::string& status, std::optional<int> exit_status);
    // "the remote job of M is STILL RUNNING on H; stop it with: ...; reattach with: ...".
    std::string still_running() const;
    std::string which() const;  // "M (run ID)"
    // --sync-every (run_sync.cpp): starts the pulls while the job may run and this run waits
    // for it (the follow); stops them (waiting for the thread) before the collection, when
    // the run is over, and before anything else that must not run beside them.
    void start_sync();
    void stop_sync();

    // Follows the gang: a failed node stops this one's job (follow()).
    void check_gang();
    // Whether mlt may still stop the job for a limit or a rule: once per run, and only a job
    // that may still be training and that nobody stops yet.
    bool may_stop_job() const;
    // Stops the job for `note` (a limit or a rule): says so, and the run ends as `ending`.
    void stop_job_for(Ending ending, std::string note);
    // Has the job's follows sample the host (before the start and each follow).
    void arm_watch();
    // One sample line of the follow: recorded and shown.
    void on_sample(std::string_view line);
    // --resume of a run whose lock a follow released (an mlt lost before it read that
    // follow): takes it back (retake_run). False when it is not such a run.
    bool resume_released(const std::string& run_id);
    // The lock phase of --resume: the run the remote holds, adopted.
    Phase resume_lock();
    // The collection of a run whose follow released the lock: true when the local log dir
    // is still as the release saw it (nothing to pull, the notices said); otherwise the lock
    // is taken back and false.
    bool collected_with_release(const JobResult& result);

    // What the run works with.
    Connection& connection_;
    RemoteJob* job_;  // re-pointed by a failover (NextHost::job)
    TrainPlan plan_;
    Reporter& reporter_;
    RunClock& clock_;
    RunObserver* observer_;
    // Where the run stands.
    Phase phase_ = Phase::connect;
    std::string run_id_;
    LockHold lock_ = LockHold::none;
    std::vector<std::string> rented_ids_;  // the rented machines the run was on (history)
    JobWatch watch_;
    int attempt_ = 1;  // the attempt of the run's job: 2 on after restarts of a lost job
    ShutdownProgress shutdown_;
    // Its parts, by concern.
    TerminalSide terminal_;  // what reaches the terminal, the local console copy
    RunOutcome outcome_;     // how it ends, what it moved and collected
    RunAccount account_;     // time and cost
    Relocation relocation_;  // its standby hosts, moved by a failover and from where
    GangSeat gang_;          // its place in a multi-node run
    RunWatchers watchers_;   // the host's samples
    FollowRelease release_;  // the release that goes with the follows
    // The pulls of --sync-every; declared last, so that they stop before what they use goes.
    LiveSync sync_;
};

}  // namespace mlt
