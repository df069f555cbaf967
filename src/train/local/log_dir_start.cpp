// The local log dir as a run found it (log_dir_start.h).
#include "mlt/train/local/log_dir_start.h"

#include <spdlog/spdlog.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "mlt/util/error.h"
#include "mlt/util/paths.h"

namespace fs = std::filesystem;

namespace mlt {

namespace {

constexpr const char* kFile = "/log_dir_at_start";

// Every regular file under `dir` (symlinks not followed): relative path -> [size, mtime ns].
nlohmann::json listing(const std::string& dir) {
    nlohmann::json files = nlohmann::json::object();
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(dir, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        if (it->is_symlink(ec) || !it->is_regular_file(ec)) continue;
        const auto size = it->file_size(ec);
        const auto mtime = it->last_write_time(ec);
        if (ec) continue;
        files[fs::relative(it->path(), dir, ec).generic_string()] = {
            size, static_cast<long long>(mtime.time_since_epoch().count())};
    }
    return files;
}

std::optional<nlohmann::json> read_record(const std::string& state_dir) {
    std::ifstream in(state_dir + kFile);
    if (!in) return std::nullopt;
    std::stringstream text;
    text << in.rdbuf();
    const auto record = nlohmann::json::parse(text.str(), nullptr, false);
    if (!record.is_object() || !record.contains("run") || !record["run"].is_string() ||
        !record.contains("files") || !record["files"].is_object())
        return std::nullopt;
    return record;
}

}  // namespace

void record_log_dir_at_start(const std::string& state_dir, const std::string& run_id,
                             const std::string& log_dir, bool all_are_this_runs) {
    const auto before = read_record(state_dir);
    if (before && (*before)["run"] == run_id) return;
    nlohmann::json record = {
        {"run", run_id},
        {"files", all_are_this_runs ? nlohmann::json::object() : listing(log_dir)}};
    try {
        std::error_code ec;
        fs::create_directories(state_dir, ec);
        write_file_atomic(state_dir + kFile, record.dump() + "\n", 0644);
    } catch (const Error& e) {
        spdlog::debug("cannot record what {} held when run {} began: {}", log_dir, run_id,
                      e.what());
    }
}

std::optional<std::set<std::string>> earlier_log_files(const std::string& state_dir,
                                                       const std::string& run_id,
                                                       const std::string& log_dir) {
    const auto record = read_record(state_dir);
    if (!record || (*record)["run"] != run_id) return std::nullopt;
    std::set<std::string> earlier;
    const nlohmann::json now = listing(log_dir);
    for (const auto& [path, was] : (*record)["files"].items()) {
        const auto it = now.find(path);
        if (it != now.end() && *it == was) earlier.insert(path);
    }
    return earlier;
}

}  // namespace mlt
