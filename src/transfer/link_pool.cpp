// ConnectionLinks: a transfer's side connections, opened on first use or ahead (link_pool.h).

#include "mlt/transfer/link_pool.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "mlt/ssh/connection.h"
#include "mlt/util/interrupt.h"

namespace mlt {

ConnectionLinks::ConnectionLinks(Connection& primary, int wanted)
    : primary_(primary),
      wanted_(wanted),
      links_(limit()),
      ahead_(limit()),
      failed_ahead_(limit(), 0) {}

ConnectionLinks::~ConnectionLinks() {
    for (auto& t : ahead_)
        if (t.joinable()) t.join();
}

// The links a RangeRunner connects first: with auto its first step and the next (4
// connections, the caller's among them), and one more for tar streams beside the ranges.
constexpr size_t kAheadLinks = 4;

void ConnectionLinks::open_ahead() {
    open_links(std::min(limit(), wanted_ > 0 ? limit() : kAheadLinks));
}

void ConnectionLinks::open_first() {
    open_links(std::min<size_t>(limit(), 1));
}

void ConnectionLinks::open_links(size_t n) {
    for (size_t i = 0; i < n; ++i) {
        if (links_[i] || ahead_[i].joinable()) continue;
        ++connecting_;  // before the thread, which may end first
        try {
            ahead_[i] = thread_without_signals([this, i] {
                try {
                    if (!connect(i)) failed_ahead_[i] = 1;
                } catch (const Error&) {
                    failed_ahead_[i] = 1;  // a signal: the caller's thread sees it
                }
                --connecting_;
            });
        } catch (...) {
            --connecting_;  // no thread
            throw;
        }
    }
}

size_t ConnectionLinks::limit() const {
    return (wanted_ > 0 ? static_cast<size_t>(wanted_) : kAutoConnections) - 1;
}

Remote* ConnectionLinks::link(size_t i) {
    if (i >= links_.size()) return nullptr;
    if (ahead_[i].joinable()) ahead_[i].join();
    if (failed_ahead_[i]) {
        failed_ahead_[i] = 0;
        return nullptr;  // as a refusal: the links open so far carry the transfer
    }
    return connect(i);
}

Remote* ConnectionLinks::connect(size_t i) {
    if (!offered_) return nullptr;
    if (!links_[i]) {
        links_[i] = primary_.open_side();
        if (!links_[i]) {
            offered_ = false;
            return nullptr;
        }
    }
    try {
        return &links_[i]->remote();
    } catch (const Error& e) {
        // A server at its MaxStartups or MaxSessions refuses more: the links open so far
        // carry the transfer.
        if (is_signal(e.kind())) throw;
        spdlog::debug("no connection {} for ranges: {}", i + 1, e.what());
        links_[i].reset();
        return nullptr;
    }
}

void ConnectionLinks::drop(size_t i) {
    if (i < links_.size()) links_[i].reset();
}

}  // namespace mlt
