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

#include "gang_pass.h"
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

}  // namespace

void check_nodes(const NodesSpec& spec) {
    check_distinct(spec.nodes);
    if (!spec.master_addr.empty() && is_loopback_host(spec.master_addr) &&
        !all_on_loopback(spec.nodes))
        throw usage_error("nodes.master_addr " + spec.master_addr +
                              " is a loopback address, but the nodes are on different hosts",
                          "set it to rank 0's address on the network the nodes share");
}

namespace {

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
// and download_files home, and pulls its log dir while it trains.
void place_node(TrainPlan& p, int rank, const Rendezvous& r) {
    const std::string sub = "/nodes/" + std::to_string(rank);
    const std::string console = fs::path(p.local_console).filename().string();
    p.local_logs += sub;
    p.local_console = p.local_logs + "/" + console;
    p.local_state_dir += sub;
    if (rank != 0) {
        // --sync-every brings rank 0's log dir home, where a DDP training saves; the other
        // ranks' come home at the end.
        p.sync_every_s = 0;
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

}  // namespace

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

std::string tail_of_file(const std::string& path, size_t n) {
    std::ifstream in(path);
    std::vector<std::string> lines;
    for (std::string l; std::getline(in, l);) {
        lines.push_back(l);
        if (lines.size() > n) lines.erase(lines.begin());
    }
    return joined(lines, "\n");
}

Rendezvous meet_nodes(const NodesSpec& unplaced, NodesSpec& placed, Links& links) {
    const Rendezvous rendezvous = find_rendezvous(unplaced, links);
    reporter().notice("nodes: " + std::to_string(links.size()) + ", MASTER_ADDR " +
                      rendezvous.master_addr + ", MASTER_PORT " +
                      std::to_string(rendezvous.master_port));
    preflight(links, rendezvous);
    placed = unplaced;
    for (size_t i = 0; i < placed.nodes.size(); ++i) {
        TrainPlan& p = placed.nodes[i].plan;
        place_node(p, static_cast<int>(i), rendezvous);
        check_own_file(p.local_console);
    }
    return rendezvous;
}

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

int node_outcome(PrefixReporter& out, const std::function<int()>& body,
                 std::optional<ErrorKind>* kind) {
    int code = exit_code::kOk;
    try {
        code = body();
    } catch (const Error& e) {
        if (kind) *kind = e.kind();
        out.flush();
        out.alert(std::string("error: ") + e.what() +
                  (e.hint().empty() ? "" : " (" + e.hint() + ")"));
        code = e.code();
    }
    out.flush();  // a last line without its line end
    return code;
}

namespace {

// What a node's run that ended with an error of `kind` (none: its exit code) means to the
// gang: a host that did not come back (or lost its dir) is lost; nothing else is.
Gang::Cause cause_of(const std::optional<ErrorKind>& kind) {
    if (!kind) return Gang::Cause::other;
    return is_link_loss(*kind) || *kind == ErrorKind::gone ? Gang::Cause::host_lost
                                                           : Gang::Cause::other;
}

}  // namespace

GangPass run_gang_pass(NodesSpec& spec, Links& links, const std::string& run_id,
                       const std::vector<bool>& include,
                       const std::function<void(TrainRun&)>& prepare,
                       const std::optional<Gang::Failure>& prefail, Gang::RestartRule rule) {
    const size_t n = spec.nodes.size();
    Gang gang(static_cast<int>(n));
    if (prefail) gang.fail(prefail->rank, prefail->host, prefail->exit_code, prefail->training);
    gang.set_restart_rule(rule);
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
    std::vector<int> codes(n, 0);
    for (size_t i = 0; i < n; ++i) {
        if (!include.empty() && !include[i]) {
            gang.over(static_cast<int>(i));  // no run here: nobody waits for it
            continue;
        }
        threads.emplace_back([&, i] {
            std::optional<ErrorKind> kind;
            const int code = node_outcome(
                *reporters[i], [&] { return runs[i]->run(); }, &kind);
            codes[i] = code;
            // A node the gang stopped ends with the stop's status: no cause of its own.
            if (code != 0 && (kind || !runs[i]->stopped_for_gang()))
                gang.fail(static_cast<int>(i), runs[i]->host(), code, cause_of(kind));
            gang.over(static_cast<int>(i));
        });
    }
    for (auto& t : threads) t.join();
    runs_over = true;
    if (keeper.joinable()) keeper.join();
    GangPass pass;
    pass.failure = prefail ? std::nullopt : gang.first_failure();
    if (!prefail) pass.causes = gang.causes();
    pass.held = gang.held_any();
    pass.codes = codes;
    for (const auto& r : runs) {
        pass.stopped = pass.stopped || r->stopped_for_gang();
        pass.left = pass.left || r->left_on_signal();
        if (pass.limit.empty()) pass.limit = r->limit_now();
    }
    return pass;
}

}  // namespace mlt
