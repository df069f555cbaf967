// The cost model of channels and connections (channel_cost.h).

#include "channel_cost.h"

#include <algorithm>
#include <limits>
#include <vector>

namespace mlt::transfer_detail {

namespace {

// sshd's window for what a channel sends up (CHAN_SES_WINDOW_DEFAULT), and mlt's own for
// what comes down (channel_io.h: the round trip times kWindowRate, 2 to 16 MiB).
constexpr double kServerWindow = 2.0 * 1024 * 1024;
constexpr double kOwnWindowRate = 400e6;
constexpr double kOwnWindowMin = 2.0 * 1024 * 1024, kOwnWindowMax = 16.0 * 1024 * 1024;
// A round trip not timed yet counts as a far one's, so that nothing is overestimated.
constexpr double kUnknownRoundTrip = 0.05;

}  // namespace

double LinkCosts::channel_rate(bool up) const {
    const double rtt = round_trip_s > 0 ? round_trip_s : kUnknownRoundTrip;
    const double window =
        up ? kServerWindow : std::clamp(rtt * kOwnWindowRate, kOwnWindowMin, kOwnWindowMax);
    return std::min(window / rtt, kConnectionRate);
}

double LinkCosts::connect_s() const {
    return kConnectRoundTrips * (round_trip_s > 0 ? round_trip_s : kUnknownRoundTrip) + channel_s;
}

double LinkCosts::listener_s() const {
    constexpr double kPythonStart = 0.1;
    return 2 * (round_trip_s > 0 ? round_trip_s : kUnknownRoundTrip) + kPythonStart;
}

bool LinkCosts::listener_pays(size_t extra) const {
    return measured() && channel_s > kListenAbove &&
           static_cast<double>(extra) * channel_s > listener_s();
}

LinkCosts link_costs(const Remote& remote) {
    LinkCosts c;
    c.round_trip_s = std::max(0.0, remote.round_trip_s());
    c.measured_login = remote.login_cost_s() >= 0;
    c.channel_s = std::max(0.0, remote.channel_cost_s());
    return c;
}

double finish_seconds(uint64_t bytes, double rate, double cap, size_t channels, size_t open,
                      double login_s, size_t cores) {
    cores = std::max<size_t>(cores, 1);
    if (bytes == 0) return 0;
    if (channels == 0 || rate <= 0) return std::numeric_limits<double>::infinity();
    std::vector<double> starts;
    for (size_t i = 0; i < channels; ++i)
        starts.push_back(i < open ? 0.0 : static_cast<double>((i - open) / cores + 1) * login_s);
    double t = 0, left = static_cast<double>(bytes);
    for (size_t i = 0; i < starts.size(); ++i) {
        t = std::max(t, starts[i]);
        const double speed = std::min(static_cast<double>(i + 1) * rate, cap);
        const double until =
            i + 1 < starts.size() ? starts[i + 1] : std::numeric_limits<double>::infinity();
        if (left <= speed * (until - t)) return t + left / speed;
        left -= speed * (until - t);
    }
    return t;  // not reached: the last segment has no end
}

size_t channels_worth(uint64_t bytes, double rate, double cap, double login_s, size_t most,
                      size_t open, size_t cores) {
    most = std::max<size_t>(most, 1);
    std::vector<double> finish;
    for (size_t k = 1; k <= most; ++k)
        finish.push_back(finish_seconds(bytes, rate, cap, k, std::min(open, k), login_s, cores));
    const double best = *std::min_element(finish.begin(), finish.end());
    size_t k = 1;
    while (finish[k - 1] > std::max(best * 1.05, best + kWorthSaving)) ++k;
    return k;
}

bool more_links_pay(uint64_t bytes_left, double rate, size_t links, size_t more, size_t channels,
                    const LinkCosts& costs) {
    if (more == 0 || rate <= 0 || links == 0) return false;
    const double now = static_cast<double>(bytes_left) / rate;
    const double at_best = now * static_cast<double>(links) / static_cast<double>(links + more);
    // Their handshakes overlap; their logins take the remote's CPU one after the other.
    const double cost = costs.connect_s() - costs.channel_s +
                        static_cast<double>(more * std::max<size_t>(channels, 1)) * costs.channel_s;
    return now - at_best > cost;
}

}  // namespace mlt::transfer_detail
