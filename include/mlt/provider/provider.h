#pragma once
// provider: machines rented from a marketplace (vast.ai, RunPod) through its own CLI, which
// the user installed and logged in to (docs/providers.md). mlt never sees the API key: it
// runs `vastai` / `runpodctl` as the user would, without a shell, and reads their output.

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mlt {

// What happens to a rented machine when the run is over.
enum class Teardown { destroy, stop, keep };

// The settings' `provider:` (docs/providers.md).
struct ProviderSettings {
    std::string name;                 // "vast" or "runpod"; empty: none
    std::string offer;                // the marketplace's own filter (vast: a search query)
    std::optional<double> max_price;  // USD per hour, as the instance bills
    std::string image;                // the container image
    int disk_gb = 40;
    Teardown teardown = Teardown::destroy;
    bool on() const { return !name.empty(); }
};

// An offer of a machine, as the marketplace lists it.
struct Offer {
    std::string id;
    double price_per_hour = 0;  // listed; the instance may bill more (check it once created)
    std::string what;           // "1x RTX 4090", for people
};

// A rented machine as the marketplace reports it now.
struct Instance {
    std::string id;
    // running: up; starting: not yet; stopped: stopped (its disk kept, storage bills);
    // lost: exited or offline by itself (a host that took it back).
    enum class State { starting, running, stopped, lost } state = State::starting;
    std::string status;  // the marketplace's own word, for people
    std::optional<double> price_per_hour;
    std::string label;
    std::string ssh_host;  // empty until it runs
    int ssh_port = 0;
    std::string ssh_user = "root";
};

// One marketplace's CLI. Every call runs the CLI once, bounded in time; a failure (the CLI
// missing, not logged in, an error it printed) throws mlt::Error with the CLI's own words.
class Provider {
  public:
    virtual ~Provider() = default;
    // "vast.ai", for people.
    virtual std::string name() const = 0;
    // The offers that match the settings' filter, cheapest first (by listed price).
    virtual std::vector<Offer> offers(const ProviderSettings& settings) = 0;
    // Rents `offer` with the settings' image and disk, labelled `label`; returns its id.
    virtual std::string create(const Offer& offer, const ProviderSettings& settings,
                               const std::string& label) = 0;
    // The instance `id` now; nullopt once it is gone (destroyed).
    virtual std::optional<Instance> instance(const std::string& id) = 0;
    // Every instance of the account (mlt touches only those it created).
    virtual std::vector<Instance> instances() = 0;
    virtual void destroy(const std::string& id) = 0;
    virtual void stop(const std::string& id) = 0;
};

// The CLI of `settings.name`, run as `program` (the name on PATH: "vastai", "runpodctl").
// Throws mlt::Error (usage) for an unknown name.
std::unique_ptr<Provider> make_provider(const ProviderSettings& settings,
                                        std::chrono::milliseconds timeout);

}  // namespace mlt
