// The run of several nodes from start to end: the first pass (or a --resume's), then, while a
// node's job or host was lost, every node again as the run's next attempt, a standby host
// taking the place of each lost host (docs/multi-node.md, "A node lost").
#include <spdlog/spdlog.h>

#include <algorithm>
#include <ctime>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gang_pass.h"
#include "mlt/train/local/history.h"
#include "mlt/train/local/local_state.h"
#include "mlt/train/nodes/gang_resume.h"
#include "mlt/train/recovery/failover.h"
#include "mlt/util/error.h"
#include "mlt/util/reporter.h"
#include "mlt/util/text.h"

namespace mlt {

namespace {

// The standby hosts of a gang: a host pool whose connection a replaced rank uses from then on.
class Standby {
  public:
    explicit Standby(const HostPoolSpec& spec) : pool_(spec, forward_) {}
    // The next standby host that answers and is none of `in_use` (a host a --resume already
    // took from the list, or a node's).
    std::optional<NextHost> next(Reporter& out, const std::vector<std::string>& in_use) {
        for (;;) {
            auto host = pool_.next(out);
            if (!host || std::find(in_use.begin(), in_use.end(), host->name) == in_use.end())
                return host;
            spdlog::debug("standby host {} is a node of the run already: skipped", host->name);
        }
    }
    bool has_more() const { return pool_.has_more(); }
    std::optional<NextHost> at(const StandbyHost& host, Reporter& out) {
        return pool_.at(host, out);
    }
    // The connection of the host `next` gave last (the pool owns it).
    Connection& taken() { return forward_.target(); }

  private:
    ForwardingConnection forward_;
    HostPool pool_;
};

// A multi-node run as it goes on: the nodes as given (a replacement moves one), the nodes
// placed for the current attempt, their links, and every attempt's hosts.
struct GangState {
    // Before the links: a replaced rank's link points into a connection the pool owns.
    std::unique_ptr<Standby> standby;  // also where a --resume finds a rank that moved
    bool standby_hosts = false;        // fallback_hosts or provision_cmd are set
    NodesSpec unplaced;
    NodesSpec spec;
    Links links;
    std::string run_id;
    std::string user_master_addr;  // nodes.master_addr as set (unplaced's follows rank 0)
    // Each attempt: its number and its hosts, by rank (an earlier command's, from the history).
    std::vector<std::pair<int, std::vector<std::string>>> attempts;
    std::vector<std::string> known_hosts;  // the hosts the history's record of the run names
    int restarts_in_place = 0;
    // Why the next take_up restarts every node whatever they hold (a watch.on_failure
    // `restart` of a rank's failed training); empty: only a loss restarts them.
    std::string ruled_restart;
    std::vector<std::string> came_from;  // by rank: the lost host a replacement left, this pass

    std::vector<std::string> hosts() const {
        std::vector<std::string> names;
        for (const auto& l : links) names.push_back(l->name());
        return names;
    }
    // Each node as -h takes it (user@host:port/remote_dir), by rank.
    std::vector<std::string> node_specs() const {
        std::vector<std::string> specs;
        for (size_t i = 0; i < links.size(); ++i)
            specs.push_back(links[i]->name() + "/" + unplaced.nodes[i].plan.remote_dir);
        return specs;
    }
    void begin_attempt(int number) { attempts.emplace_back(number, hosts()); }
    // Every host rank `rank` was on in this command's attempts.
    std::vector<std::string> hosts_of(size_t rank) const {
        std::vector<std::string> out;
        for (const auto& a : attempts)
            if (rank < a.second.size() &&
                std::find(out.begin(), out.end(), a.second[rank]) == out.end())
                out.push_back(a.second[rank]);
        return out;
    }
    // Whether a host was replaced in this command.
    bool moved() const {
        for (const auto& a : attempts)
            if (a.second != attempts.front().second) return true;
        return false;
    }
    Gang::RestartRule rule() const {
        return {standby_hosts && standby->has_more(), restarts_in_place < unplaced.max_restarts,
                restarts_in_place < std::max(unplaced.max_restarts, 1)};
    }
};

// Each host once, in the order the attempts took them.
std::vector<std::string> every_host(const GangState& g) {
    std::vector<std::string> all = g.known_hosts;
    for (const auto& a : g.attempts)
        for (const auto& h : a.second)
            if (std::find(all.begin(), all.end(), h) == all.end()) all.push_back(h);
    return all;
}

// A record of the run with `status`, every node's host of every attempt and the nodes now
// (node_specs: where a --resume finds a rank that moved), after the newest one of the run.
void record_gang(const GangState& g, const std::string& status) {
    int skipped = 0;
    const auto runs = read_history(history_path(), &skipped);
    for (auto it = runs.rbegin(); it != runs.rend(); ++it) {
        const auto id = it->is_object() ? it->find("id") : it->end();
        if (id == it->end() || !id->is_string() || id->get<std::string>() != g.run_id) continue;
        nlohmann::json r = *it;
        r["status"] = status;
        // Each node's own records name only its own host.
        r["hosts"] = every_host(g);
        r["nodes"] = g.hosts();  // the last attempt's, in rank order
        r["node_specs"] = g.node_specs();
        // The hosts any node left by a watch.on_failure rule (each node's records have its own).
        std::vector<ExcludedHost> marks;
        for (auto& mark : excluded_hosts(runs, static_cast<double>(std::time(nullptr))))
            if (mark.run_id == g.run_id) marks.push_back(std::move(mark));
        if (!marks.empty()) r["excluded_hosts"] = excluded_json(marks);
        if (g.moved()) {
            nlohmann::json attempts = nlohmann::json::array();
            for (const auto& [number, hosts] : g.attempts)
                attempts.push_back({{"attempt", number}, {"nodes", hosts}});
            r["node_attempts"] = attempts;
        }
        append_history(r, reporter());
        return;
    }
}

// The nodes of every attempt, when a host was replaced: one line.
void say_attempts(const GangState& g) {
    if (g.moved()) reporter().notice(format_node_attempts(g.attempts));
}

// The -h options of the current nodes, for a --resume line after a replacement.
std::string host_options(const GangState& g) {
    std::string out;
    for (const auto& spec : g.node_specs()) out += (out.empty() ? "-h " : " -h ") + spec;
    return out;
}

// The exit code of the gang, with the line that says which node failed first.
int gang_exit(const GangState& g, const GangPass& pass) {
    say_attempts(g);
    // A lost rank is the root cause, not a training that failed at its next collective
    // because of it (gloo's "Connection closed by peer").
    std::optional<Gang::Failure> failure = pass.failure;
    for (size_t r = 0; failure && failure->training && r < pass.causes.size(); ++r)
        if (pass.causes[r] == Gang::Cause::host_lost || pass.causes[r] == Gang::Cause::job_lost) {
            const int code = r < pass.codes.size() && pass.codes[r] != 0 ? pass.codes[r] : 1;
            failure = Gang::Failure{static_cast<int>(r), g.links[r]->name(), code, false};
        }
    if (!failure) {
        record_gang(g, "success");
        return exit_code::kOk;
    }
    const int code = failure->exit_code;
    if (code == exit_code::kInterrupted || code == exit_code::kTerminated ||
        code == exit_code::kHangup) {
        if (pass.left) {
            // SIGTERM, SIGHUP or Ctrl+C twice: each node's line above says what it left.
            reporter().alert(
                "mlt left the nodes as they were (a signal to mlt); continue with "
                "the same command and --resume");
            record_gang(g, "left");
        } else {
            reporter().alert(
                "every node's job was stopped (a signal to mlt) and its results collected");
            record_gang(g, "stopped");
        }
        return code;
    }
    const auto& failed = g.spec.nodes[static_cast<size_t>(failure->rank)].plan;
    reporter().alert(
        "rank " + std::to_string(failure->rank) + " (" + failure->host +
        ") failed first, with exit " + std::to_string(failure->exit_code) +
        (pass.stopped ? "; the other nodes were stopped" : "") +
        (failure->training
             ? std::string()
             : "; to start every node again together from the checkpoints that "
               "came home, run the same command with --resume" +
                   (g.moved() ? " and the hosts of the last attempt (" + host_options(g) + ")"
                              : std::string())) +
        ". Its last lines:\n" + tail_of_file(failed.local_console, 20));
    record_gang(g, failure->training ? "failed" : "lost");
    // A training's own status follows the one rule (a 3 is not a job-state conflict).
    return failure->training ? training_exit_code(failure->exit_code) : failure->exit_code;
}

// What an earlier command of this run recorded (a --resume): every host, each attempt's nodes.
void seed_from_history(GangState& g) {
    int skipped = 0;
    const auto runs = read_history(history_path(), &skipped);
    for (auto it = runs.rbegin(); it != runs.rend(); ++it) {
        if (!it->is_object() || it->value("id", nlohmann::json()) != g.run_id ||
            !it->contains("node_specs"))
            continue;
        g.known_hosts = strings_in(it->value("hosts", nlohmann::json()));
        g.attempts = node_attempts_of({*it}, g.run_id);
        return;
    }
}

// What each node holds of the model now.
std::vector<std::optional<JobStatus>> survey(const NodesSpec& spec, Links& links) {
    std::vector<std::optional<JobStatus>> jobs;
    for (size_t i = 0; i < links.size(); ++i) {
        const TrainPlan& p = spec.nodes[i].plan;
        auto found = JobDir(links[i]->remote(), p.remote_dir, p.model).query_jobs();
        jobs.push_back(found.empty() ? std::nullopt : std::optional<JobStatus>(found.front()));
    }
    return jobs;
}

// What every node holds, taken up: the nodes that hold the run's lock settled (collected;
// stopped first when the gang restarts), then, when a rank was lost, every node again
// together as the next attempt (a --resume, and each restart after a loss).
GangPass take_up(GangState& g) {
    NodesSpec& spec = g.spec;
    const GangResume plan = plan_gang_resume(survey(spec, g.links), spec.nodes.front().plan.model,
                                             g.run_id, std::exchange(g.ruled_restart, {}));
    g.run_id = plan.run_id;
    if (g.attempts.empty()) {
        seed_from_history(g);
        // What this command found, unless an earlier command recorded it.
        if (g.attempts.empty() || g.attempts.back().second != g.hosts())
            g.begin_attempt(plan.attempt - 1);
    }
    if (plan.adopt_all || std::count(plan.settle.begin(), plan.settle.end(), true) > 0) {
        NodesSpec settling = spec;
        std::optional<Gang::Failure> prefail;
        if (plan.restart) {
            const int rank = std::max(plan.lost_rank, 0);
            prefail = Gang::Failure{rank, g.links[static_cast<size_t>(rank)]->name(), 1, false};
            for (auto& n : settling.nodes) n.plan.shutdown_cmds.clear();  // the run goes on
        }
        const auto quiet = [&](TrainRun& r) {
            if (plan.restart) r.settle_for_restart();
        };
        GangPass settled =
            run_gang_pass(settling, g.links, plan.run_id, plan.settle, quiet, prefail, g.rule());
        if (!plan.restart) return settled;
    }
    reporter().alert("restarting every node of " + spec.nodes.front().plan.model + " (run " +
                     plan.run_id + ") together as attempt " + std::to_string(plan.attempt) + ": " +
                     plan.why + "; each pushes the checkpoints that came home");
    for (auto& n : spec.nodes) {
        n.plan.resume = false;
        n.plan.restore = true;  // the node's local log dir, into its remote log dir
        n.plan.clean = false;
    }
    g.begin_attempt(plan.attempt);
    g.came_from.resize(g.links.size());
    const std::vector<std::string> came_from = std::exchange(g.came_from, {});
    return run_gang_pass(
        spec, g.links, plan.run_id, {},
        [&](TrainRun& r) {
            const auto rank = static_cast<size_t>(r.gang_rank());
            r.continue_gang(plan.attempt, came_from[rank], g.hosts_of(rank));
        },
        {}, g.rule());
}

// MASTER_ADDR when rank 0 moves to `next`: its own master_addr=, else the address mlt reached
// it at where nodes.master_addr was the lost rank 0's; a master_addr set to anything else (an
// overlay address) cannot follow: refused. Empty setting: found on the new rank 0 as before.
bool master_addr_follows(GangState& g, const NextHost& next) {
    std::string& addr = g.unplaced.master_addr;
    if (!next.master_addr.empty()) {
        addr = next.master_addr;
        return true;
    }
    if (g.user_master_addr.empty()) {
        addr.clear();  // found on the new rank 0
        return true;
    }
    if (addr == g.unplaced.nodes.front().target.connect.host) {
        addr = next.target.connect.host;
        return true;
    }
    reporter().alert("rank 0 cannot move to " + next.name + ": nodes.master_addr " + addr +
                     " is an address of the lost rank 0 that mlt cannot carry over (give the "
                     "standby host its own: master_addr=ADDR after its host spec)");
    return false;
}

// A standby host for lost rank `rank`: the rank's plan and link moved there. False (said)
// when none is left or rank 0's address cannot follow.
bool replace(GangState& g, int rank) {
    const auto r = static_cast<size_t>(rank);
    const std::string left = g.links[r]->name();
    reporter().alert("rank " + std::to_string(rank) + ": " + left +
                     " is lost (not back within reconnect_timeout, or its dir is gone); looking "
                     "for a standby host");
    const std::optional<NextHost> next = g.standby->next(reporter(), g.hosts());
    if (!next) {
        reporter().alert("rank " + std::to_string(rank) +
                         ": no standby host left (fallback_hosts, provision_cmd); the gang stops");
        return false;
    }
    if (rank == 0 && !master_addr_follows(g, *next)) return false;
    NodeSpec& node = g.unplaced.nodes[r];
    point_plan_at(node.plan, *next);
    node.target = next->target;
    g.links[r] = std::make_unique<ForwardingConnection>(g.standby->taken());
    g.came_from.resize(g.links.size());
    g.came_from[r] = left;
    check_nodes(g.unplaced);
    // Every node's resume and stop lines name the nodes as they are now.
    if (g.unplaced.lines) {
        const auto [resume, stop] = g.unplaced.lines(g.node_specs());
        for (auto& n : g.unplaced.nodes) {
            n.plan.resume_line = resume;
            n.plan.stop_line = stop;
        }
    }
    reporter().alert("rank " + std::to_string(rank) + ": " + left + " left, " + next->name +
                     " takes its place");
    // Before anything is done there: a --resume after a crash from here on finds the rank there.
    record_gang(g, "moving");
    return true;
}

// The nodes kept their shutdown_cmds for a restart that cannot be made: said, not run (their
// runs are over).
void warn_held_shutdowns(const GangPass& pass) {
    if (pass.held)
        reporter().warning(
            "the other nodes' shutdown_cmds did not run: they waited for the gang's restart, "
            "which cannot be made; stop or destroy those machines yourself, or continue with "
            "the --resume command below");
}

// One restart: standby hosts for the lost hosts, the rendezvous again, every node together.
// nullopt (said) when a lost host finds no standby.
std::optional<GangPass> restart_once(GangState& g, const std::vector<int>& hosts_lost) {
    for (const int rank : hosts_lost)
        if (!replace(g, rank)) return std::nullopt;
    meet_nodes(g.unplaced, g.spec, g.links);
    return take_up(g);
}

// While a pass ends with a node's job or host lost, and the rules allow it: standby hosts
// for the lost hosts, the rendezvous found again, every node again together.
// The causes of a pass's failures, for -v.
std::string causes_text(const std::vector<Gang::Cause>& causes) {
    static const char* const kNames[] = {"none",      "training", "job lost",
                                         "host lost", "other",    "restart rule"};
    std::string out;
    for (size_t r = 0; r < causes.size(); ++r)
        out += (r ? ", " : "") + std::string("rank ") + std::to_string(r) + " " +
               kNames[static_cast<int>(causes[r])];
    return out;
}

GangPass restart_while_lost(GangState& g, GangPass pass) {
    spdlog::debug("the gang's pass ended: {}", causes_text(pass.causes));
    while (pass.failure && Gang::restarts(pass.causes, g.rule())) {
        std::vector<int> hosts_lost;
        for (size_t r = 0; r < pass.causes.size(); ++r)
            if (pass.causes[r] == Gang::Cause::host_lost) hosts_lost.push_back(static_cast<int>(r));
        // Every host lost at once is more likely this machine's own link: no host is replaced
        // (or rented) while the jobs may train on.
        if (hosts_lost.size() > 1 && hosts_lost.size() == pass.causes.size()) {
            reporter().alert(
                "every node was lost at once: more likely this machine's link than "
                "every host; no standby host is taken");
            warn_held_shutdowns(pass);
            return pass;
        }
        // The budget first: no standby host is taken (or rented), no attempt started, past it.
        if (!pass.limit.empty()) {
            reporter().alert("the gang is not restarted: " + pass.limit + " is reached");
            warn_held_shutdowns(pass);
            return pass;
        }
        if (hosts_lost.empty()) ++g.restarts_in_place;  // max_restarts counts these
        for (size_t r = 0; r < pass.causes.size() && g.ruled_restart.empty(); ++r)
            if (pass.causes[r] == Gang::Cause::ruled_restart)
                g.ruled_restart = "rank " + std::to_string(r) +
                                  "'s training failed, and a watch.on_failure rule restarts it";
        std::optional<GangPass> next;
        try {
            next = restart_once(g, hosts_lost);
        } catch (const Error& e) {
            if (is_signal(e.kind())) throw;
            reporter().alert(std::string("the gang's restart failed: ") + e.what() +
                             (e.hint().empty() ? "" : " (" + e.hint() + ")"));
        }
        if (!next) {
            warn_held_shutdowns(pass);
            return pass;
        }
        pass = std::move(*next);
        spdlog::debug("the gang's pass ended: {}", causes_text(pass.causes));
    }
    const auto count = [&](Gang::Cause c) {
        return std::count(pass.causes.begin(), pass.causes.end(), c);
    };
    if (pass.failure &&
        ((!g.rule().jobs && g.unplaced.max_restarts > 0 && count(Gang::Cause::job_lost) > 0) ||
         (!g.rule().ruled && count(Gang::Cause::ruled_restart) > 0)))
        reporter().alert("not restarted: the " +
                         std::to_string(std::max(g.unplaced.max_restarts, 1)) +
                         " restart(s) of max_restarts are used up");
    return pass;
}

// Where rank `rank` of the newest multi-node run of `model` went after `host` (its host on the
// command line) was lost: the node spec its newest record names, when that is another host.
std::optional<std::string> rank_went_on(const std::vector<nlohmann::json>& runs,
                                        const std::string& model, size_t rank,
                                        const std::string& host) {
    for (auto it = runs.rbegin(); it != runs.rend(); ++it) {
        if (!it->is_object() || it->value("model", nlohmann::json()) != model) continue;
        const auto specs = it->find("node_specs");
        if (specs == it->end()) continue;
        if (!specs->is_array() || rank >= specs->size() || !(*specs)[rank].is_string()) break;
        const std::string there = (*specs)[rank].get<std::string>();
        const auto hosts = strings_in(it->value("hosts", nlohmann::json()));
        const bool left = std::find(hosts.begin(), hosts.end(), host) != hosts.end();
        if (left && there.rfind(host + "/", 0) != 0) return there;
        break;
    }
    return std::nullopt;
}

// Connects to every node, one after another (a prompt, a password, is asked on one terminal
// at a time). A --resume goes where the history says a rank went (a replacement this machine
// made), as a single node's run does after a failover.
void connect_nodes(GangState& g) {
    int skipped = 0;
    const bool resume = g.unplaced.nodes.front().plan.resume && g.standby;
    const auto runs =
        resume ? read_history(history_path(), &skipped) : std::vector<nlohmann::json>{};
    for (size_t i = 0; i < g.unplaced.nodes.size(); ++i) {
        NodeSpec& node = g.unplaced.nodes[i];
        auto link = std::make_unique<SessionConnection>(node.target.connect);
        // Where the history says the rank went, whether or not its lost host answers again
        // (it holds an attempt the run left behind).
        const auto there =
            resume ? rank_went_on(runs, node.plan.model, i, link->name()) : std::nullopt;
        if (!there) {
            link->remote();
            g.links.push_back(std::move(link));
        } else {
            reporter().alert("rank " + std::to_string(i) + " of the run went on on " + *there +
                             " after " + link->name() + " was lost: resuming it there");
            const auto next =
                g.standby->at(parse_standby_host(*there, "the local history"), reporter());
            if (!next)
                throw Error(ErrorKind::connect,
                            "rank " + std::to_string(i) + "'s host " + *there +
                                " cannot be reached to resume the run",
                            "see the line above; run the same command again once it answers");
            point_plan_at(node.plan, *next);
            node.target = next->target;
            g.links.push_back(std::make_unique<ForwardingConnection>(g.standby->taken()));
        }
    }
}

}  // namespace

int run_train_nodes(NodesSpec spec) {
    check_nodes(spec);
    const std::string model = spec.nodes.front().plan.model;
    const std::string log_dir = spec.nodes.front().plan.local_logs;
    LocalModelLock local_lock(spec.nodes.front().plan.local_state_dir, model);
    GangState g;
    g.standby_hosts =
        spec.standby && (!spec.standby->fallback_hosts.empty() ||
                         !trim(spec.standby->provision_cmd).empty() || spec.standby->rent);
    if (spec.standby) g.standby = std::make_unique<Standby>(*spec.standby);
    g.unplaced = std::move(spec);
    g.user_master_addr = g.unplaced.master_addr;
    connect_nodes(g);
    meet_nodes(g.unplaced, g.spec, g.links);
    GangPass pass;
    if (g.unplaced.nodes.front().plan.resume) {
        pass = take_up(g);
        spdlog::debug("the gang's pass ended: {}", causes_text(pass.causes));
    } else {
        // One run on every node.
        g.run_id = g.unplaced.run_id.empty() ? new_run_id() : g.unplaced.run_id;
        g.begin_attempt(1);
        pass = run_gang_pass(g.spec, g.links, g.run_id, {}, {}, {}, g.rule());
    }
    pass = restart_while_lost(g, std::move(pass));
    const int code = gang_exit(g, pass);
    copy_rank0_logs(g.spec.nodes.front().plan.local_logs, log_dir);
    return code;
}

}  // namespace mlt
