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
    explicit Gang(int nodes) : arrived_(static_cast<size_t>(nodes), false) {}

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
    void fail(int rank, const std::string& host, int exit_code, bool training = false);
    // Whether every node arrived at the barrier or passed it.
    bool all_arrived() const;
    // Whether the nodes are to stop (a node failed).
    bool stopping() const;
    std::optional<Failure> first_failure() const;
    int size() const { return static_cast<int>(arrived_.size()); }

  private:
    mutable std::mutex mutex_;
    std::condition_variable changed_;
    std::vector<bool> arrived_;
    std::optional<Failure> failure_;
};

}  // namespace mlt
