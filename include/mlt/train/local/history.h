#pragma once

#include <ctime>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "mlt/train/cost/run_ledger.h"
#include "mlt/util/reporter.h"

namespace mlt {

// `<mltk dir>/ssh/history.jsonl`: one JSON object per record of a run.
std::string history_path();

// Reads the runs recorded in `path`, oldest first; a missing file is an empty history.
// Lines that are not JSON objects are skipped and counted in `skipped`.
std::vector<nlohmann::json> read_history(const std::string& path, int* skipped);

// One record per run id: a run appends one when it starts and one when it ends (or is left,
// or is collected by a --resume), and the newest stands for the run, in the place of the
// run's first record. Records without an id stay as they are.
std::vector<nlohmann::json> latest_per_run(const std::vector<nlohmann::json>& runs);

// Adds what `ledger` knows at `now` (epoch seconds) to a history record: "attempts" (each
// with attempt, host, start, end, how, price_per_hour, cost), "hosts" (each once, in the
// order used), "duration_s" and "cost" (USD; null when no host has a price). Nothing when
// the ledger is empty.
void add_ledger(nlohmann::json& record, const RunLedger& ledger, double now);

// The host that run `run_id` went on on after `host` was lost (a failover), as the newest
// record of the run in `runs` has it; nullopt when the run did not move away from `host`.
std::optional<std::string> moved_away_from(const std::vector<nlohmann::json>& runs,
                                           const std::string& run_id, const std::string& host);

// The attempts of run `run_id` before attempt `before` (those of other hosts, or of a restart
// here), as the newest record of the run in `runs` has them: a --resume that adopts attempt
// `before` keeps them, so that its history and summary name every host the run was on. An
// attempt the record has as still open ended at `until` (when the adopted attempt began).
std::vector<AttemptRecord> earlier_attempts(const std::vector<nlohmann::json>& runs,
                                            const std::string& run_id, int before, double until);

// The same for one node of a gang (every node records the run under its one id): the
// attempts on `host`, from the newest record of the run that has any there.
std::vector<AttemptRecord> earlier_attempts_on(const std::vector<nlohmann::json>& runs,
                                               const std::string& run_id, const std::string& host,
                                               int before, double until);

// A failover of the newest run of `model` that an mlt killed midway did not finish. Either
// the run's newest record ends with an attempt on another host than `here` that was lost
// ("host lost") and nothing after it (no standby chosen yet: `to` is empty), or it is the
// record a failover writes once it chose its standby, before it acts there ("failing over":
// the last attempt is the standby's, `to`). `attempt` is the attempt the run continues as (1
// when no job ever started).
struct CutFailover {
    std::string run_id;
    std::string from;  // the lost host
    std::string to;    // the standby the failover chose; empty: none yet
    int attempt = 1;
};
std::optional<CutFailover> cut_failover(const std::vector<nlohmann::json>& runs,
                                        const std::string& model, const std::string& here);

// The newest run of `model` when its last attempt is on `host` and the run has not ended
// there (running, left by a lost link or a lost host, detached): what a --resume on `host`
// would continue. `attempt` is that attempt's number (0: its job never started there).
struct RunHere {
    std::string run_id;
    int attempt = 1;
    double start = 0;           // the attempt's start, epoch seconds
    bool failing_over = false;  // a failover to `host` was under way: no job started there yet
};
std::optional<RunHere> unfinished_run_on(const std::vector<nlohmann::json>& runs,
                                         const std::string& model, const std::string& host);

// The newest run of `model` when it went on on another host after `host` was lost (a
// failover, finished or under way) and has not ended there: where it went, as its newest
// record has it.
struct WentOn {
    std::string run_id;
    std::string host;        // where it went (user@host:port)
    std::string remote_dir;  // its remote dir there
    std::optional<double> price_per_hour;
};
std::optional<WentOn> run_went_on(const std::vector<nlohmann::json>& runs, const std::string& model,
                                  const std::string& host);

// The id of the newest run of `model` in `runs`; nullopt when there is none.
std::optional<std::string> newest_run_id(const std::vector<nlohmann::json>& runs,
                                         const std::string& model);

// Whether `runs` holds a record of run `run_id`.
bool knows_run(const std::vector<nlohmann::json>& runs, const std::string& run_id);

// "2026-11-25T17:04:05Z" (as iso_time writes it) in epoch seconds; nullopt for anything else.
std::optional<std::time_t> parse_iso_time(const std::string& text);

// A table of the newest `limit` runs (all when 0), newest last: id, model, start, status,
// exit status, attempts, cost, hosts.
std::string format_history(const std::vector<nlohmann::json>& runs, size_t limit);

// The strings of a JSON array (anything else in it, or a value that is no array: none).
std::vector<std::string> strings_in(const nlohmann::json& list);

// The nodes of each attempt of a multi-node run: the attempt's number, its hosts by rank.
using NodeAttempts = std::vector<std::pair<int, std::vector<std::string>>>;
// As the newest record of run `run_id` that has them lists them (a run whose node moved);
// empty: none.
NodeAttempts node_attempts_of(const std::vector<nlohmann::json>& runs, const std::string& run_id);
// "nodes by attempt: #1 rank 0 A, rank 1 B; #2 rank 0 A, rank 1 C".
std::string format_node_attempts(const NodeAttempts& attempts);

// Appends one run to the history file (creating its directory); a failure to write is a
// warning through `reporter` (the run's: a node's keeps its prefix), never the run's error.
void append_history(const nlohmann::json& run, Reporter& reporter);

// A time as the history records it: "2026-11-25T17:04:05Z" (UTC).
std::string iso_time(std::time_t t);

// A host that a `watch.on_failure` rule (exclude_host) marked bad: no run of this machine takes
// it as a standby host until `until` (epoch seconds), and `jobs` and `status` show it. A run
// writes the hosts it marked into its history records ("excluded_hosts").
struct ExcludedHost {
    std::string host;  // user@host:port, as the run named it
    double until = 0;
    std::string why;  // the rule and its line
    std::string run_id;
    bool left = false;  // the run left it answering (not recorded: it was lost, or left)
};
constexpr double kExcludedSeconds = 24 * 3600;
nlohmann::json excluded_json(const std::vector<ExcludedHost>& hosts);
// The hosts marked bad in `runs` (each run's newest record) until after `now`, newest last.
std::vector<ExcludedHost> excluded_hosts(const std::vector<nlohmann::json>& runs, double now);
// The same from this machine's history, now.
std::vector<ExcludedHost> excluded_hosts_now();
// One line per host: "HOST is marked bad until TIME (run R): WHY".
std::string format_excluded(const std::vector<ExcludedHost>& hosts);

// `mlt jobs [--json] [--all]`; returns the exit code.
int run_jobs(bool json, bool all);

}  // namespace mlt
