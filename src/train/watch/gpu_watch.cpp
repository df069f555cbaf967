// The host's samples while the job trains: parsed, kept and shown.
#include "mlt/train/watch/gpu_watch.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "mlt/util/text.h"

namespace mlt {

namespace {

// "U,USED,TOTAL;U,USED,TOTAL" (nvidia-smi's csv without spaces, one GPU per part).
std::optional<std::vector<GpuUse>> parse_gpus(std::string_view text) {
    std::vector<GpuUse> gpus;
    for (const std::string& part : split(text, ';')) {
        const auto fields = split(part, ',');
        if (fields.size() != 3) return std::nullopt;
        const auto util = parse_decimal(fields[0], 0, 100);
        const auto used = parse_decimal(fields[1], 0, 1LL << 40);
        const auto total = parse_decimal(fields[2], 0, 1LL << 40);
        if (!util || !used || !total) return std::nullopt;
        gpus.push_back({static_cast<int>(*util), *used, *total});
    }
    return gpus;
}

std::string gib(long long mib) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", static_cast<double>(mib) / 1024.0);
    return buf;
}

}  // namespace

std::optional<HostSample> parse_sample(std::string_view line) {
    const auto words = split(line, ' ');
    if (words.size() < 2 || words[0] != "mlt-sample") return std::nullopt;
    HostSample s;
    const auto time = parse_decimal(words[1], 0, 1LL << 40);
    if (!time) return std::nullopt;
    s.time = *time;
    for (size_t i = 2; i < words.size(); ++i) {
        const std::string& w = words[i];
        if (w.rfind("gpu=", 0) == 0 && w.size() > 4) {
            auto gpus = parse_gpus(std::string_view(w).substr(4));
            if (gpus) s.gpus = std::move(*gpus);  // an odd nvidia-smi: no GPU column
        } else if (w.rfind("load=", 0) == 0) {
            s.load1 = parse_real(w.substr(5), 0, 1e9);
        } else if (w.rfind("free=", 0) == 0) {
            if (auto kib = parse_decimal(w.substr(5), 0, 1LL << 50)) s.free_kib = *kib;
        }
    }
    return s;
}

std::string sample_json(const HostSample& sample, const std::string& run_id) {
    nlohmann::json j;
    j["time"] = sample.time;
    j["run_id"] = run_id;
    nlohmann::json gpus = nlohmann::json::array();
    for (const auto& g : sample.gpus)
        gpus.push_back({{"util", g.util},
                        {"mem_used_mib", g.mem_used_mib},
                        {"mem_total_mib", g.mem_total_mib}});
    j["gpus"] = gpus;
    if (sample.load1) j["load1"] = *sample.load1;
    if (sample.free_kib) j["disk_free_kib"] = *sample.free_kib;
    return j.dump();
}

std::optional<HostSample> parse_sample_json(std::string_view line, std::string* run_id) {
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_object()) return std::nullopt;
    const auto time = j.find("time");
    const auto run = j.find("run_id");
    const auto gpus = j.find("gpus");
    if (time == j.end() || !time->is_number_integer() || run == j.end() || !run->is_string() ||
        gpus == j.end() || !gpus->is_array())
        return std::nullopt;
    HostSample s;
    s.time = time->get<long long>();
    *run_id = run->get<std::string>();
    for (const auto& g : *gpus) {
        if (!g.is_object()) return std::nullopt;
        const auto number = [&g](const char* key) -> std::optional<long long> {
            const auto it = g.find(key);
            if (it == g.end() || !it->is_number_integer()) return std::nullopt;
            return it->get<long long>();
        };
        const auto util = number("util"), used = number("mem_used_mib"),
                   total = number("mem_total_mib");
        if (!util || !used || !total) return std::nullopt;
        s.gpus.push_back({static_cast<int>(*util), *used, *total});
    }
    const auto load = j.find("load1");
    if (load != j.end() && load->is_number()) s.load1 = load->get<double>();
    const auto free = j.find("disk_free_kib");
    if (free != j.end() && free->is_number_integer()) s.free_kib = free->get<long long>();
    return s;
}

std::string gpu_status(const HostSample& sample) {
    std::string out;
    for (const auto& g : sample.gpus)
        out += (out.empty() ? "GPU " : ", ") + std::to_string(g.util) + "% " + gib(g.mem_used_mib) +
               "/" + gib(g.mem_total_mib) + " GiB";
    return out;
}

void GpuWatch::add(const HostSample& sample) {
    if (sample.gpus.empty()) return;
    double sum = 0;
    for (const auto& g : sample.gpus) {
        sum += g.util;
        peak_ = std::max(peak_, g.util);
    }
    util_sum_ += sum / static_cast<double>(sample.gpus.size());
    ++gpu_samples_;
}

std::string GpuWatch::summary() const {
    if (gpu_samples_ == 0) return "";
    return "mean " + std::to_string(static_cast<int>(std::lround(util_sum_ / gpu_samples_))) +
           " %, peak " + std::to_string(peak_) + " % over " + std::to_string(gpu_samples_) +
           " sample" + (gpu_samples_ == 1 ? "" : "s");
}

}  // namespace mlt
