// Several nodes: the rendezvous variables, the checks before anything remote, and the gang of
// runs (one TrainRun per node, each in a thread of its own).
#include "mlt/train/nodes/nodes.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

#include "mlt/train/local/history.h"
#include "mlt/train/local/local_state.h"
#include "mlt/train/nodes/gang.h"
#include "mlt/train/nodes/gang_resume.h"
#include "mlt/train/run/remote_job.h"
#include "mlt/train/run/train_run.h"
#include "mlt/util/error.h"
#include "mlt/util/interrupt.h"
#include "mlt/util/reporter.h"
#include "mlt/util/text.h"

namespace fs = std::filesystem;

namespace mlt {

namespace {

std::string joined(const std::vector<std::string>& words, const std::string& separator) {
    std::string out;
    for (const auto& w : words) out += (out.empty() ? "" : separator) + w;
    return out;
}

// Two nodes that are the same host and remote dir would share one job dir.
void check_distinct(const std::vector<NodeSpec>& nodes) {
    for (size_t i = 0; i < nodes.size(); ++i)
        for (size_t j = i + 1; j < nodes.size(); ++j) {
            const auto& a = nodes[i].target;
            const auto& b = nodes[j].target;
            if (a.connect.host == b.connect.host && a.connect.port == b.connect.port &&
                a.connect.user == b.connect.user && a.remote_dir == b.remote_dir)
                throw usage_error("nodes " + std::to_string(i) + " and " + std::to_string(j) +
                                      " are the same host and remote dir (" + a.connect.host +
                                      ", " + a.remote_dir + "): their jobs would share one job dir",
                                  "give each -h its own host, or its own remote dir (host/dir)");
        }
}

// What can be checked before any remote action: distinct nodes, a usable master_addr.
// Whether every node is reached on a loopback address.
bool all_on_loopback(const std::vector<NodeSpec>& nodes) {
    for (const auto& n : nodes)
        if (!is_loopback_host(n.target.connect.host)) return false;
    return true;
}

void check_nodes(const NodesSpec& spec) {
    check_distinct(spec.nodes);
    if (!spec.master_addr.empty() && is_loopback_host(spec.master_addr) &&
        !all_on_loopback(spec.nodes))
        throw usage_error("nodes.master_addr " + spec.master_addr +
                              " is a loopback address, but the nodes are on different hosts",
                          "set it to rank 0's address on the network the nodes share");
}

// The node's first address as it reports it, and a free TCP port there (0: none found).
std::pair<std::string, int> ask_node(Remote& remote) {
    const RemoteOutput out = remote.run(
        "a=$(hostname -I 2>/dev/null | awk '{print $1}'); [ -n \"$a\" ] || a=$(ip -4 -o addr "
        "show scope global 2>/dev/null | awk '{split($4,x,\"/\"); print x[1]; exit}')\n"
        "p=$(python3 -c 'import socket;s=socket.socket();s.bind((\"\",0));"
        "print(s.getsockname()[1])' 2>/dev/null)\n"
        "echo \"addr=$a\"; echo \"port=$p\"\n");
    if (out.exit_status != 0)
        throw remote_failure(remote, "asking the node for its address", out.exit_status, out.err);
    std::string addr;
    int port = 0;
    std::istringstream lines(out.out);
    for (std::string line; std::getline(lines, line);) {
        if (line.rfind("addr=", 0) == 0) addr = trim(line.substr(5));
        if (line.rfind("port=", 0) == 0)
            port = static_cast<int>(parse_decimal(trim(line.substr(5)), 1, 65535).value_or(0));
    }
    return {addr, port};
}

// MASTER_ADDR and the node addresses: 127.0.0.1 when every node is on loopback, else what
// each node reports (a HostName is often an ssh proxy, so it is never used); MASTER_PORT:
// the setting, else a free port on rank 0.
Rendezvous find_rendezvous(const NodesSpec& spec, std::vector<std::unique_ptr<Connection>>& links) {
    const bool all_loopback = all_on_loopback(spec.nodes);
    Rendezvous r;
    for (size_t i = 0; i < links.size(); ++i) {
        // Rank 0 is asked in any case (its free port); the others only for their address.
        if (all_loopback && i > 0) {
            r.addrs.push_back("127.0.0.1");
            continue;
        }
        const auto [addr, port] = ask_node(links[i]->remote());
        if (i == 0) r.master_port = port;
        r.addrs.push_back(all_loopback ? "127.0.0.1" : addr);
        if (r.addrs.back().empty())
            throw Error(ErrorKind::remote,
                        "node " + std::to_string(i) + " (" + links[i]->name() +
                            ") reports no address of its own for the other nodes to reach",
                        "set nodes.master_addr, or check `hostname -I` there");
    }
    r.master_addr = spec.master_addr.empty() ? r.addrs.front() : spec.master_addr;
    if (spec.master_port > 0) r.master_port = spec.master_port;
    if (r.master_port <= 0) r.master_port = 29500;
    if (!all_loopback && is_loopback_host(r.master_addr))
        throw usage_error("MASTER_ADDR " + r.master_addr +
                              " is a loopback address, but the nodes are on different hosts",
                          "set nodes.master_addr to rank 0's address on the network the nodes "
                          "share");
    return r;
}

// Node `rank`'s local files go under <log dir>/nodes/<rank>; only rank 0 brings the archive
// and download_files home.
void place_node(TrainPlan& p, int rank, const Rendezvous& r) {
    const std::string sub = "/nodes/" + std::to_string(rank);
    const std::string console = fs::path(p.local_console).filename().string();
    p.local_logs += sub;
    p.local_console = p.local_logs + "/" + console;
    p.local_state_dir += sub;
    if (rank != 0) {
        p.local_archive.clear();
        p.download_files.clear();
        p.wrapper.download_regexes.clear();
        p.wrapper.download_pairs.clear();
    }
    for (auto& kv : node_environment(rank, r)) p.wrapper.fixed_environment.push_back(kv);
    p.wrapper.node_ifname = true;
    // With --no-wait nobody would release the barrier: the jobs start as soon as they are set
    // up, as before.
    p.wrapper.gang_barrier = !p.no_wait;
}

// The barrier after every node's setup (venv, startup_cmds): once the job of every node has
// created `ready`, `go` is created on every node. Runs over links of its own (the runs use
// theirs), every 0.5 s, until it is done, `done` is set or the gang stops (a node whose setup
// failed stops the others, waiting or not).
void keep_barrier(std::vector<std::unique_ptr<Connection>>& links,
                  const std::vector<NodeSpec>& nodes, Gang& gang, std::atomic<bool>& done) {
    std::vector<std::unique_ptr<Connection>> side;
    for (auto& l : links) side.push_back(l->open_side());
    std::vector<bool> released(nodes.size(), false);
    // `step` (JobDir::barrier_ready or open_barrier) on node i's side link.
    const auto on = [&](size_t i, bool (JobDir::*step)()) {
        if (!side[i]) return false;
        try {
            JobDir dir(side[i]->remote(), nodes[i].plan.remote_dir, nodes[i].plan.model);
            return (dir.*step)();
        } catch (const Error& e) {
            spdlog::debug("barrier of node {}: {}", i, e.what());
            try {
                if (is_link_loss(e)) side[i]->reconnect();  // else: the next round tries again
            } catch (const Error& again) {
                spdlog::debug("barrier of node {}: {}", i, again.what());
            }
            return false;
        }
    };
    while (!done && !gang.stopping()) {
        // Not before every node is set up (the in-process barrier): a `ready` left by an
        // attempt before is removed when its node takes the lock again.
        bool all_ready = gang.all_arrived();
        for (size_t i = 0; i < nodes.size() && all_ready; ++i)
            all_ready = released[i] || on(i, &JobDir::barrier_ready);
        if (all_ready) {
            bool all_released = true;
            for (size_t i = 0; i < nodes.size(); ++i) {
                released[i] = released[i] || on(i, &JobDir::open_barrier);
                all_released = all_released && released[i];
            }
            if (all_released) return;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
}

// Rank 0's logs also go into the log dir itself, as for a single node.
void copy_rank0_logs(const std::string& from, const std::string& to) {
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(from, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        if (!it->is_regular_file(ec) || it->is_symlink(ec)) continue;
        const fs::path rel = fs::relative(it->path(), from, ec);
        const fs::path dest = fs::path(to) / rel;
        fs::create_directories(dest.parent_path(), ec);
        fs::copy_file(it->path(), dest, fs::copy_options::overwrite_existing, ec);
    }
}

// The last `n` lines of a local file.
std::string tail_of_file(const std::string& path, size_t n) {
    std::ifstream in(path);
    std::vector<std::string> lines;
    for (std::string l; std::getline(in, l);) {
        lines.push_back(l);
        if (lines.size() > n) lines.erase(lines.begin());
    }
    return joined(lines, "\n");
}

}  // namespace

std::vector<std::pair<std::string, std::string>> node_environment(int rank, const Rendezvous& r) {
    const std::string n = std::to_string(r.addrs.size());
    const std::string k = std::to_string(rank);
    const std::string port = std::to_string(r.master_port);
    return {{"MLT_NODE_RANK", k},
            {"MLT_NUM_NODES", n},
            {"MLT_NODE_ADDRS", joined(r.addrs, " ")},
            {"NODE_RANK", k},
            {"NNODES", n},
            {"MASTER_ADDR", r.master_addr},
            {"MASTER_PORT", port},
            {"SKYPILOT_NODE_RANK", k},
            {"SKYPILOT_NODE_IPS", joined(r.addrs, "\n")},
            {"SKYPILOT_NUM_NODES", n},
            {"DSTACK_NODE_RANK", k},
            {"DSTACK_MASTER_NODE_IP", r.master_addr},
            {"DSTACK_NODES_NUM", n},
            {"DSTACK_NODES_IPS", joined(r.addrs, "\n")}};
}

bool is_loopback_host(const std::string& host) {
    return host == "localhost" || host.rfind("127.", 0) == 0 || host == "::1" || host == "[::1]";
}

int node_outcome(PrefixReporter& out, const std::function<int()>& body) {
    int code = exit_code::kOk;
    try {
        code = body();
    } catch (const Error& e) {
        out.flush();
        out.alert(std::string("error: ") + e.what() +
                  (e.hint().empty() ? "" : " (" + e.hint() + ")"));
        code = e.code();
    }
    out.flush();  // a last line without its line end
    return code;
}

namespace {

// How one pass of the gang's runs went.
struct GangPass {
    std::optional<Gang::Failure> failure;
    bool stopped = false;  // a node's job was stopped because another node failed
};

// One pass: a TrainRun per node in `include` (every node when empty), each in a thread, set
// up by `prepare`; with `prefail`, the gang has failed before it begins (a --resume that
// stops what runs on, to restart every node together).
GangPass run_gang_pass(NodesSpec& spec, std::vector<std::unique_ptr<Connection>>& links,
                       const std::string& run_id, const std::vector<bool>& include,
                       const std::function<void(TrainRun&)>& prepare,
                       const std::optional<Gang::Failure>& prefail) {
    const size_t n = spec.nodes.size();
    Gang gang(static_cast<int>(n));
    if (prefail) gang.fail(prefail->rank, prefail->host, prefail->exit_code, prefail->training);
    std::vector<std::unique_ptr<PrefixReporter>> reporters;
    std::vector<std::unique_ptr<ShellJob>> jobs;
    std::vector<std::unique_ptr<TrainRun>> runs;
    bool barrier = false;
    for (size_t i = 0; i < n; ++i) {
        const TrainPlan& p = spec.nodes[i].plan;
        reporters.push_back(
            std::make_unique<PrefixReporter>(reporter(), "[rank " + std::to_string(i) + "] "));
        jobs.push_back(std::make_unique<ShellJob>(*links[i], p.remote_dir, p.model, p.compression,
                                                  p.transfer_connections));
        runs.push_back(std::make_unique<TrainRun>(*links[i], *jobs[i], p, *reporters[i],
                                                  real_clock(), installed_run_observer()));
        runs.back()->join_gang(gang, static_cast<int>(i), run_id);
        if (!include.empty() && !include[i]) continue;
        if (prepare) prepare(*runs.back());
        barrier = barrier || (p.wrapper.gang_barrier && !prefail);
    }
    std::atomic<bool> runs_over{false};
    std::thread keeper;
    if (barrier)
        keeper = thread_without_signals([&] {
            try {
                keep_barrier(links, spec.nodes, gang, runs_over);
            } catch (const Error& e) {
                reporter().warning(std::string("the barrier of the nodes failed: ") + e.what());
            }
        });
    std::vector<std::thread> threads;
    for (size_t i = 0; i < n; ++i) {
        if (!include.empty() && !include[i]) continue;
        threads.emplace_back([&, i] {
            const int code = node_outcome(*reporters[i], [&] { return runs[i]->run(); });
            if (code != 0) gang.fail(static_cast<int>(i), runs[i]->host(), code);
        });
    }
    for (auto& t : threads) t.join();
    runs_over = true;
    if (keeper.joinable()) keeper.join();
    GangPass pass;
    pass.failure = prefail ? std::nullopt : gang.first_failure();
    for (const auto& r : runs) pass.stopped = pass.stopped || r->stopped_for_gang();
    return pass;
}

// The history's newest record of the run says how the gang ended, with every node's host.
void record_gang_end(const std::string& run_id, const std::vector<std::string>& nodes,
                     const std::string& status) {
    int skipped = 0;
    const auto runs = read_history(history_path(), &skipped);
    for (auto it = runs.rbegin(); it != runs.rend(); ++it) {
        const auto id = it->is_object() ? it->find("id") : it->end();
        if (id == it->end() || !id->is_string() || id->get<std::string>() != run_id) continue;
        nlohmann::json r = *it;
        r["status"] = status;
        // Every node's host, in rank order (each node's own records name only its own).
        r["hosts"] = nodes;
        r["nodes"] = nodes;
        append_history(r, reporter());
        return;
    }
}

// The exit code of the gang, with the line that says which node failed first.
int gang_exit(const NodesSpec& spec, const GangPass& pass, const std::string& run_id,
              const std::vector<std::unique_ptr<Connection>>& links) {
    std::vector<std::string> hosts;
    for (const auto& l : links) hosts.push_back(l->name());
    const auto& failure = pass.failure;
    if (!failure) {
        record_gang_end(run_id, hosts, "success");
        return exit_code::kOk;
    }
    const int code = failure->exit_code;
    if (code == exit_code::kInterrupted || code == exit_code::kTerminated ||
        code == exit_code::kHangup) {
        reporter().alert(
            "every node's job was stopped (a signal to mlt) and its results collected");
        record_gang_end(run_id, hosts, "stopped");
        return code;
    }
    const auto& failed = spec.nodes[static_cast<size_t>(failure->rank)].plan;
    reporter().alert("rank " + std::to_string(failure->rank) + " (" + failure->host +
                     ") failed first, with exit " + std::to_string(failure->exit_code) +
                     (pass.stopped ? "; the other nodes were stopped" : "") +
                     (failure->training ? std::string()
                                        : "; to start every node again together from the "
                                          "checkpoints that came home, run the same command "
                                          "with --resume") +
                     ". Its last lines:\n" + tail_of_file(failed.local_console, 20));
    record_gang_end(run_id, hosts, failure->training ? "failed" : "lost");
    // A training's own status follows the one rule (a 3 is not a job-state conflict).
    return failure->training ? training_exit_code(failure->exit_code) : failure->exit_code;
}

// What each node holds of the model now.
std::vector<std::optional<JobStatus>> survey(const NodesSpec& spec,
                                             std::vector<std::unique_ptr<Connection>>& links) {
    std::vector<std::optional<JobStatus>> jobs;
    for (size_t i = 0; i < links.size(); ++i) {
        const TrainPlan& p = spec.nodes[i].plan;
        auto found = JobDir(links[i]->remote(), p.remote_dir, p.model).query_jobs();
        jobs.push_back(found.empty() ? std::nullopt : std::optional<JobStatus>(found.front()));
    }
    return jobs;
}

// --resume of several nodes: the nodes that hold the run's lock settled (collected; stopped
// first when the gang restarts), then, when a rank was lost, every node again together.
int resume_gang(NodesSpec& spec, std::vector<std::unique_ptr<Connection>>& links) {
    const GangResume plan = plan_gang_resume(survey(spec, links), spec.nodes.front().plan.model);
    if (plan.adopt_all || std::count(plan.settle.begin(), plan.settle.end(), true) > 0) {
        NodesSpec settling = spec;
        std::optional<Gang::Failure> prefail;
        if (plan.restart) {
            const int rank = std::max(plan.lost_rank, 0);
            prefail = Gang::Failure{rank, links[static_cast<size_t>(rank)]->name(), 1, false};
            for (auto& n : settling.nodes) n.plan.shutdown_cmds.clear();  // the run goes on
        }
        const auto quiet = [&](TrainRun& r) {
            if (plan.restart) r.settle_for_restart();
        };
        const GangPass settled =
            run_gang_pass(settling, links, plan.run_id, plan.settle, quiet, prefail);
        if (!plan.restart) return gang_exit(spec, settled, plan.run_id, links);
    }
    reporter().alert("restarting every node of " + spec.nodes.front().plan.model + " (run " +
                     plan.run_id + ") together as attempt " + std::to_string(plan.attempt) + ": " +
                     plan.why + "; each pushes the checkpoints that came home");
    for (auto& n : spec.nodes) {
        n.plan.resume = false;
        n.plan.restore = true;  // the node's local log dir, into its remote log dir
        n.plan.clean = false;
    }
    const GangPass pass = run_gang_pass(spec, links, plan.run_id, {},
                                        [&](TrainRun& r) { r.continue_gang(plan.attempt); }, {});
    return gang_exit(spec, pass, plan.run_id, links);
}

}  // namespace

int run_train_nodes(NodesSpec spec) {
    check_nodes(spec);
    const TrainPlan& first = spec.nodes.front().plan;
    LocalModelLock local_lock(first.local_state_dir, first.model);
    const std::string log_dir = first.local_logs;
    // Connected one after another: a prompt (a password) is asked on one terminal at a time.
    std::vector<std::unique_ptr<Connection>> links;
    for (const auto& n : spec.nodes) {
        links.push_back(std::make_unique<SessionConnection>(n.target.connect));
        links.back()->remote();
    }
    const Rendezvous rendezvous = find_rendezvous(spec, links);
    reporter().notice("nodes: " + std::to_string(links.size()) + ", MASTER_ADDR " +
                      rendezvous.master_addr + ", MASTER_PORT " +
                      std::to_string(rendezvous.master_port));
    preflight(links, rendezvous);
    for (size_t i = 0; i < spec.nodes.size(); ++i) {
        TrainPlan& p = spec.nodes[i].plan;
        place_node(p, static_cast<int>(i), rendezvous);
        check_own_file(p.local_console);
    }
    const std::string run_id = new_run_id();  // one run on every node
    const int code = first.resume ? resume_gang(spec, links)
                                  : gang_exit(spec, run_gang_pass(spec, links, run_id, {}, {}, {}),
                                              run_id, links);
    copy_rank0_logs(spec.nodes.front().plan.local_logs, log_dir);
    return code;
}

}  // namespace mlt
