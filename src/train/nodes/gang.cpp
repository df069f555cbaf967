// Gang: the barrier and the gang stop of a multi-node run.
#include "mlt/train/nodes/gang.h"

#include <algorithm>
#include <chrono>

namespace mlt {

std::optional<bool> Gang::arrive(int rank, double wait_s) {
    std::unique_lock<std::mutex> lock(mutex_);
    arrived_.at(static_cast<size_t>(rank)) = true;
    changed_.notify_all();
    const auto ready = [this] {
        return failure_.has_value() ||
               std::all_of(arrived_.begin(), arrived_.end(), [](bool a) { return a; });
    };
    if (!changed_.wait_for(lock, std::chrono::duration<double>(wait_s), ready)) return std::nullopt;
    return !failure_.has_value();
}

void Gang::passed(int rank) {
    std::lock_guard<std::mutex> lock(mutex_);
    arrived_.at(static_cast<size_t>(rank)) = true;
    changed_.notify_all();
}

void Gang::fail(int rank, const std::string& host, int exit_code, bool training) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!failure_) failure_ = Failure{rank, host, exit_code, training};
    changed_.notify_all();
}

bool Gang::all_arrived() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return std::all_of(arrived_.begin(), arrived_.end(), [](bool a) { return a; });
}

bool Gang::stopping() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return failure_.has_value();
}

std::optional<Gang::Failure> Gang::first_failure() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return failure_;
}

}  // namespace mlt
