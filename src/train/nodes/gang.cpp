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
    fail(rank, host, exit_code, training ? Cause::training : Cause::other);
}

void Gang::fail(int rank, const std::string& host, int exit_code, Cause cause) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!failure_)
        failure_ = Failure{rank, host, exit_code,
                           cause == Cause::training || cause == Cause::ruled_restart};
    Cause& own = causes_.at(static_cast<size_t>(rank));
    if (own == Cause::none) own = cause;
    changed_.notify_all();
}

std::vector<Gang::Cause> Gang::causes() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return causes_;
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

void Gang::set_restart_rule(RestartRule rule) {
    std::lock_guard<std::mutex> lock(mutex_);
    rule_ = rule;
}

bool Gang::restarts(const std::vector<Cause>& causes, RestartRule rule) {
    bool lost = false;
    for (const Cause c : causes) {
        if (c == Cause::other) return false;
        if (c == Cause::host_lost && !rule.hosts) return false;
        if (c == Cause::job_lost && !rule.jobs) return false;
        if (c == Cause::ruled_restart && !rule.ruled) return false;
        lost = lost || c == Cause::host_lost || c == Cause::job_lost || c == Cause::ruled_restart;
    }
    return lost;
}

void Gang::over(int rank) {
    std::lock_guard<std::mutex> lock(mutex_);
    over_.at(static_cast<size_t>(rank)) = true;
    changed_.notify_all();
}

std::optional<bool> Gang::holds_shutdown(int rank, double wait_s) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (!rule_.hosts && !rule_.jobs && !rule_.ruled) return false;
    holding_.at(static_cast<size_t>(rank)) = true;
    changed_.notify_all();
    const auto known = [this] {
        for (size_t i = 0; i < over_.size(); ++i)
            if (!over_[i] && !holding_[i]) return false;
        return true;
    };
    if (!changed_.wait_for(lock, std::chrono::duration<double>(wait_s), known)) return std::nullopt;
    const bool restart = restarts(causes_, rule_);
    held_any_ = held_any_ || restart;
    return restart;
}

bool Gang::held_any() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return held_any_;
}

}  // namespace mlt
