#pragma once
// rent: a machine from a marketplace (provider.h) for a run: the cheapest offer under the
// cap whose instance bills under it and whose sshd answers (docs/providers.md, "Rent").

#include <chrono>
#include <functional>
#include <string>

#include "mlt/provider/provider.h"
#include "mlt/util/reporter.h"

namespace mlt {

// A rented machine a run trains on.
struct Rental {
    std::string provider;  // the settings' name: "vast", "runpod"
    std::string id;
    std::string label;
    double price_per_hour = 0;  // as the instance bills
    std::string ssh_user, ssh_host;
    int ssh_port = 0;
};

struct RentOptions {
    std::string label;  // "mlt-<run id>": the instance is this run's
    // How long an instance may take to run and answer on ssh before it is destroyed and the
    // next offer is taken.
    std::chrono::seconds wait{std::chrono::minutes(15)};
    int max_offers = 3;                    // offers tried at most
    std::chrono::milliseconds look{2000};  // between two looks at a starting instance
    // Called as soon as an instance exists (before any wait): the caller records it, so that
    // mlt killed now still knows what it rented.
    std::function<void(const std::string& id)> on_created;
    // Called once an instance is destroyed again (over the cap, never up).
    std::function<void(const std::string& id)> on_destroyed;
};

// Rents one machine: the offers that match `settings.offer`, cheapest first by their listed
// price, those over `max_price` left out; each is created with the image and disk, its billed
// price read back (over the cap: destroyed at once, the next offer), and waited for until it
// runs and its sshd answers (else destroyed, the next offer). Says each step through
// `reporter`. Throws mlt::Error (config, exit 2) when no offer is under the cap (nothing is
// rented then) or none of `max_offers` came up; a signal throws as usual (what exists then
// was given to on_created).
Rental rent(Provider& provider, const ProviderSettings& settings, const RentOptions& options,
            Reporter& reporter);

// A price per hour as the provider lines say it: "$0.350/h".
std::string usd_per_hour(double usd);

// Whether something answers as an SSH server at host:port within `timeout` (its banner).
bool ssh_answers(const std::string& host, int port, std::chrono::milliseconds timeout);

}  // namespace mlt
