#pragma once
// Whether the link still answers (Liveness), and whether a data stream on it moves enough
// (FloorCheck). Private to src/ssh/.

#include <chrono>
#include <cstdint>
#include <string>

#include "handles.h"
#include "mlt/ssh/session.h"
#include "mlt/util/bounded.h"

namespace mlt::ssh_detail {

// After the connect, every blocking libssh call gives control back within this many
// seconds (SSH_OPTIONS_TIMEOUT); it then returns SSH_AGAIN, 0 or -1 instead of an error, and
// the caller asks Liveness whether the link still answers. 0 would mean "wait forever".
constexpr long kCallTimeoutS = 5;

// Whether the link still answers, in the spirit of OpenSSH's ServerAliveInterval and
// ServerAliveCountMax. libssh notices a reset link by itself, never a silent one: it counts
// every packet it receives (ssh_set_counters), and after `interval_s` seconds without one a
// keepalive request goes out, which sshd answers. When `count_max` of them went unanswered
// and another interval passed, the link is dead.
struct Liveness {
    int interval_s = 10;  // 0: no keepalives (a silent link is then never declared dead)
    int count_max = 2;
    // Registered with ssh_set_counters: libssh keeps the pointers, so they live as long as
    // the session (declared before it in Session::Impl).
    ssh_counter_struct tx{}, rx{};
    uint64_t seen_packets = 0;
    std::chrono::steady_clock::time_point last_rx = std::chrono::steady_clock::now();
    std::chrono::steady_clock::time_point last_probe{};
    int unanswered = 0;
    // The quickest answer to a request of ours so far (a channel open, a command frame of
    // the control shell): the link's round trip and a little; -1 before one.
    double fastest_reply_s = -1;

    // Keeps the time from `asked` (a request sent) to now (its answer) when it is the
    // quickest so far.
    void saw_reply(std::chrono::steady_clock::time_point asked) {
        const double took =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - asked).count();
        if (fastest_reply_s < 0 || took < fastest_reply_s) fastest_reply_s = took;
    }

    // Notes packets that arrived, sends a keepalive when one is due, and throws mlt::Error
    // (timeout, exit 255) naming `display` when the link is dead. Call it on every pass of a
    // wait loop and after every libssh call that may have timed out.
    void check(ssh_session s, const std::string& display);
};

// The data streams of one command, or of one exec_parallel (the channels of one connection
// together: a slow link shared by 8 of them is no stall), held to a progress floor
// (StreamJob::data_stream): counts the bytes that move and, asked on every pass of the read
// loop, throws StallError naming `data_stream` once too few moved over the floor's window.
// Does nothing without a name or a floor.
class FloorCheck {
  public:
    FloorCheck(const ProgressFloor& floor, std::string data_stream, std::string display);
    bool on() const { return on_; }
    // `n` bytes moved (stdout received, input taken).
    void moved(uint64_t n) {
        if (on_) watch_.add(n);
    }
    // Throws StallError when the streams are under the floor.
    void check();

  private:
    bool on_;
    ProgressWatch watch_;
    std::string data_stream_;
    std::string display_;
};

}  // namespace mlt::ssh_detail
