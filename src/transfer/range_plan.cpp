// The range plan: range sizes, near and far links, links, channels and commands per transfer.

#include "range_plan.h"

#include <algorithm>
#include <cmath>
#include <thread>

#include "channel_cost.h"
#include "mlt/transfer/ranges.h"

namespace mlt {

namespace transfer_detail {

uint64_t whole_blocks(uint64_t n) {
    return (n + kRangeBlock - 1) / kRangeBlock * kRangeBlock;
}

std::vector<Range> cut_ranges(uint64_t size, uint64_t range_size) {
    std::vector<Range> out;
    for (uint64_t at = 0; at < size || (size == 0 && out.empty()); at += range_size) {
        out.push_back({out.size(), at, std::min(range_size, size - at)});
        if (size == 0) break;
    }
    return out;
}

// Channels per link, each running one remote command for its ranges: one's start (a
// channel, the command, the remote shell) overlaps the others' bytes, and each channel
// brings its window. sshd's is 2 MiB, so an upload moves at most 2 MiB per round trip per
// channel: over a far link 8 give a connection 84 MB/s at 200 ms (4 gave 42, and the two
// connections auto starts with then held an upload to 84 MB/s for the 2 s its first growth
// step took); with the control shell that is 9 of sshd's 10 (MaxSessions). A download
// reads with windows of up to 16 MiB (read_size), so 4 do there. Over a near link the
// window is no limit and every remote command more costs CPU (a login shell each): 2 there.
constexpr size_t kChannelsPerFarLinkUp = 8;
constexpr size_t kChannelsPerFarLinkDown = 4;
constexpr size_t kChannelsPerNearLink = 2;

size_t channels_per_link(bool near, bool up) {
    if (near) return kChannelsPerNearLink;
    return up ? kChannelsPerFarLinkUp : kChannelsPerFarLinkDown;
}

// Each command costs a channel, its start and a login shell's profile (round trips, and
// 0.1-0.2 s of CPU with pyenv). Over a near link that CPU is the transfer's own (the
// cipher's cores): 16 ranges a command moved 1 GiB over loopback on 2 cores at 309-323 MB/s
// down and 351-376 up, where 4 moved 165-262 and 264-276. Over a far link 4 keep the
// commands of the tail short, so that the links end together. A range is recorded as its
// hash comes (judge_legs), so a long command killed midway keeps what it moved.
size_t ranges_per_command(bool near) {
    return near ? 16 : 4;
}

// 2 over a far link; over a near link one per two local cores (1 to 8), and no growth. There
// a stream is bound by a core's cipher at each end, not by a window: on 2 cores the caller's
// link alone moved 1 GiB over loopback at 240-260 MB/s each way, where 2 connections moved
// 155-225 down; on 16 cores a 2 GiB file took 8 connections to 1.1 GB/s, and one that started
// at 2 was home before the growth (a second a step) got past 4 (0.65 GB/s).
size_t start_links(bool near) {
    if (!near) return kStartLinks;
    return std::clamp<size_t>(std::thread::hardware_concurrency() / 2, 1, kAutoConnections);
}

// The rate is measured over windows of 0.5 s, or 5 round trips of a far link (up to 2 s): a
// new link's first command takes a few round trips before its bytes flow, and a window that
// ends before would make a step that pays look as if it did not.
std::chrono::duration<double> window_for(const Remote& remote) {
    return std::chrono::duration<double>(std::clamp(5 * remote.round_trip_s(), 0.5, 2.0));
}

LinkPlan plan_links(const Remote& caller, uint64_t bytes, size_t ranges, uint64_t range_size,
                    bool up, bool tuning, size_t most_links, size_t cores) {
    const bool near = is_near(caller);
    LinkPlan plan;
    plan.channels = channels_per_link(near, up);
    plan.links = tuning ? std::min(start_links(near), most_links) : most_links;
    plan.per_command = ranges_per_command(near);
    const LinkCosts costs = link_costs(caller);
    if (!tuning || !costs.measured()) return plan;
    const double rate = costs.channel_rate(up);
    const size_t most_channels = std::min(plan.channels, std::max<size_t>(ranges, 1));
    // The caller's first command runs in its control shell, whose login was paid.
    plan.channels =
        channels_worth(bytes, rate, kConnectionRate, costs.channel_s, most_channels, 1, cores);
    // More links than the caller's only where they pay for their handshakes and logins.
    const double one_link = std::min(static_cast<double>(plan.channels) * rate, kConnectionRate);
    if (plan.links > 1 && !more_links_pay(bytes, one_link, 1, plan.links - 1, plan.channels, costs))
        plan.links = 1;
    if (plan.links > 1)
        plan.channels = channels_worth(bytes / plan.links, rate, kConnectionRate, costs.channel_s,
                                       most_channels, 1, cores);
    // A command's ranges: enough that its login is at most a tenth of its time.
    const double range_s = static_cast<double>(std::max<uint64_t>(range_size, 1)) / rate;
    const double wanted = std::ceil(10 * costs.channel_s / range_s);
    plan.per_command = std::max(plan.per_command, static_cast<size_t>(std::min(wanted, 256.0)));
    return plan;
}

}  // namespace transfer_detail

using namespace transfer_detail;

uint64_t range_size_for(uint64_t file_size) {
    constexpr uint64_t kMin = 16ull * 1024 * 1024;
    return std::max(kMin, whole_blocks(file_size / 256));
}

bool is_near(const Remote& remote) {
    return is_near_round_trip(remote.round_trip_s());
}

bool is_near_round_trip(double round_trip_s) {
    return round_trip_s >= 0 && round_trip_s < kNearRoundTrip;
}

size_t auto_start_connections(bool near) {
    return start_links(near);
}

bool ranges_pay(const Remote& remote, uint64_t size, const LinkPool* links) {
    const bool near = is_near(remote) && (!links || links->tuning());
    return size >= (near ? kNearRangeThreshold : kRangeThreshold);
}

bool uses_links(const Remote& remote, uint64_t size, const LinkPool* links) {
    if (!links || links->limit() == 0 || !ranges_pay(remote, size, links)) return false;
    const uint64_t range = range_size_for(size);
    const size_t ranges = static_cast<size_t>((size + range - 1) / range);
    const LinkPlan plan =
        plan_links(remote, size, ranges, range, true, links->tuning(), links->limit() + 1);
    return plan.links > 1 && ranges > plan.channels;
}

}  // namespace mlt
