#pragma once
// The connections of one transfer beyond the caller's own: the pool the ranges of a big file
// (mlt/transfer/ranges.h) and the tar streams beside them go over.

#include <atomic>
#include <cstddef>
#include <memory>
#include <thread>
#include <vector>

#include "mlt/ssh/remote.h"

namespace mlt {

class Connection;

// The connections of one transfer beyond the caller's own (which moves ranges too). Link i
// is used by one thread at a time; different links by different threads at once, and they
// connect side by side.
class LinkPool {
  public:
    virtual ~LinkPool() = default;
    // The most links this transfer may use besides the caller's (transfer.connections N
    // less one, or the auto limit less one).
    virtual size_t limit() const = 0;
    // True for `auto`: over a far link start with 2 connections (the caller's and one link)
    // and add links while the measured rate still gains; over a near link use one per two
    // local cores.
    virtual bool tuning() const = 0;
    // Link i (0 <= i < limit()), opened on first use; nullptr when it cannot be opened now
    // (the server refused it: MaxStartups, MaxSessions; a refusal is no error).
    virtual Remote* link(size_t i) = 0;
    // Drops link i after its transport failed; the next link(i) opens it anew.
    virtual void drop(size_t i) = 0;
    // Starts connecting the links a transfer opens first, in the background, while the
    // caller still talks over its own link (the upload's last round trips before its
    // ranges). None by default.
    virtual void open_ahead() {}
    // Starts connecting the first link only, in the background: for a transfer that may take
    // links over a far link, before it knows it will (a big local file to upload whose remote
    // copy is not listed yet; a download). One connection that may go unused, against the
    // four or five round trips a link takes to open once it is known to be needed.
    virtual void open_first() {}
};

// The most connections `auto` grows to, the caller's included: within sshd's MaxStartups
// (10 unauthenticated at a time) with room for the run's other connections.
constexpr size_t kAutoConnections = 8;

// A LinkPool of side connections of `primary` (Connection::open_side: the same verified host
// key and credentials, never a prompt). `wanted` 0 means auto. Without side connections
// (open_side gives nullptr) it has none, and the ranges go one by one over the caller's link.
class ConnectionLinks : public LinkPool {
  public:
    ConnectionLinks(Connection& primary, int wanted);
    ~ConnectionLinks() override;
    size_t limit() const override;
    bool tuning() const override { return wanted_ == 0; }
    Remote* link(size_t i) override;
    void drop(size_t i) override;
    // Links 0-3 with auto, all with N (a thread each); link(i) waits for its thread. A link
    // that could not connect ahead counts as refused.
    void open_ahead() override;
    void open_first() override;
    // Whether a link opened ahead is still connecting (destroying this waits for it).
    bool connecting() const { return connecting_ > 0; }

  private:
    // Links 0..n-1 that are not open nor opening start connecting, a thread each.
    void open_links(size_t n);
    // Link i, opened now unless it is: nullptr when it was not offered or the server
    // refused it. A signal goes up.
    Remote* connect(size_t i);

    Connection& primary_;
    const int wanted_;
    std::atomic<bool> offered_{true};  // open_side gave a connection so far
    std::vector<std::unique_ptr<Connection>> links_;
    std::vector<std::thread> ahead_;  // per link: connecting ahead
    std::vector<char> failed_ahead_;  // per link: its connect ahead failed
    std::atomic<int> connecting_{0};  // links connecting ahead now
};

}  // namespace mlt
