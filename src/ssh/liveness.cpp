// Liveness: noticing a link that went silent (laptop asleep, NAT entry gone, a cable pulled
// somewhere on the way) as OpenSSH's ServerAliveInterval does; FloorCheck: noticing a data
// stream that moves too little on a link that answers.
#include "liveness.h"

#include <libssh/server.h>  // ssh_send_keepalive: declared there, works on client sessions
#include <spdlog/spdlog.h>

namespace mlt::ssh_detail {

namespace {

// With keepalives off, nothing arrives on a healthy but idle link either (a training that
// prints nothing): this is long enough for any log follow segment or command of mlt's.
constexpr std::chrono::seconds kSilentLimit{600};

}  // namespace

void Liveness::check(ssh_session s, const std::string& display) {
    using namespace std::chrono;
    const auto now = steady_clock::now();
    if (rx.in_packets != seen_packets) {
        seen_packets = rx.in_packets;
        last_rx = now;
        unanswered = 0;
        return;
    }
    if (interval_s <= 0) {
        // Keepalives off (ServerAliveInterval 0): a link silent for kSilentLimit is still
        // given up, so that no wait lasts for ever.
        if (now - last_rx > kSilentLimit)
            throw Error(ErrorKind::timeout,
                        "no answer from " + display + " for " +
                            std::to_string(kSilentLimit.count()) +
                            " s (keepalives are off): the link is down or stalled",
                        "set ServerAliveInterval to notice a dead link sooner");
        return;
    }
    const auto interval = seconds(interval_s);
    if (now - std::max(last_rx, last_probe) < interval) return;
    if (unanswered >= count_max) {
        const auto silent = duration_cast<seconds>(now - last_rx).count();
        throw Error(ErrorKind::timeout,
                    "no answer from " + display + " for " + std::to_string(silent) +
                        " s: the link is down or stalled",
                    "check the network; ServerAliveInterval/ServerAliveCountMax set how soon "
                    "this is noticed");
    }
    // Non-blocking, sent twice: in blocking mode the call would wait for the reply itself,
    // and in non-blocking mode every second call only takes in the previous reply. Either
    // way the reply (sshd answers REQUEST_FAILURE) shows up as a received packet.
    ssh_set_blocking(s, 0);
    ssh_send_keepalive(s);
    ssh_send_keepalive(s);
    ssh_set_blocking(s, 1);
    last_probe = now;
    ++unanswered;
    spdlog::trace("keepalive {} to {} after {} ms of silence", unanswered, display,
                  duration_cast<milliseconds>(now - last_rx).count());
}

FloorCheck::FloorCheck(const ProgressFloor& floor, std::string data_stream, std::string display)
    : on_(floor.on() && !data_stream.empty()),
      watch_(floor),
      data_stream_(std::move(data_stream)),
      display_(std::move(display)) {}

void FloorCheck::check() {
    if (!on_) return;
    const std::optional<double> rate = watch_.below_floor();
    if (!rate) return;
    throw StallError(ErrorKind::remote,
                     data_stream_ + " on " + display_ + " " + stall_text(watch_.floor(), *rate),
                     "the host, its disk or the link is too slow or stuck; transfer.min_rate and "
                     "transfer.stall_seconds set this floor (docs/settings.md)");
}

}  // namespace mlt::ssh_detail
