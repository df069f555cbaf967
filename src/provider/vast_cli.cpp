// The vast.ai CLI (`vastai`, github vast-ai/vast-cli) as mlt drives it: every read with
// `--raw` (json.dumps of the API's answer on stdout); an HTTP error exits 0 with "Failed with
// error CODE: MSG" on stderr (the legacy vast.py prints it on stdout), so the output decides,
// never the exit status alone.
#include <nlohmann/json.hpp>

#include "json_fields.h"
#include "provider_cli.h"

namespace mlt {

namespace {

using nlohmann::json;
using provider_json::number;
using provider_json::text;

// A number or a numeric string of the API as text ("4200001").
std::string id_text(const json& v) {
    if (v.is_number_integer()) return std::to_string(v.get<long long>());
    if (v.is_string()) return v.get<std::string>();
    return {};
}

// The member `key` of `o`, or null.
const json& member(const json& o, const char* key) {
    static const json null;
    if (!o.is_object()) return null;
    const auto it = o.find(key);
    return it == o.end() ? null : *it;
}

bool is_true(const json& o, const char* key) {
    const json& v = member(o, key);
    return v.is_boolean() && v == json(true);
}

class VastCli : public CliProvider {
  public:
    explicit VastCli(std::chrono::milliseconds timeout) : CliProvider("vastai", timeout) {}
    std::string name() const override { return "vast.ai"; }

    std::vector<Offer> offers(const ProviderSettings& s) override {
        // The disk as a filter too: --storage only prices it.
        const json list = read_json(
            {"search", "offers", "-o", "dph_total", "--storage", std::to_string(s.disk_gb), "--raw",
             "--", s.offer + " disk_space>=" + std::to_string(s.disk_gb)},
            "search offers");
        std::vector<Offer> out;
        if (!list.is_array()) throw odd_output("search offers", "no list of offers");
        for (const json& o : list) {
            Offer offer;
            offer.id = id_text(member(o, "id"));
            const auto price = number(o, "dph_total");
            if (offer.id.empty() || !price || *price < 0) continue;
            offer.price_per_hour = *price;
            const auto gpus = number(o, "num_gpus");
            offer.what =
                std::to_string(gpus ? static_cast<int>(*gpus) : 1) + "x " + text(o, "gpu_name");
            out.push_back(std::move(offer));
        }
        sort_by_price(out);
        return out;
    }

    std::string create(const Offer& offer, const ProviderSettings& s,
                       const std::string& label) override {
        const json reply =
            read_json({"create", "instance", offer.id, "--image", s.image, "--disk",
                       std::to_string(s.disk_gb), "--label", label, "--ssh", "--direct", "--raw"},
                      "create instance");
        const std::string id = id_text(member(reply, "new_contract"));
        if (!is_true(reply, "success") || id.empty())
            throw odd_output("create instance", "no new_contract in " + reply.dump());
        return id;
    }

    std::optional<Instance> instance(const std::string& id) override {
        const json o = read_json({"show", "instance", id, "--raw"}, "show instance");
        if (o.is_object() && o.contains("instances") && o["instances"].is_null())
            return std::nullopt;
        if (!o.is_object()) throw odd_output("show instance", "no instance");
        return instance_of(o);
    }

    std::vector<Instance> instances() override {
        const json list = read_json({"show", "instances", "--raw"}, "show instances");
        if (!list.is_array()) throw odd_output("show instances", "no list of instances");
        std::vector<Instance> out;
        for (const json& o : list)
            if (o.is_object()) out.push_back(instance_of(o));
        return out;
    }

    void destroy(const std::string& id) override {
        // Since vast-cli 1.0.1 `destroy` asks first (-y skips that; older ones refuse -y):
        // the answer on stdin serves both.
        expect_line({"destroy", "instance", id}, "y\n", "destroying instance " + id + ".",
                    "destroy instance");
    }

    void stop(const std::string& id) override {
        expect_line({"stop", "instance", id}, "", "stopping instance " + id + ".", "stop instance");
    }

  private:
    static Instance instance_of(const json& o) {
        Instance i;
        i.id = id_text(member(o, "id"));
        i.status = text(o, "actual_status");
        const std::string intended = text(o, "intended_status");
        if (i.status == "running")
            i.state = Instance::State::running;
        else if (intended == "stopped")
            i.state = Instance::State::stopped;
        else if (i.status == "exited" || i.status == "offline" || i.status == "unknown")
            i.state = Instance::State::lost;
        else
            i.state = Instance::State::starting;  // null, loading, created, rebooting
        if (i.status.empty()) i.status = "loading";
        i.price_per_hour = number(o, "dph_total");
        i.label = text(o, "label");
        // Direct when port 22 is published (as `vastai ssh-url` decides), else vast's proxy.
        const auto ports = o.find("ports");
        if (ports != o.end() && ports->is_object() && ports->contains("22/tcp") &&
            (*ports)["22/tcp"].is_array() && !(*ports)["22/tcp"].empty()) {
            const json& p = (*ports)["22/tcp"][0];
            i.ssh_host = text(o, "public_ipaddr");
            i.ssh_port = parse_port(member(p, "HostPort"));
        } else {
            i.ssh_host = text(o, "ssh_host");
            i.ssh_port = parse_port(member(o, "ssh_port"));
        }
        if (i.ssh_port == 0) i.ssh_host.clear();
        return i;
    }
};

}  // namespace

std::unique_ptr<Provider> make_vast_cli(std::chrono::milliseconds timeout) {
    return std::make_unique<VastCli>(timeout);
}

}  // namespace mlt
