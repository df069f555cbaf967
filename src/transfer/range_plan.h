#pragma once
// The range plan: how a big file is cut into ranges, and how many connections, channels and
// remote commands move them (the policy of mlt/transfer/ranges.h). Private to src/transfer/.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "mlt/ssh/remote.h"

namespace mlt::transfer_detail {

using Steady = std::chrono::steady_clock;

struct Range {
    size_t index = 0;
    uint64_t offset = 0;
    uint64_t length = 0;
};

// `n` rounded up to whole kRangeBlock blocks.
uint64_t whole_blocks(uint64_t n);

// A file of `size` in ranges of `range_size` (one empty range for an empty file).
std::vector<Range> cut_ranges(uint64_t size, uint64_t range_size);

// A range that arrives with another hash than it was sent with is moved again, this many
// times in all before it counts as tampering.
constexpr int kMovesPerRange = 3;
// A changed source is moved again this many rounds in all.
constexpr int kSourceRounds = 3;
// A link lost mid-transfer is opened again this many times in all before the loss goes up.
constexpr int kLinkRetries = 4;
// `auto`: links at the start over a far link, and the gain a new link must bring to keep
// growing.
constexpr size_t kStartLinks = 2;
constexpr double kWorthGrowing = 1.10;

// The commands one link runs side by side (a channel each), over a near or a far link, up or
// down.
size_t channels_per_link(bool near, bool up);
// The most ranges one remote command moves, one after the other.
size_t ranges_per_command(bool near);
// The links `auto` starts with.
size_t start_links(bool near);

// How a transfer of ranges starts: the channels (commands side by side) on each link, the
// links (connections, the caller's included) and the most ranges one command moves.
struct LinkPlan {
    size_t channels = 1;
    size_t links = 1;
    size_t per_command = 1;
};
// The plan for `bytes` in `ranges` ranges of `range_size` over `caller`'s link and up to
// `most_links` - 1 more (`tuning`: auto, which starts with start_links and grows; else all
// of them). With auto, where the caller's link measured what a new channel costs (a login),
// the channels and links are those the cost model says pay back (channel_cost.h), never
// more than channels_per_link and start_links, and a download command moves enough ranges
// that its login is a tenth of its time at most; otherwise (a number of connections asked
// for) the fixed rules above. `cores`: the host's free cores (0: not known, taken as 1).
LinkPlan plan_links(const Remote& caller, uint64_t bytes, size_t ranges, uint64_t range_size,
                    bool up, bool tuning, size_t most_links, size_t cores = 0);
// The window over which `auto` measures the rate of a step.
std::chrono::duration<double> window_for(const Remote& remote);

}  // namespace mlt::transfer_detail
