// rent(): a marketplace machine for a run (include/mlt/provider/rent.h).
#include "mlt/provider/rent.h"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <thread>

#include "mlt/transfer/progress.h"
#include "mlt/util/error.h"
#include "mlt/util/interrupt.h"
#include "mlt/util/text.h"

namespace mlt {

namespace {

using Clock = std::chrono::steady_clock;

// Waits `d`, a tenth of a second at a time, so that Ctrl+C ends it at once.
void pause(std::chrono::milliseconds d) {
    const auto end = Clock::now() + d;
    while (Clock::now() < end) {
        throw_if_interrupted();
        std::this_thread::sleep_for(
            std::min<Clock::duration>(end - Clock::now(), std::chrono::milliseconds(100)));
    }
    throw_if_interrupted();
}

// Destroys `id`, saying why; a failure is a warning (the instance may still bill), and
// counted in `left`.
void give_back(Provider& p, const std::string& id, const std::string& why, const RentOptions& o,
               Reporter& reporter, int& left, bool next = true) {
    try {
        p.destroy(id);
        reporter.alert("instance " + id + " of " + p.name() + " " + why + ": destroyed" +
                       (next ? "; trying the next offer" : ""));
        if (o.on_destroyed) o.on_destroyed(id);
    } catch (const Error& e) {
        if (is_signal(e.kind())) throw;
        ++left;
        reporter.warning("instance " + id + " of " + p.name() + " " + why +
                         ", and destroying it failed: " + e.what() +
                         "; it may still bill: destroy it yourself");
    }
}

// The instance now; a failing read is tried 3 times, 2 s apart (a marketplace's rate limit).
std::optional<Instance> look_at(Provider& p, const std::string& id) {
    for (int tries = 1;; ++tries) {
        try {
            return p.instance(id);
        } catch (const Error& e) {
            if (is_signal(e.kind()) || tries == 3) throw;
        }
        pause(std::chrono::seconds(2));
    }
}

// The instance once it runs and answers on ssh; nullopt when it did not within the wait (or
// went away), after destroying it.
std::optional<Instance> wait_up(Provider& p, const std::string& id, const ProviderSettings& s,
                                const RentOptions& o, Reporter& reporter, int& left) {
    const auto start = Clock::now();
    auto next_word = start + std::chrono::seconds(15);
    for (;;) {
        const auto inst = look_at(p, id);
        if (!inst) {  // destroyed anyway: a marketplace may not list one it just created
            give_back(p, id, "went away while starting", o, reporter, left);
            return std::nullopt;
        }
        if (inst->price_per_hour && s.max_price && *inst->price_per_hour > *s.max_price) {
            give_back(p, id,
                      "bills " + usd_per_hour(*inst->price_per_hour) + ", over max_price " +
                          usd_per_hour(*s.max_price),
                      o, reporter, left);
            return std::nullopt;
        }
        if (inst->state == Instance::State::lost || inst->state == Instance::State::stopped) {
            give_back(p, id, "ended while starting (" + inst->status + ")", o, reporter, left);
            return std::nullopt;
        }
        if (inst->state == Instance::State::running && !inst->ssh_host.empty() &&
            ssh_answers(inst->ssh_host, inst->ssh_port, std::chrono::seconds(5)))
            return inst;
        const auto waited = Clock::now() - start;
        if (waited >= o.wait) {
            give_back(p, id,
                      "did not answer on ssh within " +
                          format_duration(static_cast<double>(o.wait.count())),
                      o, reporter, left);
            return std::nullopt;
        }
        if (Clock::now() >= next_word) {
            next_word += std::chrono::seconds(15);
            reporter.notice("waiting for instance " + id + " of " + p.name() + " (" + inst->status +
                            ", " + format_duration(std::chrono::duration<double>(waited).count()) +
                            " of " + format_duration(static_cast<double>(o.wait.count())) + ")");
        }
        pause(o.look);
    }
}

// Creates an instance of `offer`, recorded (on_created) before a Ctrl+C is taken; nullopt
// when the marketplace refused it, after destroying what a late failure left under the label.
std::optional<std::string> create(Provider& p, const Offer& offer, const ProviderSettings& s,
                                  const RentOptions& o, Reporter& reporter, int& left) {
    // Not cut between the marketplace's create and its record: a Ctrl+C waits (the CLI too).
    InterruptDeferral whole;
    std::string id;
    try {
        id = p.create(offer, s, o.label);
    } catch (const Error& e) {
        reporter.alert("offer " + offer.id + " could not be rented: " + e.what() +
                       "; trying the next");
    }
    if (!id.empty()) {
        try {
            if (o.on_created) o.on_created(id);
        } catch (const Error&) {  // not recorded: it must not bill unknown
            give_back(p, id, "could not be recorded", o, reporter, left, false);
            throw;
        }
        return id;
    }
    // A create that failed late (a timeout after the marketplace took it, a pod that did not
    // start) may have left an instance: one with this rental's label goes.
    try {
        for (const Instance& i : p.instances())
            if (i.label == o.label) {
                try {
                    if (o.on_created) o.on_created(i.id);
                } catch (const Error&) {
                }
                give_back(p, i.id, "was left by a failed create", o, reporter, left);
            }
    } catch (const Error&) {
    }
    return std::nullopt;
}

}  // namespace

std::string usd_per_hour(double usd) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "$%.3f/h", usd);
    return buf;
}

bool ssh_answers(const std::string& host, int port, std::chrono::milliseconds timeout) {
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    if (::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0)
        return false;
    bool ok = false;
    const auto end = Clock::now() + timeout;
    for (addrinfo* a = found; a && !ok; a = a->ai_next) {
        const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0) continue;
        ::connect(fd, a->ai_addr, a->ai_addrlen);
        std::string got;
        while (!ok && Clock::now() < end) {
            pollfd p{fd, POLLIN, 0};
            const auto left =
                std::chrono::duration_cast<std::chrono::milliseconds>(end - Clock::now());
            if (::poll(&p, 1, static_cast<int>(std::max<long long>(1, left.count()))) <= 0) break;
            char buf[64];
            const ssize_t n = ::read(fd, buf, sizeof buf);
            if (n <= 0) break;
            got.append(buf, static_cast<size_t>(n));
            ok = got.size() >= 4 && got.compare(0, 4, "SSH-") == 0;
            if (got.size() >= 4 && !ok) break;
        }
        ::close(fd);
    }
    ::freeaddrinfo(found);
    return ok;
}

Rental rent(Provider& p, const ProviderSettings& s, const RentOptions& o, Reporter& reporter) {
    const std::vector<Offer> all = p.offers(s);
    std::vector<Offer> under;
    for (const Offer& offer : all)
        if (!s.max_price || offer.price_per_hour <= *s.max_price) under.push_back(offer);
    if (under.empty()) {
        const std::string cap = s.max_price ? " under max_price " + usd_per_hour(*s.max_price) : "";
        throw config_error("no offer of " + p.name() + " matches '" + s.offer + "'" + cap +
                               (all.empty() ? std::string()
                                            : " (the cheapest: " + all.front().what + " at " +
                                                  usd_per_hour(all.front().price_per_hour) + ")") +
                               "; nothing was rented",
                           "raise provider.max_price or widen provider.offer (docs/providers.md)");
    }
    int tried = 0, left = 0;
    for (const Offer& offer : under) {
        if (tried == o.max_offers) break;
        ++tried;
        reporter.notice("renting offer " + offer.id + " of " + p.name() + ": " + offer.what +
                        " at " + usd_per_hour(offer.price_per_hour) + " listed");
        const std::optional<std::string> id = create(p, offer, s, o, reporter, left);
        if (!id) continue;
        std::optional<Instance> inst;
        try {
            inst = wait_up(p, *id, s, o, reporter, left);
        } catch (const Error& e) {
            if (is_signal(e.kind())) {
                // Nothing ran on it yet: it goes, whole, before mlt does.
                InterruptDeferral whole;
                give_back(p, *id, "was not up yet when mlt was interrupted", o, reporter, left,
                          false);
                throw;
            }
            give_back(p, *id, "could not be followed (" + std::string(e.what()) + ")", o, reporter,
                      left);
            throw;
        }
        if (inst) {
            Rental r;
            r.provider = s.name;
            r.id = *id;
            r.label = o.label;
            r.price_per_hour = inst->price_per_hour.value_or(offer.price_per_hour);
            r.ssh_user = inst->ssh_user;
            r.ssh_host = inst->ssh_host;
            r.ssh_port = inst->ssh_port;
            reporter.notice("rented instance " + *id + " of " + p.name() + " at " +
                            usd_per_hour(r.price_per_hour) + ": " + r.ssh_user + "@" + r.ssh_host +
                            ":" + std::to_string(r.ssh_port));
            return r;
        }
    }
    if (left > 0)
        throw config_error("no instance of " + p.name() + " came up (" + std::to_string(tried) +
                               " offer(s) tried), and " + std::to_string(left) +
                               " could not be destroyed: they may still bill",
                           "destroy them with the marketplace's own CLI (the lines above name "
                           "them)");
    throw config_error("no instance of " + p.name() + " came up (" + std::to_string(tried) +
                           " offer(s) tried); none is left rented",
                       "try again later, or another offer (provider.offer)");
}

}  // namespace mlt
