#pragma once
// What a channel and a connection cost on a link, and how many of them a transfer is worth
// (docs/architecture.md, "What a channel costs"). Private to src/transfer/.
//
// Every channel that runs a command starts the account's login shell on the remote, which
// reads its startup files (a ~/.bashrc that runs `pyenv init` or conda's hook: 0.1-1 s of
// the remote's CPU). The control shell pays that once per connection; every further channel
// pays it again. The model: a channel moves at most its window per round trip (sshd grants
// 2 MiB to what goes up; mlt's own window down is kWindowRate times the round trip, up to
// 16 MiB), a connection moves at most kConnectionRate (one core's cipher at each end), and
// the logins of new channels run one after the other (a host with one core free: the worst
// case, and the bench's --cpus split). Over the caller's link the first command of a
// transfer runs in the control shell, whose login was paid (Session::exec_parallel).

#include <cstddef>
#include <cstdint>

#include "mlt/ssh/remote.h"

namespace mlt::transfer_detail {

// What one connection is taken to move at most: 1 Gbit/s, a rented host's usual link (one
// core's cipher at each end moved 240-376 MB/s over loopback on 2 cores). A bound of the
// model, not a measure: a link that moves more is found by the growth of `auto`, which
// measures (range_scheduler.h); more channels than reach it never pay.
constexpr double kConnectionRate = 125e6;
// The round trips a new connection takes before its first command can start (TCP, key
// exchange, authentication, the channel open and exec), besides its login.
constexpr double kConnectRoundTrips = 5;

// What a link's channels cost, as the caller's link measured them.
struct LinkCosts {
    double round_trip_s = 0;  // the quickest reply (0 when none was timed)
    // A new channel: its login, or next to nothing where the host's channel listener takes
    // it (Remote::channel_cost_s); the side connections of a transfer share that listener.
    double channel_s = 0;  // (0 when not measured)
    bool measured_login = false;
    // Whether the login was measured (the control shell started): else the model is not used.
    bool measured() const { return measured_login; }
    // The most a channel moves a second: its window per round trip, up or down.
    double channel_rate(bool up) const;
    // What a new connection costs before its first command runs (its handshake and a channel).
    double connect_s() const;
    // What starting the host's channel listener costs: a frame of the control shell and a
    // channel that checks sshd forwards to it (two round trips), and python3's start.
    double listener_s() const;
    // Whether the listener pays for itself where `extra` channels beside the control
    // shell's would each cost channel_s: they must exceed kListenAbove, and together what
    // the listener costs.
    bool listener_pays(size_t extra) const;
};

// The costs `remote` measured (Remote::round_trip_s, Remote::login_cost_s,
// Remote::channel_cost_s).
LinkCosts link_costs(const Remote& remote);

// When `bytes` are all moved over `channels` channels of `rate` bytes a second each (at most
// `cap` together), `open` of them running already and the others starting `login_s` after
// the ones before, `cores` at a time (the host's free cores; 0 or 1: one after another, the
// first `login_s` from now).
double finish_seconds(uint64_t bytes, double rate, double cap, size_t channels, size_t open,
                      double login_s, size_t cores = 1);

// A new channel that costs less than this to start is not worth the host's channel listener
// (Remote::listen_for_channels: one command, once a connection), whatever their number.
constexpr double kListenAbove = 0.05;

// Less than this saved is not worth a channel more, whatever the share.
constexpr double kWorthSaving = 0.1;

// The fewest channels, 1 to `most`, that move `bytes` within 5 % (or kWorthSaving) of the
// soonest any number does (finish_seconds); `open` of them run already (over the caller's link, the
// first command goes through its control shell, whose login was paid: Session::exec_parallel).
size_t channels_worth(uint64_t bytes, double rate, double cap, double login_s, size_t most,
                      size_t open = 0, size_t cores = 1);

// Whether `more` links beside `links` pay for themselves: the time left at `rate` (bytes a
// second, measured or modelled) would shrink by more than the new links cost, counting
// that they at best multiply the rate by (links + more) / links; each new link opens
// `channels` channels (their logins one after the other).
bool more_links_pay(uint64_t bytes_left, double rate, size_t links, size_t more, size_t channels,
                    const LinkCosts& costs);

}  // namespace mlt::transfer_detail
