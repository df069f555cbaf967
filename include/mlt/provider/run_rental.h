#pragma once
// The machines one model's runs rent (docs/providers.md): rented for a new run and recorded
// at once, found again for a --resume or a job command, asked whether a lost one is gone, and
// released when the run is over. Every instance it touches is one instances.jsonl names: mlt
// never touches an instance it did not create.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mlt/provider/instances.h"
#include "mlt/provider/provider.h"
#include "mlt/provider/rent.h"
#include "mlt/ssh/session.h"
#include "mlt/train/run/target.h"
#include "mlt/util/reporter.h"

namespace mlt {

// The host of a target that a provider rents (no -h, nodes.hosts or connection.hostname):
// no host name can be written so.
inline constexpr std::string_view kRentedHost = "(rented)";

inline bool is_rented(const ConnectSpec& c) {
    return c.host == kRentedHost;
}

// What becomes of a run's machines when it is over.
enum class Release {
    teardown,  // the results are home and the run ended as it should: provider.teardown
    stop,      // it failed (its disk keeps what it left), unless teardown is keep
    keep,      // it goes on there (detached, link lost, results not home): left running
    destroy,   // nothing of the run is on it (it never held a job there): whatever teardown
};

class RunRentals {
  public:
    RunRentals(ProviderSettings settings, std::string model, Reporter& reporter);
    RunRentals(const RunRentals&) = delete;
    RunRentals& operator=(const RunRentals&) = delete;
    ~RunRentals();

    // Rents a machine for run `run_id` (for its node `rank`; -1: a lost node's replacement),
    // each instance recorded as soon as it exists. Throws as rent() does.
    Rental rent(const std::string& run_id, int rank = 0);
    // Another machine for the run of the last rent() or find() (a failover).
    Rental rent_again() { return rent(run_id_, rank_again_); }
    // The machine of the model's newest instance that is not released (a --resume, a job
    // command), as the provider reports it now. Throws mlt::Error (usage, exit 2) when none is
    // recorded or the provider no longer has it, naming what to do.
    Rental find();
    // The same for a run of `nodes` nodes: the machines of the newest run that is not
    // released, by rank.
    std::vector<Rental> find_nodes(int nodes);
    // The run of the last rent() or find().
    const std::string& run_id() const { return run_id_; }
    // The model's instances that are not released (created or kept), newest last.
    std::vector<RentedInstance> unreleased() const;

    // Points `c` at `r`: its address and user, the host key learned on first contact and
    // kept in a known_hosts file of the instance's own.
    static void aim(ConnectSpec& c, const Rental& r);
    // The provider's word when the instance rented at `name` (user@host:port) has ended
    // (exited, offline, gone); nullopt while it runs, or when it is none of this run's or the
    // provider cannot be asked.
    std::optional<std::string> ended(const std::string& name);
    // Destroys instance `id` (one of these rentals the run cannot use), confirmed; a failure
    // is a warning.
    void give_back(const std::string& id);
    // Releases every instance of run `run_id` as `how` says, and says what became of each.
    void finish(const std::string& run_id, Release how);

  private:
    void record(const std::string& id, const std::string& run_id, const std::string& label,
                const std::string& state, std::optional<double> price, int rank);
    Provider& provider();
    // `inst` as the marketplace reports it now, to train on; throws as find() does.
    Rental reach(const RentedInstance& inst);

    ProviderSettings settings_;
    std::string model_;
    Reporter& reporter_;
    std::unique_ptr<Provider> provider_;
    std::vector<Rental> rented_;  // by this process: where each is reached
    std::string run_id_;          // of the last rent() or find()
    int rank_again_ = 0;          // a replacement's: -1 with several nodes
    int rents_ = 0;               // rent() calls so far
};

// Points each rented target (is_rented) at the machine of `model` that `settings`' provider
// rented and that is still running (RunRentals::find; an empty model: any model's). Throws as
// find() does.
void locate_rented(std::vector<Target>& targets, const ProviderSettings& settings,
                   const std::string& model, Reporter& reporter);

// "instance 7835610 of vast.ai", for people.
std::string rented_instance_name(const RentedInstance& inst);

// The known_hosts file of one instance: <mltk dir>/ssh/known_hosts.d/<provider>-<id>.
std::string instance_known_hosts(const std::string& provider, const std::string& id);

// Destroys instance `inst` and waits (bounded) until the provider no longer lists it; records
// it destroyed and drops its known_hosts file. Throws mlt::Error when the provider fails or
// the instance is still listed after the wait.
void destroy_confirmed(Provider& provider, const RentedInstance& inst, Reporter& reporter);

// `mlt ssh instances`: every instance mlt created that still exists, with its state, price and
// cost so far; `json`: one JSON array.
int run_instances(bool json);
// `mlt ssh release ID|--all`: destroys them (only instances mlt created), each confirmed gone.
int run_release(const std::string& id, bool all);

}  // namespace mlt
