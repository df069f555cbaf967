// The cost model of channels and connections (src/transfer/channel_cost.h) and the plans made
// from it: a host whose login profile is slow gets fewer channels and connections, one that
// is quick gets what the fixed rules give, and one whose cost was not measured is unchanged.

#include <gtest/gtest.h>

#include <cmath>

#include "mlt/transfer/sync.h"
#include "transfer/channel_cost.h"
#include "transfer/range_plan.h"

namespace {

using mlt::transfer_detail::channels_worth;
using mlt::transfer_detail::finish_seconds;
using mlt::transfer_detail::LinkCosts;
using mlt::transfer_detail::more_links_pay;
using mlt::transfer_detail::plan_links;

constexpr uint64_t kMiB = 1024 * 1024;
constexpr double kCap = 125e6;

// A link with a known round trip and login cost; it runs nothing.
class CostedRemote : public mlt::Remote {
  public:
    CostedRemote(double rtt, double login) : rtt_(rtt), login_(login) {}
    const std::string& name() const override { return name_; }
    mlt::RemoteOutput run(const std::string&, std::string_view) override { return {}; }
    int stream(const std::string&, const mlt::InputSource&, const mlt::OutputSink&,
               const mlt::OutputSink&) override {
        return 0;
    }
    double round_trip_s() const override { return rtt_; }
    double login_cost_s() const override { return login_; }

  private:
    std::string name_ = "u@h:22";
    double rtt_, login_;
};

TEST(ChannelCost, FinishTimesCountTheLoginsOneAfterTheOther) {
    // One channel open already: the bytes at its rate.
    EXPECT_DOUBLE_EQ(finish_seconds(100, 10, kCap, 1, 1, 5), 10);
    // One new channel: its login first.
    EXPECT_DOUBLE_EQ(finish_seconds(100, 10, kCap, 1, 0, 5), 15);
    // Two new ones: the second starts a login after the first (at 5 and 10 s): by 10 s the
    // first moved 50, the other 50 take 2.5 s at 20 a second.
    EXPECT_DOUBLE_EQ(finish_seconds(100, 10, kCap, 2, 0, 5), 12.5);
    // Two cores: two new channels start together, a login from now.
    EXPECT_DOUBLE_EQ(finish_seconds(100, 10, kCap, 2, 0, 5, 2), 10);
    // The cap binds the channels together.
    EXPECT_DOUBLE_EQ(finish_seconds(100, 10, 10, 2, 2, 0), 10);
    EXPECT_DOUBLE_EQ(finish_seconds(0, 10, kCap, 2, 0, 5), 0);
}

TEST(ChannelCost, ASlowerLoginNeverGetsMoreChannelsAndMoreBytesNeverFewer) {
    const double rate = 2.0 * kMiB / 0.1;  // sshd's window at 100 ms
    size_t last = 99;
    for (double login : {0.0, 0.01, 0.08, 0.3, 0.75, 2.0}) {
        const size_t k = channels_worth(256 * kMiB, rate, kCap, login, 16);
        EXPECT_LE(k, last) << login;
        last = k;
    }
    size_t fewest = 0;
    for (uint64_t mib : {1, 8, 64, 256, 1024}) {
        const size_t k = channels_worth(mib * kMiB, rate, kCap, 0.75, 16);
        EXPECT_GE(k, fewest) << mib;
        fewest = k;
    }
    // A small transfer is not worth a second login; a free login fills the connection.
    EXPECT_EQ(channels_worth(1 * kMiB, rate, kCap, 0.75, 16), 1u);
    EXPECT_EQ(channels_worth(256 * kMiB, rate, kCap, 0.0, 16),
              static_cast<size_t>(std::ceil(kCap / rate)));
}

TEST(ChannelCost, LinksPayOnlyWhereTheTimeTheySaveExceedsTheirLogins) {
    LinkCosts costs;
    costs.round_trip_s = 0.1;
    costs.channel_s = 0.75;
    // 256 MiB at 168 MB/s: 1.6 s, at best halved: 0.8 s saved, against 0.5 s of handshake
    // and 8 logins.
    EXPECT_FALSE(more_links_pay(256 * kMiB, 168e6, 1, 1, 8, costs));
    costs.channel_s = 0.01;  // the channel listener's
    EXPECT_TRUE(more_links_pay(1024 * kMiB, 168e6, 1, 1, 8, costs));
    EXPECT_FALSE(more_links_pay(8 * kMiB, 168e6, 1, 1, 8, costs));
    EXPECT_FALSE(more_links_pay(1024 * kMiB, 168e6, 1, 0, 8, costs));
}

TEST(ChannelCost, AFarHostWithASlowProfileStartsOnOneConnectionWithFewerChannels) {
    const uint64_t size = 256 * kMiB, range = 16 * kMiB;
    const size_t ranges = size / range;
    // Not measured: the fixed rules (8 channels up over a far link, 2 connections to start).
    const auto fixed = plan_links(CostedRemote(0.1, -1), size, ranges, range, true, true, 8);
    EXPECT_EQ(fixed.channels, 8u);
    EXPECT_EQ(fixed.links, 2u);
    EXPECT_EQ(fixed.per_command, 4u);
    // A 750 ms profile: one connection, fewer channels, and a download command that moves
    // many ranges.
    const auto slow = plan_links(CostedRemote(0.1, 0.75), size, ranges, range, true, true, 8);
    EXPECT_EQ(slow.links, 1u);
    EXPECT_LT(slow.channels, fixed.channels);
    EXPECT_GE(slow.channels, 2u);
    const auto down = plan_links(CostedRemote(0.1, 0.75), size, ranges, range, false, true, 8);
    EXPECT_EQ(down.links, 1u);
    EXPECT_EQ(down.channels, 1u);
    EXPECT_GT(down.per_command, fixed.per_command);
    // An 80 ms profile and a big file: the start of the fixed rules.
    const auto quick = plan_links(CostedRemote(0.1, 0.08), 1024 * kMiB, 64, range, true, true, 8);
    EXPECT_EQ(quick.links, 2u);
    EXPECT_GE(quick.channels, 6u);
    // A host with more free cores starts the logins side by side: as many channels or more.
    const auto cores8 = plan_links(CostedRemote(0.1, 0.75), size, ranges, range, true, true, 8, 8);
    EXPECT_GE(cores8.channels, slow.channels);
    // A number of connections asked for is kept.
    const auto asked = plan_links(CostedRemote(0.1, 0.75), size, ranges, range, true, false, 4);
    EXPECT_EQ(asked.links, 4u);
}

TEST(ChannelCost, UploadStreamsAreAsManyAsPayForTheirLogins) {
    EXPECT_EQ(mlt::upload_streams_worth(CostedRemote(0.05, -1), 64 * kMiB), mlt::kMaxUploadStreams);
    EXPECT_EQ(mlt::upload_streams_worth(CostedRemote(0.05, 0.75), 4 * kMiB), 1u);
    const size_t slow = mlt::upload_streams_worth(CostedRemote(0.05, 0.75), 64 * kMiB);
    const size_t quick = mlt::upload_streams_worth(CostedRemote(0.05, 0.01), 64 * kMiB);
    EXPECT_LT(slow, quick);
    // A quick login: as many as reach what a connection moves (sshd's window at 50 ms).
    EXPECT_EQ(quick, static_cast<size_t>(std::ceil(kCap / (2.0 * kMiB / 0.05))));
}

}  // namespace
