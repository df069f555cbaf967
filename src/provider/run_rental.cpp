// RunRentals: the machines of one model's runs, rented, found again and released
// (include/mlt/provider/run_rental.h).
#include "mlt/provider/run_rental.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <random>
#include <thread>

#include "mlt/transfer/progress.h"
#include "mlt/util/error.h"
#include "mlt/util/interrupt.h"
#include "mlt/util/paths.h"
#include "mlt/util/text.h"

namespace mlt {

namespace {

// Each call of the marketplace's CLI, at most.
constexpr std::chrono::seconds kCliTimeout{60};
// How long a destroyed instance may stay listed before mlt says it may still bill.
constexpr std::chrono::seconds kDestroyWait{60};

double now_s() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

std::string where(const RentedInstance& i) {
    return rented_instance_name(i);
}

// "after 1h02m at $0.350/h ($0.36)", from its first record to now.
std::string cost_words(const RentedInstance& i) {
    const double s = std::max(0.0, now_s() - i.since);
    std::string words = "after " + format_duration(s);
    if (i.price_per_hour)
        words += " at " + usd_per_hour(*i.price_per_hour) + " (" +
                 format_usd(*i.price_per_hour * s / 3600.0) + ")";
    return words;
}

// Its run is over with it: destroyed, stopped, or kept by teardown: keep (the results home).
bool is_released(const RentedInstance& i) {
    return i.state == "destroyed" || i.state == "stopped" || i.state == "kept";
}

}  // namespace

std::string rented_instance_name(const RentedInstance& i) {
    return "instance " + i.id + " of " +
           (i.provider == "vast"     ? "vast.ai"
            : i.provider == "runpod" ? "RunPod"
                                     : i.provider);
}

std::string instance_known_hosts(const std::string& provider, const std::string& id) {
    return mltk_dir() + "/ssh/known_hosts.d/" + provider + "-" + id;
}

void destroy_confirmed(Provider& p, const RentedInstance& inst, Reporter& reporter) {
    if (!p.instance(inst.id)) {  // gone already (a lost one): nothing bills
        record_rented_state(inst, "destroyed");
        std::error_code ec;
        std::filesystem::remove(instance_known_hosts(inst.provider, inst.id), ec);
        reporter.notice(where(inst) + " is gone already (recorded so)");
        return;
    }
    p.destroy(inst.id);
    const auto end = std::chrono::steady_clock::now() + kDestroyWait;
    for (;;) {
        const auto now = p.instance(inst.id);
        if (!now) break;
        if (std::chrono::steady_clock::now() >= end)
            throw Error(ErrorKind::remote,
                        where(inst) + " is still listed (" + now->status + ") " +
                            std::to_string(kDestroyWait.count()) + " s after its destroy",
                        "it may still bill: look with the marketplace's own CLI, and try "
                        "again with: mlt ssh release " +
                            inst.id);
        throw_if_interrupted();
        std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    record_rented_state(inst, "destroyed");
    std::error_code ec;
    std::filesystem::remove(instance_known_hosts(inst.provider, inst.id), ec);
    reporter.notice(where(inst) + " destroyed " + cost_words(inst) +
                    " (the marketplace no longer lists it)");
}

void locate_rented(std::vector<Target>& targets, const ProviderSettings& settings,
                   const std::string& model, Reporter& reporter) {
    if (std::none_of(targets.begin(), targets.end(),
                     [](const Target& t) { return is_rented(t.connect); }))
        return;
    RunRentals rentals(settings, model, reporter);
    if (targets.size() == 1) {
        RunRentals::aim(targets.front().connect, rentals.find());
        return;
    }
    const auto found = rentals.find_nodes(static_cast<int>(targets.size()));
    for (size_t rank = 0; rank < targets.size(); ++rank)
        RunRentals::aim(targets[rank].connect, found[rank]);
}

RunRentals::RunRentals(ProviderSettings settings, std::string model, Reporter& reporter)
    : settings_(std::move(settings)), model_(std::move(model)), reporter_(reporter) {}

RunRentals::~RunRentals() = default;

Provider& RunRentals::provider() {
    if (!provider_) provider_ = make_provider(settings_, kCliTimeout);
    return *provider_;
}

void RunRentals::record(const std::string& id, const std::string& run_id, const std::string& label,
                        const std::string& state, std::optional<double> price, int rank) {
    RentedInstance inst;
    inst.provider = settings_.name;
    inst.id = id;
    inst.run_id = run_id;
    inst.model = model_;
    inst.label = label;
    inst.price_per_hour = price;
    inst.rank = rank;
    record_rented_state(inst, state);
}

Rental RunRentals::rent(const std::string& run_id, int rank) {
    RentOptions o;
    // Each rental its own label: a failed create's leftover is found by it, and never taken
    // for another machine of the run (which would be destroyed with it).
    o.label = "mlt-" + run_id;
    if (rank > 0) {
        o.label += "-" + std::to_string(rank);
    } else if (rents_++ > 0 || !rented_.empty()) {
        char suffix[16];
        std::snprintf(suffix, sizeof suffix, "-r%04x",
                      static_cast<unsigned>(std::random_device{}()) & 0xffffu);
        o.label += suffix;
    }
    o.on_created = [&](const std::string& id) { record(id, run_id, o.label, "created", {}, rank); };
    o.on_destroyed = [&](const std::string& id) {
        record(id, run_id, o.label, "destroyed", {}, rank);
        std::error_code ec;
        std::filesystem::remove(instance_known_hosts(settings_.name, id), ec);
    };
    run_id_ = run_id;
    if (rank > 0) rank_again_ = -1;
    Rental r = mlt::rent(provider(), settings_, o, reporter_);
    record(r.id, run_id, r.label, "created", r.price_per_hour, rank);
    rented_.push_back(r);
    return r;
}

std::vector<RentedInstance> RunRentals::unreleased() const {
    std::vector<RentedInstance> mine;
    for (auto& i : read_rented_instances(rented_instances_path(), false))
        if (i.provider == settings_.name && (model_.empty() || i.model == model_) &&
            !is_released(i))
            mine.push_back(std::move(i));
    std::stable_sort(mine.begin(), mine.end(),
                     [](const auto& a, const auto& b) { return a.since < b.since; });
    return mine;
}

Rental RunRentals::find() {
    const auto mine = unreleased();
    if (mine.empty())
        throw usage_error("no host given, and no machine rented" +
                              (model_.empty() ? std::string() : " for " + model_) + " on " +
                              settings_.name + " is left running",
                          "give the host with -h, or start a new run (train rents one)");
    return reach(mine.back());
}

std::vector<Rental> RunRentals::find_nodes(int nodes) {
    const auto mine = unreleased();
    if (mine.empty()) return {find()};  // says so
    const std::string run = mine.back().run_id;
    std::vector<const RentedInstance*> by_rank(static_cast<size_t>(nodes), nullptr);
    for (const RentedInstance& inst : mine)
        if (inst.run_id == run && inst.rank >= 0 && inst.rank < nodes)
            by_rank[static_cast<size_t>(inst.rank)] = &inst;  // the newest of each rank
    std::vector<Rental> found;
    for (int rank = 0; rank < nodes; ++rank) {
        if (!by_rank[static_cast<size_t>(rank)])
            throw usage_error("no machine rented for node " + std::to_string(rank) + " of run " +
                                  run + " of " + model_ + " is left running",
                              "give the nodes with -h, or release the run's machines: mlt ssh "
                              "instances lists them");
        found.push_back(reach(*by_rank[static_cast<size_t>(rank)]));
    }
    rank_again_ = -1;
    return found;
}

Rental RunRentals::reach(const RentedInstance& inst) {
    const auto now = provider().instance(inst.id);
    if (!now) {
        record_rented_state(inst, "destroyed");
        throw usage_error(where(inst) + ", rented for run " + inst.run_id + " of " + model_ +
                              ", is gone at the marketplace (recorded so)",
                          "its results there are lost; start a new run, with --restore to "
                          "continue from the checkpoints that came home");
    }
    if (now->state != Instance::State::running || now->ssh_host.empty())
        throw usage_error(where(inst) + ", rented for run " + inst.run_id + " of " + model_ +
                              ", is " + now->status + ", not running",
                          "start it with the marketplace's own CLI and try again, or release it: "
                          "mlt ssh release " +
                              inst.id);
    Rental r;
    r.provider = inst.provider;
    r.id = inst.id;
    r.label = inst.label;
    r.price_per_hour = now->price_per_hour.value_or(inst.price_per_hour.value_or(0));
    r.ssh_user = now->ssh_user;
    r.ssh_host = now->ssh_host;
    r.ssh_port = now->ssh_port;
    rented_.push_back(r);
    run_id_ = inst.run_id;
    return r;
}

void RunRentals::aim(ConnectSpec& c, const Rental& r) {
    c.host = r.ssh_host;
    c.host_origin = "rented: instance " + r.id + " of " + r.provider;
    // connection.username when set, else the marketplace's (root).
    if (c.fallback_user.empty()) c.fallback_user = r.ssh_user;
    c.port = r.ssh_port;
    c.proxy_keyword.clear();
    c.proxy_value.clear();
    // A marketplace reuses its proxies' addresses: a key recorded for the address would read
    // as changed for the next instance behind it. The instance's own file learns it once.
    const std::string known = instance_known_hosts(r.provider, r.id);
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(known).parent_path(), ec);
    ::chmod(std::filesystem::path(known).parent_path().c_str(), 0700);
    c.known_hosts_path = known;
    c.host_key_checking = HostKeyChecking::accept_new;
}

std::optional<std::string> RunRentals::ended(const std::string& name) {
    // The newest first: a marketplace's proxy address may have served an earlier instance.
    const auto it = std::find_if(rented_.rbegin(), rented_.rend(), [&](const Rental& r) {
        const std::string at = r.ssh_host + ":" + std::to_string(r.ssh_port);
        return name == at ||
               (name.size() > at.size() &&
                name.compare(name.size() - at.size() - 1, std::string::npos, "@" + at) == 0);
    });
    if (it == rented_.rend()) return std::nullopt;
    try {
        const auto now = provider().instance(it->id);
        if (!now) return "instance " + it->id + " of " + provider().name() + " is gone";
        // Taken back for good (vast: exited while meant to run; RunPod: terminated). Offline
        // or unknown may pass, and a stopped one (RunPod's EXITED too) keeps its disk: the wait
        // goes on.
        if (now->state == Instance::State::lost &&
            (now->status == "exited" || now->status == "TERMINATED"))
            return "instance " + it->id + " of " + provider().name() + " is " + now->status;
    } catch (const Error& e) {
        if (is_signal(e.kind())) throw;
    }
    return std::nullopt;
}

void RunRentals::give_back(const std::string& id) {
    for (const RentedInstance& inst : read_rented_instances(rented_instances_path(), false)) {
        if (inst.provider != settings_.name || inst.id != id) continue;
        try {
            destroy_confirmed(provider(), inst, reporter_);
        } catch (const Error& e) {
            if (is_signal(e.kind())) throw;
            reporter_.warning(where(inst) + " was not released: " + e.what() +
                              "; it may still bill: mlt ssh release " + inst.id);
        }
    }
}

void RunRentals::finish(const std::string& run_id, Release how) {
    for (const RentedInstance& inst : unreleased()) {
        if (inst.run_id != run_id) continue;
        const std::string price =
            inst.price_per_hour ? " (billing " + usd_per_hour(*inst.price_per_hour) + ")" : "";
        try {
            if (how == Release::destroy) {
                destroy_confirmed(provider(), inst, reporter_);
            } else if (how == Release::keep) {
                const auto now = provider().instance(inst.id);
                if (!now) {  // a lost one: nothing is left to keep
                    record_rented_state(inst, "destroyed");
                    reporter_.notice(where(inst) + " is gone (recorded so)");
                    continue;
                }
                if (now->state == Instance::State::lost || now->state == Instance::State::stopped) {
                    record_rented_state(inst, "stopped");
                    reporter_.alert(where(inst) + " is " + now->status +
                                    ": it no longer runs, and its storage may still bill: mlt ssh "
                                    "release " +
                                    inst.id + " destroys it");
                    continue;
                }
                reporter_.alert(where(inst) + " keeps running" + price + " for run " + run_id +
                                ": continue with --resume, or end it with: mlt ssh release " +
                                inst.id);
            } else if (settings_.teardown == Teardown::keep) {
                record_rented_state(inst, "kept");
                reporter_.alert(where(inst) + " is kept (provider.teardown: keep)" + price +
                                ": mlt ssh release " + inst.id + " ends it");
            } else if (how == Release::teardown && settings_.teardown == Teardown::destroy) {
                destroy_confirmed(provider(), inst, reporter_);
            } else {
                provider().stop(inst.id);
                record_rented_state(inst, "stopped");
                reporter_.alert(where(inst) + " stopped " + cost_words(inst) +
                                (how == Release::stop
                                     ? ": the run failed, and its disk keeps what it left"
                                     : std::string(" (provider.teardown: stop)")) +
                                "; a stopped instance still bills its storage: mlt ssh release " +
                                inst.id + " destroys it");
            }
        } catch (const Error& e) {
            if (is_signal(e.kind())) throw;
            reporter_.warning(where(inst) + " was not released: " + e.what() +
                              "; it may still bill: mlt ssh release " + inst.id);
        }
    }
}

}  // namespace mlt
