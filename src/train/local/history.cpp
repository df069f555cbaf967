// The local run history (history.jsonl): records appended, read, and shown by `mlt jobs`.
#include "mlt/train/local/history.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "mlt/train/local/local_state.h"
#include "mlt/util/paths.h"
#include "mlt/util/reporter.h"
#include "mlt/util/text.h"

namespace mlt {

namespace {

// A string member of an object, or "" (a record edited by hand may hold anything).
std::string text_of(const nlohmann::json& object, const char* key) {
    if (!object.is_object()) return std::string();
    const auto it = object.find(key);
    return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

constexpr size_t kDefaultShown = 20;

std::string field(const nlohmann::json& run, const char* key) {
    auto it = run.find(key);
    if (it == run.end() || it->is_null()) return "-";
    if (it->is_string()) return it->get<std::string>();
    if (it->is_array()) {
        std::string joined;
        for (const auto& v : *it)
            joined +=
                (joined.empty() ? "" : ",") + (v.is_string() ? v.get<std::string>() : v.dump());
        return joined;
    }
    return it->dump();
}

// A cost as the table shows it: "$1.23", or "-" when the record has none.
std::string cost_field(const nlohmann::json& run) {
    auto it = run.find("cost");
    return it != run.end() && it->is_number() ? format_usd(it->get<double>()) : "-";
}

}  // namespace

void add_ledger(nlohmann::json& record, const RunLedger& ledger, double now) {
    if (ledger.empty()) return;
    nlohmann::json attempts = nlohmann::json::array();
    nlohmann::json hosts = nlohmann::json::array();
    for (const auto& a : ledger.attempts()) {
        nlohmann::json one = {{"attempt", a.attempt},
                              {"host", a.host},
                              {"start", iso_time(static_cast<std::time_t>(a.start))},
                              {"end", nullptr},
                              {"how", a.how.empty() ? nlohmann::json() : nlohmann::json(a.how)},
                              {"price_per_hour", a.price_per_hour},
                              {"cost", RunLedger::cost_of(a, now)}};
        if (a.end) one["end"] = iso_time(static_cast<std::time_t>(*a.end));
        attempts.push_back(std::move(one));
        if (std::find(hosts.begin(), hosts.end(), a.host) == hosts.end()) hosts.push_back(a.host);
    }
    record["attempts"] = std::move(attempts);
    record["hosts"] = std::move(hosts);
    record["duration_s"] = std::round(ledger.elapsed(now));
    const auto cost = ledger.cost(now);
    record["cost"] = cost ? nlohmann::json(*cost) : nlohmann::json();
}

std::optional<std::string> moved_away_from(const std::vector<nlohmann::json>& runs,
                                           const std::string& run_id, const std::string& host) {
    for (const auto& r : latest_per_run(runs)) {
        if (text_of(r, "id") != run_id) continue;
        const auto attempts = r.find("attempts");
        if (attempts == r.end() || !attempts->is_array()) return std::nullopt;
        bool lost_here = false;
        std::string last;
        for (const auto& a : *attempts) {
            lost_here =
                lost_here || (text_of(a, "host") == host && text_of(a, "how") == "host lost");
            last = text_of(a, "host");
        }
        if (lost_here && !last.empty() && last != host) return last;
        return std::nullopt;
    }
    return std::nullopt;
}

namespace {

// The attempts before `before` that record `r` holds (only those on `host`, when given).
std::vector<AttemptRecord> attempts_of(const nlohmann::json& r, int before, double until,
                                       const std::string* host) {
    std::vector<AttemptRecord> earlier;
    const auto attempts = r.find("attempts");
    if (attempts == r.end() || !attempts->is_array()) return {};
    for (const auto& a : *attempts) {
        if (!a.is_object() || (host && text_of(a, "host") != *host)) continue;
        const nlohmann::json number = a.value("attempt", nlohmann::json());
        const auto start = parse_iso_time(text_of(a, "start"));
        if (!number.is_number_integer() || !start) continue;
        AttemptRecord one;
        one.attempt = number.get<int>();
        if (one.attempt >= before) continue;
        one.host = text_of(a, "host");
        one.start = static_cast<double>(*start);
        const auto end = parse_iso_time(text_of(a, "end"));
        one.end = end ? static_cast<double>(*end) : std::max(one.start, until);
        one.how = text_of(a, "how").empty() ? "left" : text_of(a, "how");
        const nlohmann::json price = a.value("price_per_hour", nlohmann::json());
        if (price.is_number()) one.price_per_hour = price.get<double>();
        earlier.push_back(std::move(one));
    }
    return earlier;
}

}  // namespace

std::vector<AttemptRecord> earlier_attempts(const std::vector<nlohmann::json>& runs,
                                            const std::string& run_id, int before, double until) {
    for (const auto& r : latest_per_run(runs))
        if (r.is_object() && text_of(r, "id") == run_id)
            return attempts_of(r, before, until, nullptr);
    return {};
}

std::vector<AttemptRecord> earlier_attempts_on(const std::vector<nlohmann::json>& runs,
                                               const std::string& run_id, const std::string& host,
                                               int before, double until) {
    for (auto r = runs.rbegin(); r != runs.rend(); ++r) {
        if (!r->is_object() || text_of(*r, "id") != run_id) continue;
        auto earlier = attempts_of(*r, before, until, &host);
        if (!earlier.empty()) return earlier;
    }
    return {};
}

namespace {

// A run recorded with `status` has not ended: a --resume may go on with it.
bool unfinished(const std::string& status) {
    return status == "running" || status == "restarting" || status == "link lost" ||
           status == "host lost" || status == "detached" || status == "failing over";
}

// The model's newest run (the last of its records in the file) and its last attempt; false
// when there is none, or the run has no id or no attempt.
bool newest_run_of(const std::vector<nlohmann::json>& runs, const std::string& model,
                   nlohmann::json& run, nlohmann::json& last) {
    const nlohmann::json* newest = nullptr;
    for (const auto& r : runs)
        if (r.is_object() && text_of(r, "model") == model) newest = &r;
    if (!newest || text_of(*newest, "id").empty()) return false;
    run = *newest;
    const nlohmann::json attempts = run.value("attempts", nlohmann::json());
    if (!attempts.is_array() || attempts.empty() || !attempts.back().is_object()) return false;
    last = attempts.back();
    return true;
}

}  // namespace

std::optional<CutFailover> cut_failover(const std::vector<nlohmann::json>& runs,
                                        const std::string& model, const std::string& here) {
    nlohmann::json run, last;
    if (!newest_run_of(runs, model, run, last)) return std::nullopt;
    const std::string status = text_of(run, "status");
    const auto& attempts = run["attempts"];
    if (status == "failing over") {
        // [..., the lost host's attempt, the standby's]: the standby's is the one to continue.
        const nlohmann::json number = last.value("attempt", nlohmann::json());
        if (attempts.size() < 2 || !number.is_number_integer()) return std::nullopt;
        const auto& lost = attempts[attempts.size() - 2];
        if (!lost.is_object() || text_of(lost, "how") != "host lost") return std::nullopt;
        return CutFailover{text_of(run, "id"), text_of(lost, "host"), text_of(last, "host"),
                           std::max(1, number.get<int>())};
    }
    if (status != "host lost" || text_of(last, "how") != "host lost" ||
        text_of(last, "host") == here)
        return std::nullopt;
    CutFailover cut{text_of(run, "id"), text_of(last, "host"), "", 1};
    for (const auto& a : attempts) {
        const nlohmann::json number =
            a.is_object() ? a.value("attempt", nlohmann::json()) : nlohmann::json();
        if (number.is_number_integer()) cut.attempt = std::max(cut.attempt, number.get<int>() + 1);
    }
    return cut;
}

std::optional<WentOn> run_went_on(const std::vector<nlohmann::json>& runs, const std::string& model,
                                  const std::string& host) {
    nlohmann::json run, last;
    if (!newest_run_of(runs, model, run, last)) return std::nullopt;
    const std::string status = text_of(run, "status");
    if (!unfinished(status)) return std::nullopt;
    const std::string there = text_of(last, "host");
    if (there.empty() || there == host || !moved_away_from(runs, text_of(run, "id"), host))
        return std::nullopt;
    WentOn went{text_of(run, "id"), there, text_of(run, "remote_dir"), std::nullopt};
    const nlohmann::json price = last.value("price_per_hour", nlohmann::json());
    if (price.is_number() && price.get<double>() > 0) went.price_per_hour = price.get<double>();
    return went;
}

std::optional<std::string> newest_run_id(const std::vector<nlohmann::json>& runs,
                                         const std::string& model) {
    nlohmann::json run, last;
    if (!newest_run_of(runs, model, run, last)) return std::nullopt;
    return text_of(run, "id");
}

bool knows_run(const std::vector<nlohmann::json>& runs, const std::string& run_id) {
    for (const auto& r : runs)
        if (r.is_object() && text_of(r, "id") == run_id) return true;
    return false;
}

std::optional<RunHere> unfinished_run_on(const std::vector<nlohmann::json>& runs,
                                         const std::string& model, const std::string& host) {
    nlohmann::json run, last;
    if (!newest_run_of(runs, model, run, last)) return std::nullopt;
    const std::string status = text_of(run, "status");
    if (!unfinished(status)) return std::nullopt;
    const nlohmann::json number = last.value("attempt", nlohmann::json());
    const auto start = parse_iso_time(text_of(last, "start"));
    if (text_of(last, "host") != host || !number.is_number_integer() || !start) return std::nullopt;
    return RunHere{text_of(run, "id"), number.get<int>(), static_cast<double>(*start),
                   status == "failing over"};
}

std::optional<std::time_t> parse_iso_time(const std::string& text) {
    std::tm tm{};
    const char* end = ::strptime(text.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm);
    if (!end || *end != '\0') return std::nullopt;
    return ::timegm(&tm);
}

std::string history_path() {
    return mltk_dir() + "/ssh/history.jsonl";
}

std::vector<nlohmann::json> read_history(const std::string& path, int* skipped) {
    std::vector<nlohmann::json> runs;
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty()) continue;
        auto run = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
        if (run.is_object())
            runs.push_back(std::move(run));
        else if (skipped)
            ++*skipped;
    }
    return runs;
}

std::vector<nlohmann::json> latest_per_run(const std::vector<nlohmann::json>& runs) {
    std::vector<nlohmann::json> out;
    std::map<std::string, size_t> where;  // run id -> index in out
    for (const auto& run : runs) {
        auto id = run.find("id");
        if (id == run.end() || !id->is_string()) {
            out.push_back(run);
            continue;
        }
        auto [it, added] = where.emplace(id->get<std::string>(), out.size());
        if (added)
            out.push_back(run);
        else
            out[it->second] = run;
    }
    return out;
}

std::string format_history(const std::vector<nlohmann::json>& runs, size_t limit) {
    if (runs.empty()) return "no runs recorded yet\n";
    const size_t first = limit && runs.size() > limit ? runs.size() - limit : 0;
    std::ostringstream out;
    char line[1024];
    const char* const format = "%-16s %-20s %-20s %-10s %-5s %-8s %-9s %s\n";
    std::snprintf(line, sizeof line, format, "ID", "MODEL", "START", "STATUS", "EXIT", "ATTEMPTS",
                  "COST", "HOSTS");
    out << line;
    bool unattended = false;
    for (size_t i = first; i < runs.size(); ++i) {
        const auto& r = runs[i];
        // A run id adopted from a remote lock (--resume) is the remote's word: escaped.
        const auto shown = [&r](const char* key) { return printable(field(r, key), 200); };
        // A run whose shutdown_cmds the guard on the host ran (no mlt collected it in time).
        const bool by_guard = field(r, "shutdown") == "unattended";
        unattended = unattended || by_guard;
        std::snprintf(
            line, sizeof line, format, shown("id").c_str(), shown("model").c_str(),
            shown("start").c_str(), (shown("status") + (by_guard ? "*" : "")).c_str(),
            shown("exit_status").c_str(), shown("attempt").c_str(), cost_field(r).c_str(),
            (shown("hosts") +
             (r.contains("instances") ? " (rented: " + shown("instances") + ")" : std::string()))
                .c_str());
        out << line;
    }
    if (unattended)
        out << "* ended unattended: the guard on the host ran shutdown_cmds (no mlt collected the "
               "run in time)\n";
    return out.str();
}

std::vector<std::string> strings_in(const nlohmann::json& list) {
    std::vector<std::string> out;
    if (list.is_array())
        for (const auto& x : list)
            if (x.is_string()) out.push_back(x.get<std::string>());
    return out;
}

NodeAttempts node_attempts_of(const std::vector<nlohmann::json>& runs, const std::string& run_id) {
    for (auto it = runs.rbegin(); it != runs.rend(); ++it) {
        if (!it->is_object() || text_of(*it, "id") != run_id) continue;
        const auto list = it->find("node_attempts");
        if (list == it->end() || !list->is_array()) continue;
        NodeAttempts out;
        for (const auto& a : *list) {
            const auto number = a.is_object() ? a.value("attempt", nlohmann::json()) : nullptr;
            const auto nodes = a.is_object() ? a.value("nodes", nlohmann::json()) : nullptr;
            if (!number.is_number_integer() || !nodes.is_array()) continue;
            out.emplace_back(number.get<int>(), strings_in(nodes));
        }
        return out;
    }
    return {};
}

std::string format_node_attempts(const NodeAttempts& attempts) {
    std::string line = "nodes by attempt:";
    for (size_t a = 0; a < attempts.size(); ++a) {
        const auto& [number, hosts] = attempts[a];
        line += (a ? ";" : "") + std::string(" #") + std::to_string(number);
        for (size_t r = 0; r < hosts.size(); ++r)
            line += (r ? ", " : " ") + std::string("rank ") + std::to_string(r) + " " +
                    printable(hosts[r], 200);
    }
    return line;
}

void append_history(const nlohmann::json& run, Reporter& reporter) {
    const std::string path = history_path();
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
    // One write(2) with O_APPEND: lines of two mlt processes never interleave.
    // A run id from a remote lock need not be UTF-8: replaced, not thrown on.
    const std::string line =
        run.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    const int fd =
        ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) {
        reporter.warning(std::string("the run is not recorded: ") +
                         own_file_error(path, errno).what());
        return;
    }
    const bool ok = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
    ::close(fd);
    if (!ok) reporter.warning("cannot record the run in " + path);
}

nlohmann::json excluded_json(const std::vector<ExcludedHost>& hosts) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& h : hosts)
        list.push_back({{"host", h.host},
                        {"until", iso_time(static_cast<std::time_t>(h.until))},
                        {"until_s", static_cast<long long>(h.until)},
                        {"why", h.why}});
    return list;
}

std::vector<ExcludedHost> excluded_hosts(const std::vector<nlohmann::json>& runs, double now) {
    std::vector<ExcludedHost> out;
    // Every record: the nodes of a gang record the run under one id, each its own hosts.
    for (const auto& r : runs) {
        const auto list = r.is_object() ? r.find("excluded_hosts") : r.end();
        if (!r.is_object() || list == r.end() || !list->is_array()) continue;
        for (const auto& h : *list) {
            if (!h.is_object()) continue;
            const auto until = h.value("until_s", nlohmann::json());
            if (!until.is_number() || until.get<double>() <= now) continue;
            // Each record of a run repeats its marks: the newest stands.
            ExcludedHost mark{text_of(h, "host"), until.get<double>(), text_of(h, "why"),
                              text_of(r, "id")};
            const auto same = std::find_if(out.begin(), out.end(), [&](const ExcludedHost& e) {
                return e.host == mark.host && e.run_id == mark.run_id;
            });
            if (same != out.end()) out.erase(same);
            out.push_back(std::move(mark));
        }
    }
    return out;
}

std::vector<ExcludedHost> excluded_hosts_now() {
    int skipped = 0;
    return excluded_hosts(read_history(history_path(), &skipped),
                          static_cast<double>(std::time(nullptr)));
}

std::string format_excluded(const std::vector<ExcludedHost>& hosts) {
    std::string out;
    for (const auto& h : hosts)
        out += printable(h.host, 200) + " is marked bad until " +
               iso_time(static_cast<std::time_t>(h.until)) + " (run " + printable(h.run_id, 100) +
               "): " + printable(h.why, 400) + "\n";
    return out;
}

int run_jobs(bool json, bool all) {
    int skipped = 0;
    const std::string path = history_path();
    const auto records = read_history(path, &skipped);
    auto runs = latest_per_run(records);
    if (skipped)
        reporter().warning(path + ": skipped " + std::to_string(skipped) +
                           " line(s) that are not JSON objects");
    if (json) {
        nlohmann::json array = nlohmann::json::array();
        const size_t first = !all && runs.size() > kDefaultShown ? runs.size() - kDefaultShown : 0;
        for (size_t i = first; i < runs.size(); ++i) array.push_back(runs[i]);
        // ASCII only: a remote run id's C1 controls (U+009B is CSI) leave as \u escapes, and
        // bytes that are not UTF-8 as U+FFFD.
        std::printf("%s\n",
                    array.dump(2, ' ', true, nlohmann::json::error_handler_t::replace).c_str());
    } else {
        std::fputs(format_history(runs, all ? 0 : kDefaultShown).c_str(), stdout);
        // Every record, not only each run's newest: a gang's nodes record their own marks.
        const auto bad = excluded_hosts(records, static_cast<double>(std::time(nullptr)));
        if (!bad.empty())
            std::fputs(
                ("\nhosts marked bad (watch.on_failure exclude_host):\n" + format_excluded(bad))
                    .c_str(),
                stdout);
    }
    return 0;
}

std::string iso_time(std::time_t t) {
    char buf[32];
    std::tm tm{};
    gmtime_r(&t, &tm);
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

}  // namespace mlt
