#pragma once

#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace mlt {

// The nodes of one multi-node run, as their runs (one thread each) see one another: the
// barrier before the training starts anywhere, and the gang stop once one node fails.
// Thread-safe.
class Gang {
  public:
    explicit Gang(int nodes)
        : arrived_(static_cast<size_t>(nodes), false),
          causes_(static_cast<size_t>(nodes), Cause::none),
          over_(static_cast<size_t>(nodes), false),
          holding_(static_cast<size_t>(nodes), false) {}

    // Why a node's run failed, as far as the gang's restart cares: only a lost job or a lost
    // host restarts the gang (docs/multi-node.md, "A node lost").
    enum class Cause {
        none,
        training,   // the training's own non-zero exit status: the gang stops
        job_lost,   // its processes gone without an exit status, the host answering
        host_lost,  // the host did not come back within reconnect_timeout, or lost its dir
        other,      // anything else (a signal to mlt, bad input, a lying host): the gang stops
        // The training failed, and a watch.on_failure `restart` rule restarts it (counted in
        // max_restarts, at least once).
        ruled_restart,
    };
    // The first node that failed: its rank, host and exit code.
    struct Failure {
        int rank = 0;
        std::string host;
        int exit_code = 0;
        bool training = false;  // exit_code is the training's own status (not an mlt code)
    };

    // Node `rank` is set up and ready to start its job. Returns true once every node is, or
    // false as soon as one failed (nothing may start then). Waits at most `wait_s` per call:
    // nullopt when the time passed first (the caller looks at its signals, then calls again).
    std::optional<bool> arrive(int rank, double wait_s);
    // Node `rank` needs no barrier any more: its job was started before (a --resume that
    // finds it running or ended). Never waits.
    void passed(int rank);
    // Node `rank` failed (its job exited non-zero: `training`, or its run ended with an
    // error): the first failure is kept, and every other node is to stop its job.
    // Each rank's first cause is kept too (`causes`).
    void fail(int rank, const std::string& host, int exit_code, bool training = false);
    void fail(int rank, const std::string& host, int exit_code, Cause cause);
    // Whether every node arrived at the barrier or passed it.
    bool all_arrived() const;
    // Whether the nodes are to stop (a node failed).
    bool stopping() const;
    std::optional<Failure> first_failure() const;

    // What may restart the gang after this pass: a lost host (a standby host is set), a lost
    // job (max_restarts has restarts left). Set before the nodes' runs start.
    struct RestartRule {
        bool hosts = false;
        bool jobs = false;
        bool ruled = false;  // a ruled_restart may restart the gang
    };
    void set_restart_rule(RestartRule rule);
    // Whether these causes (by rank) restart the gang under `rule`: a job or host was lost,
    // each such loss is one the rule restarts, and no node failed for another reason.
    static bool restarts(const std::vector<Cause>& causes, RestartRule rule);
    // Node `rank`'s run is over (its thread returns).
    void over(int rank);
    // Node `rank`'s run is about to run its shutdown_cmds: when the gang may restart, waits
    // until every other node's run is over or waiting here too, and returns whether the gang
    // restarts (the node's host goes on, so its shutdown_cmds are not run). At most `wait_s` a
    // call: nullopt when the time passed first.
    std::optional<bool> holds_shutdown(int rank, double wait_s);
    // Whether a node held its shutdown_cmds for a restart (holds_shutdown said true).
    bool held_any() const;
    // Each rank's first cause of failure (none: it did not fail), by rank.
    std::vector<Cause> causes() const;
    int size() const { return static_cast<int>(arrived_.size()); }

  private:
    mutable std::mutex mutex_;
    std::condition_variable changed_;
    std::vector<bool> arrived_;
    std::optional<Failure> failure_;
    std::vector<Cause> causes_;
    std::vector<bool> over_, holding_;
    RestartRule rule_;
    bool held_any_ = false;
};

}  // namespace mlt
