#pragma once
// LiveSync: the pulls of --sync-every of one run: the current host's, and those of hosts the
// run left (ending on their own).

#include <memory>
#include <string>
#include <vector>

#include "mlt/train/watch/live_pull.h"

namespace mlt {

class LiveSync {
  public:
    LiveSync() = default;
    ~LiveSync();  // stops the current pull (waits for its thread)
    LiveSync(const LiveSync&) = delete;
    LiveSync& operator=(const LiveSync&) = delete;

    // Starts the pull of the current host over `connection` unless it runs.
    void start(const TrainPlan& plan, const std::string& run_id, StatusLine& status,
               Reporter& reporter, Connection& connection);
    // Stops it (waits for its thread) and clears its part of the live line.
    void stop(StatusLine& status);
    // The host is lost: its pull is asked to stop and ends on its own.
    void retire();
    // Throws the tampering that a pull met, if one did.
    void throw_if_tampered() const;

  private:
    std::vector<std::unique_ptr<LivePull>> retired_;  // a lost host's, ending
    std::unique_ptr<LivePull> current_;
};

}  // namespace mlt
