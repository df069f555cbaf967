// `mlt ssh instances` and `mlt ssh release`: the machines mlt rented (instances.jsonl), as
// their marketplace reports them now. Only those: mlt never touches an instance it did not
// create.
#include <cstdio>
#include <ctime>
#include <map>
#include <nlohmann/json.hpp>

#include "mlt/provider/run_rental.h"
#include "mlt/train/local/local_state.h"
#include "mlt/util/error.h"
#include "mlt/util/reporter.h"
#include "mlt/util/text.h"

namespace mlt {

namespace {

struct Seen {
    RentedInstance record;
    std::optional<Instance> now;  // nullopt: gone at the marketplace
    std::string error;            // the marketplace could not be asked
};

// The CLI of each marketplace named, made once.
class Marketplaces {
  public:
    Provider& of(const std::string& name) {
        auto& p = made_[name];
        if (!p) {
            ProviderSettings settings;
            settings.name = name;
            p = make_provider(settings, std::chrono::seconds(60));
        }
        return *p;
    }

  private:
    std::map<std::string, std::unique_ptr<Provider>> made_;
};

// Every recorded instance not destroyed, each asked of its marketplace (one CLI per
// marketplace); those it no longer has are recorded destroyed and left out.
std::vector<Seen> look_at_all() {
    Marketplaces markets;
    std::vector<Seen> seen;
    for (auto& inst : read_rented_instances(rented_instances_path(), false)) {
        Seen s{inst, std::nullopt, {}};
        try {
            s.now = markets.of(inst.provider).instance(inst.id);
            if (!s.now) {
                record_rented_state(inst, "destroyed");
                continue;
            }
        } catch (const Error& e) {
            if (is_signal(e.kind())) throw;
            s.error = e.what();
        }
        seen.push_back(std::move(s));
    }
    return seen;
}

// The cost so far at the billed price (running time; a stopped instance's storage is not in
// it); nullopt when no price is known.
std::optional<double> cost_so_far(const Seen& s) {
    const auto price =
        s.now && s.now->price_per_hour ? s.now->price_per_hour : s.record.price_per_hour;
    if (!price) return std::nullopt;
    const double hours = (static_cast<double>(std::time(nullptr)) - s.record.since) / 3600.0;
    return *price * std::max(0.0, hours);
}

}  // namespace

int run_instances(bool json) {
    const auto seen = look_at_all();
    if (json) {
        nlohmann::json all = nlohmann::json::array();
        for (const Seen& s : seen) {
            nlohmann::json o = {{"provider", s.record.provider}, {"id", s.record.id},
                                {"model", s.record.model},       {"run_id", s.record.run_id},
                                {"label", s.record.label},       {"recorded", s.record.state}};
            o["state"] = s.now ? s.now->status : "unknown";
            if (!s.error.empty()) o["error"] = s.error;
            if (s.now && s.now->price_per_hour) o["price_per_hour"] = *s.now->price_per_hour;
            if (const auto c = cost_so_far(s)) o["cost_so_far"] = *c;
            all.push_back(std::move(o));
        }
        std::printf("%s\n", all.dump(1).c_str());
        return exit_code::kOk;
    }
    if (seen.empty()) {
        std::printf("no machine that mlt rented exists (mlt ssh instances lists those only)\n");
        return exit_code::kOk;
    }
    std::printf("%-8s %-12s %-20s %-18s %-10s %-10s %s\n", "PROVIDER", "ID", "MODEL", "RUN",
                "STATE", "PRICE", "COST SO FAR");
    for (const Seen& s : seen) {
        const auto price =
            s.now && s.now->price_per_hour ? s.now->price_per_hour : s.record.price_per_hour;
        const auto cost = cost_so_far(s);
        std::printf("%-8s %-12s %-20s %-18s %-10s %-10s %s\n", s.record.provider.c_str(),
                    s.record.id.c_str(), s.record.model.c_str(), s.record.run_id.c_str(),
                    s.now ? s.now->status.c_str() : "unknown",
                    price ? (format_usd(*price) + "/h").c_str() : "-",
                    cost ? format_usd(*cost).c_str() : "-");
        if (!s.error.empty()) reporter().warning(s.record.provider + ": " + s.error);
    }
    return exit_code::kOk;
}

int run_release(const std::string& id, bool all) {
    if (all == !id.empty())
        throw usage_error(
            all ? "release: give an instance ID or --all, not both" : "release: no instance given",
            "mlt ssh release ID, or mlt ssh release --all; mlt ssh instances lists them");
    std::vector<RentedInstance> chosen;
    for (auto& inst : read_rented_instances(rented_instances_path(), false))
        if (all || inst.id == id) chosen.push_back(std::move(inst));
    if (chosen.empty()) {
        if (all) {
            std::printf("no machine that mlt rented is left to release\n");
            return exit_code::kOk;
        }
        throw usage_error("instance " + id + " is not one mlt rented (or it was released)",
                          "mlt ssh instances lists those mlt rented; mlt never touches another");
    }
    if (!all && chosen.size() > 1)
        throw usage_error("instance " + id + " is named by more than one marketplace in " +
                              rented_instances_path(),
                          "release it with the marketplace's own CLI");
    int failed = 0;
    Marketplaces markets;
    for (const RentedInstance& inst : chosen) {
        try {
            // A train of the model (this machine's) may be on it now: --all leaves it alone,
            // and while the lock is held here none starts on it.
            std::unique_ptr<LocalModelLock> lock;
            if (!inst.model.empty()) {
                try {
                    lock =
                        std::make_unique<LocalModelLock>(local_state_dir(inst.model), inst.model);
                } catch (const Error& e) {
                    if (e.kind() != ErrorKind::conflict || !all) throw;
                    reporter().alert(rented_instance_name(inst) + " is left: " + e.what() +
                                     "; release it by its ID once that run is over");
                    continue;
                }
            }
            destroy_confirmed(markets.of(inst.provider), inst, reporter());  // a gone one: said
        } catch (const Error& e) {
            if (is_signal(e.kind())) throw;
            ++failed;
            reporter().alert(rented_instance_name(inst) + " was not released: " + e.what());
        }
    }
    return failed ? exit_code::kRemote : exit_code::kOk;
}

}  // namespace mlt
