// LiveSync: the pulls of --sync-every of one run, the current host's and the lost hosts'.
#include "mlt/train/watch/live_sync.h"

namespace mlt {

LiveSync::~LiveSync() {
    if (current_ && current_->running()) current_->stop();
}

void LiveSync::start(const TrainPlan& plan, const std::string& run_id, StatusLine& status,
                     Reporter& reporter, Connection& connection) {
    if (current_ && current_->running()) return;
    if (!current_) current_ = std::make_unique<LivePull>(plan, run_id, status, reporter);
    current_->start(connection);
}

void LiveSync::stop(StatusLine& status) {
    if (!current_ || !current_->running()) return;
    current_->stop();
    status.set(kSyncPart, "");
}

void LiveSync::retire() {
    if (!current_) return;
    current_->request_stop();
    retired_.push_back(std::move(current_));
}

void LiveSync::throw_if_tampered() const {
    // A host that lied to a pull beside the training may have lied to the collection in ways
    // no check saw: the run is not a success, whatever came home after.
    if (current_)
        if (auto lied = current_->tampered()) throw *lied;
    for (const auto& pull : retired_)
        if (auto lied = pull->tampered()) throw *lied;
}

}  // namespace mlt
