// RunPod's CLI (`runpodctl`, github runpod/runpodctl) as mlt drives it: the 1.x commands (`get
// cloud`, `create pod`, `get pod -a`, `stop pod`, `remove pod`), which 2.x keeps with a
// deprecation line on stderr. Their output is a table (tablewriter: upper-case headers, cells
// padded, separated by tabs) or one line; an error is "Error: MSG" on stderr with exit 1.
#include <map>

#include "provider_cli.h"

namespace mlt {

namespace {

std::string trim(const std::string& s) {
    const size_t a = s.find_first_not_of(" \t");
    if (a == std::string::npos) return {};
    return s.substr(a, s.find_last_not_of(" \t") - a + 1);
}

std::vector<std::string> cells(const std::string& line) {
    std::vector<std::string> out;
    size_t at = 0;
    for (size_t tab; (tab = line.find('\t', at)) != std::string::npos; at = tab + 1)
        out.push_back(trim(line.substr(at, tab - at)));
    if (at < line.size() && !trim(line.substr(at)).empty()) out.push_back(trim(line.substr(at)));
    return out;
}

// The table's rows as header -> cell; lines before the header (a warning) are skipped.
std::vector<std::map<std::string, std::string>> rows_of(const std::string& out,
                                                        const std::string& first_header) {
    std::vector<std::map<std::string, std::string>> rows;
    std::vector<std::string> header;
    size_t at = 0;
    for (size_t nl; (nl = out.find('\n', at)) != std::string::npos; at = nl + 1) {
        const std::vector<std::string> c = cells(out.substr(at, nl - at));
        if (header.empty()) {
            if (!c.empty() && c[0] == first_header) header = c;
            continue;
        }
        if (c.empty()) continue;
        std::map<std::string, std::string> row;
        for (size_t i = 0; i < header.size() && i < c.size(); ++i) row[header[i]] = c[i];
        rows.push_back(std::move(row));
    }
    return rows;
}

std::optional<double> price_of(const std::string& text) {
    try {
        size_t used = 0;
        const double p = std::stod(text, &used);
        if (used == text.size() && p >= 0) return p;
    } catch (const std::exception&) {
    }
    return std::nullopt;  // "Reserved": no price
}

class RunpodCli : public CliProvider {
  public:
    explicit RunpodCli(std::chrono::milliseconds timeout) : CliProvider("runpodctl", timeout) {}
    std::string name() const override { return "RunPod"; }

    std::vector<Offer> offers(const ProviderSettings& s) override {
        // Secure cloud, as `create pod` rents (its pods have public IPs, so direct ssh).
        const Output o = checked({"get", "cloud", "--secure"}, "get cloud");
        std::vector<Offer> out;
        for (auto& row : rows_of(o.out, "GPU TYPE")) {
            // "1x NVIDIA GeForce RTX 4090": the count, then the type `create pod` takes.
            const std::string& type = row["GPU TYPE"];
            const size_t x = type.find("x ");
            const std::string id = x == std::string::npos ? type : type.substr(x + 2);
            const auto price = price_of(row["ONDEMAND $/HR"]);
            if (id != s.offer || !price) continue;
            out.push_back({id, *price, type});
        }
        sort_by_price(out);
        return out;
    }

    std::string create(const Offer& offer, const ProviderSettings& s,
                       const std::string& label) override {
        std::vector<std::string> args{"create",
                                      "pod",
                                      "--name",
                                      label,
                                      "--gpuType",
                                      offer.id,
                                      "--imageName",
                                      s.image,
                                      "--containerDiskSize",
                                      std::to_string(s.disk_gb),
                                      "--ports",
                                      "22/tcp",
                                      "--secureCloud",
                                      "--startSSH"};
        if (s.max_price) {
            args.push_back("--cost");
            args.push_back(std::to_string(*s.max_price));
        }
        const Output o = checked(args, "create pod");
        // pod "ID" created for $0.690 / hr
        const size_t a = o.out.find("pod \"");
        const size_t b = a == std::string::npos ? a : o.out.find('"', a + 5);
        if (b == std::string::npos || o.out.find("created", b) == std::string::npos)
            throw odd_output("create pod", o.out.substr(0, 200));
        return o.out.substr(a + 5, b - a - 5);
    }

    std::optional<Instance> instance(const std::string& id) override {
        for (const Instance& i : listed({"get", "pod", id, "-a"}))
            if (i.id == id) return i;
        return std::nullopt;
    }

    std::vector<Instance> instances() override { return listed({"get", "pod", "-a"}); }

    void destroy(const std::string& id) override {
        expect_line({"remove", "pod", id}, "", "pod \"" + id + "\" removed", "remove pod");
    }

    void stop(const std::string& id) override {
        expect_line({"stop", "pod", id}, "", "pod \"" + id + "\" stopped", "stop pod");
    }

  private:
    Output checked(const std::vector<std::string>& args, const std::string& what) const {
        Output o = run(args);
        for (const auto& l : o.err)
            if (l.rfind("Error:", 0) == 0) o.exit_code = o.exit_code ? o.exit_code : 1;
        if (o.exit_code != 0) throw_failed(what, o);
        return o;
    }

    std::vector<Instance> listed(const std::vector<std::string>& args) const {
        const Output o = checked(args, "get pod");
        std::vector<Instance> out;
        for (auto& row : rows_of(o.out, "ID")) {
            Instance i;
            i.id = row["ID"];
            i.label = row["NAME"];
            i.status = row["STATUS"];
            i.price_per_hour = price_of(row["$/HR"]);
            // "IP:PUBLIC->PRIVATE<no-break space>(pub,tcp)", joined by ",": the entry for
            // port 22 on a public address.
            const std::string& ports = row["PORTS"];
            for (size_t at = 0; (at = ports.find("->22", at)) != std::string::npos; at += 4) {
                const std::string after = ports.substr(at + 4, 12);
                if (after.rfind("\xc2\xa0(pub,tcp)", 0) != 0 && after.rfind(" (pub,tcp)", 0) != 0)
                    continue;
                const size_t comma = ports.rfind(',', at);
                const size_t from = comma == std::string::npos ? 0 : comma + 1;
                const std::string addr = trim(ports.substr(from, at - from));
                const size_t colon = addr.rfind(':');
                if (colon == std::string::npos) continue;
                i.ssh_host = addr.substr(0, colon);
                i.ssh_port = parse_port(nlohmann::json(addr.substr(colon + 1)));
            }
            if (i.ssh_port == 0) i.ssh_host.clear();
            if (i.status == "RUNNING")
                i.state = i.ssh_host.empty() ? Instance::State::starting : Instance::State::running;
            else if (i.status == "EXITED")
                i.state = Instance::State::stopped;
            else
                i.state = Instance::State::lost;  // TERMINATED, or a word mlt does not know
            if (!i.id.empty()) out.push_back(std::move(i));
        }
        return out;
    }
};

}  // namespace

std::unique_ptr<Provider> make_runpod_cli(std::chrono::milliseconds timeout) {
    return std::make_unique<RunpodCli>(timeout);
}

}  // namespace mlt
