// The local record of rented machines (include/mlt/provider/instances.h).
#include "mlt/provider/instances.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "json_fields.h"
#include "mlt/util/error.h"
#include "mlt/util/paths.h"

namespace mlt {

namespace {

using nlohmann::json;
using provider_json::number;
using provider_json::text;

}  // namespace

std::string rented_instances_path() {
    return mltk_dir() + "/ssh/instances.jsonl";
}

void record_rented_instance(const std::string& path, const RentedInstance& inst) {
    json r = {{"provider", inst.provider},
              {"id", inst.id},
              {"run", inst.run_id},
              {"model", inst.model},
              {"label", inst.label},
              {"state", inst.state},
              {"at", inst.at}};
    if (inst.price_per_hour) r["price_per_hour"] = *inst.price_per_hour;
    if (inst.rank != 0) r["rank"] = inst.rank;
    const std::string line = r.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
    const int fd =
        ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        throw io_error("cannot record the rented instance " + inst.id + " in " + path + ": " +
                           std::strerror(errno),
                       "it may bill: release it with the marketplace's own CLI");
    const bool ok = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
    ::close(fd);
    if (!ok)
        throw io_error("cannot record the rented instance " + inst.id + " in " + path,
                       "it may bill: release it with the marketplace's own CLI");
}

void record_rented_state(RentedInstance inst, const std::string& state) {
    inst.state = state;
    inst.at =
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    record_rented_instance(rented_instances_path(), inst);
}

std::vector<RentedInstance> read_rented_instances(const std::string& path, bool with_destroyed) {
    std::vector<RentedInstance> all;
    std::map<std::string, size_t> where;  // provider + id -> index in all
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);) {
        const json r = json::parse(line, nullptr, /*allow_exceptions=*/false);
        if (!r.is_object()) continue;
        RentedInstance inst;
        inst.provider = text(r, "provider");
        inst.id = text(r, "id");
        inst.state = text(r, "state");
        const auto at = number(r, "at");
        if (inst.provider.empty() || inst.id.empty() || inst.state.empty() || !at) continue;
        inst.run_id = text(r, "run");
        inst.model = text(r, "model");
        inst.label = text(r, "label");
        inst.at = *at;
        inst.since = *at;
        inst.price_per_hour = number(r, "price_per_hour");
        inst.rank = static_cast<int>(number(r, "rank").value_or(0));
        const auto [it, added] = where.emplace(inst.provider + "\n" + inst.id, all.size());
        if (added) {
            all.push_back(std::move(inst));
        } else {
            inst.since = all[it->second].since;
            if (!inst.price_per_hour) inst.price_per_hour = all[it->second].price_per_hour;
            all[it->second] = std::move(inst);
        }
    }
    if (!with_destroyed)
        all.erase(std::remove_if(all.begin(), all.end(),
                                 [](const RentedInstance& i) { return i.state == "destroyed"; }),
                  all.end());
    return all;
}

}  // namespace mlt
