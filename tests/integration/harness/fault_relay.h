#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace mlt_test {

// The way bytes flow through a FaultRelay.
enum class Direction { up /* client to target */, down /* target to client */ };

// A TCP relay on 127.0.0.1 that forwards every accepted connection to 127.0.0.1:target_port
// and injects network faults on command: resets (a dropped link), black holes (a sleeping
// laptop, a lost NAT entry), byte-exact triggers for both, and a bandwidth cap. One thread
// runs the relay; every method may be called from any other thread. The commands (cut,
// stall, resume, set_rate, *_after) return once the relay thread has carried them out.
class FaultRelay {
  public:
    // Listens on 127.0.0.1:listen_port (0: the kernel picks one); throws std::runtime_error
    // when it cannot listen. A given port that is in use (a host coming back on the port an
    // earlier relay left, which another test's connection may hold for a moment as its own
    // ephemeral port) is tried again for up to `wait_for_port`.
    explicit FaultRelay(int target_port, int listen_port = 0,
                        std::chrono::milliseconds wait_for_port = std::chrono::seconds(30));
    ~FaultRelay();  // stops the thread and resets every open connection; never hangs
    FaultRelay(const FaultRelay&) = delete;
    FaultRelay& operator=(const FaultRelay&) = delete;

    // The port clients connect to.
    int port() const { return port_; }

    // Resets every open connection on both sides (RST, as after a dropped link); later
    // connections are forwarded normally.
    void cut();
    // Stops forwarding on every connection, open or new, without closing any: bytes stay
    // in the relay (up to a buffer per direction, then TCP back-pressure) until resume().
    void stall();
    // Forwards again, everything held included.
    void resume();
    // Arms a one-shot trigger (replacing an armed one): once `bytes` more bytes went `d`,
    // counted over all connections, the relay forwards no further byte and cuts (all
    // connections; the peers first receive what was forwarded) or stalls.
    void cut_after(Direction d, uint64_t bytes) { arm(d, bytes, true); }
    void stall_after(Direction d, uint64_t bytes) { arm(d, bytes, false); }
    // Paces each direction of each connection to `bytes_per_second` (0: unlimited, the
    // default).
    void set_rate(uint64_t bytes_per_second);

    // Bytes forwarded `d` since construction; like the two below, it first lets the relay
    // thread finish its current round, so it counts every byte a peer has received.
    uint64_t bytes(Direction d) const;
    // Connections accepted since construction, and those open now.
    std::size_t connections_accepted() const;
    std::size_t open_connections() const;
    // True from stall() (or a fired stall_after) until resume().
    bool stalled() const { return stalled_; }
    // How many times all connections were reset (cut() and fired cut_after).
    std::size_t cuts() const { return cuts_; }
    // Waits (bounded) until the last armed trigger has fired; false on timeout or when none
    // was ever armed.
    bool wait_fired(std::chrono::milliseconds timeout);

  private:
    struct Link;
    struct Trigger;

    // Queues `command` for the relay thread and waits (bounded) until it ran there.
    void run_in_loop(std::function<void()> command) const;
    void arm(Direction d, uint64_t bytes, bool cut);
    // The relay thread: one poll() loop over all sockets and the wake pipe.
    void loop();
    void run_commands();
    void accept_new();
    bool wants_write(Link& link, int dir, int* timeout);
    void pump(Link& link);
    void forward(Link& link, int dir);
    void fire_trigger();
    void mark_fired();
    bool outgoing_drained() const;
    void reset_all();
    bool forwarding() const { return !stalled_ && !cutting_; }

    int target_port_ = 0;
    int port_ = 0;
    int listen_fd_ = -1;
    int wake_pipe_[2] = {-1, -1};  // wakes the relay thread for a command

    // Shared with the caller threads.
    mutable std::mutex mutex_;
    mutable std::condition_variable cv_;
    mutable std::deque<std::function<void()>> commands_;
    mutable uint64_t commands_queued_ = 0;
    uint64_t commands_done_ = 0;
    bool armed_ever_ = false;
    bool fired_ = false;
    std::atomic<uint64_t> bytes_[2] = {{0}, {0}};
    std::atomic<std::size_t> accepted_{0};
    std::atomic<std::size_t> open_{0};
    std::atomic<bool> stalled_{false};
    std::atomic<std::size_t> cuts_{0};

    // Owned by the relay thread.
    std::vector<std::unique_ptr<Link>> links_;
    std::unique_ptr<Trigger> trigger_;
    uint64_t rate_ = 0;
    bool cutting_ = false;  // a fired cut_after waits for the forwarded bytes to leave
    int cut_dir_ = 0;
    std::chrono::steady_clock::time_point cut_deadline_;
    bool stopping_ = false;
    std::thread thread_;
};

}  // namespace mlt_test
