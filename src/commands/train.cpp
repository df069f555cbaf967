// `mlt ssh ... train`: the local checks and planning of every node, the connection made
// while the spec loads, then the run engine (TrainRun, or the gang of several nodes).
#include "mlt/commands/train.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <thread>
#include <tuple>
#include <utility>

#include "mlt/commands/dry_run.h"
#include "mlt/commands/model.h"
#include "mlt/commands/train_arguments.h"
#include "mlt/job/job.h"
#include "mlt/provider/run_rental.h"
#include "mlt/ssh/destination.h"
#include "mlt/ssh/session.h"
#include "mlt/train/local/local_state.h"
#include "mlt/train/nodes/nodes.h"
#include "mlt/train/recovery/failover.h"
#include "mlt/train/run/train_run.h"
#include "mlt/transfer/ranges.h"
#include "mlt/transfer/sync.h"
#include "mlt/transfer/transfer.h"
#include "mlt/transfer/workspace.h"
#include "mlt/util/console_filter.h"
#include "mlt/util/error.h"
#include "mlt/util/interrupt.h"
#include "mlt/util/paths.h"
#include "mlt/util/reporter.h"
#include "mlt/util/shell.h"
#include "mlt/util/text.h"
#include "run_context.h"
namespace fs = std::filesystem;

namespace mlt {

using namespace command_detail;

namespace {

// --restore needs something to push and a run that has not set its job up yet.
void check_restore(const TrainOptions& o, const TrainPlan& plan) {
    if (!o.restore) return;
    if (o.clean)
        throw usage_error(
            "--restore with --clean: --clean removes the local log dir that "
            "--restore would push",
            "leave one of them out");
    if (o.resume)
        throw usage_error("--restore with --resume: the run on the remote was set up already",
                          "leave --restore out, or start a new run with it");
    std::error_code ec;
    if (fs::is_empty(plan.local_logs, ec) || ec)
        throw usage_error("--restore: nothing to push: the local log dir " + plan.local_logs +
                              " is empty or missing",
                          "leave --restore out, or bring the logs home first ('download')");
}

// fallback_hosts, parsed (exit 2 for a bad entry).
std::vector<StandbyHost> standby_hosts_of(const RunContext& c) {
    std::vector<StandbyHost> hosts;
    for (size_t i = 0; i < c.settings.fallback_hosts.size(); ++i)
        hosts.push_back(parse_standby_host(c.settings.fallback_hosts[i],
                                           "fallback_hosts entry " + std::to_string(i + 1)));
    return hosts;
}

// A rented machine as a standby host: its own known_hosts, no host in its resume line.
StandbyHost standby_of(const Rental& r) {
    ConnectSpec aimed;
    RunRentals::aim(aimed, r);
    StandbyHost h;
    h.text = "instance " + r.id + " of " + r.provider;
    h.rented_id = r.id;
    h.spec.host = aimed.host;
    h.spec.user = aimed.user;
    h.spec.port = aimed.port;
    h.price_per_hour = r.price_per_hour;
    h.known_hosts = aimed.known_hosts_path;
    return h;
}

// The standby hosts of fallback_hosts and provision_cmd, checked before any remote action;
// none when neither is set, unless `always` (a gang's --resume may find a rank that moved).
std::optional<HostPoolSpec> host_pool_spec_for(const RunContext& c, const SshCommandLine& cli,
                                               const std::string& model_arg, bool test,
                                               int transfer_connections, bool always = false,
                                               RunRentals* rentals = nullptr) {
    HostPoolSpec spec;
    spec.transfer_connections = transfer_connections;
    spec.fallback_hosts = standby_hosts_of(c);
    spec.provision_cmd = c.settings.provision_cmd;
    if (!always && !rentals && spec.fallback_hosts.empty() && trim(spec.provision_cmd).empty())
        return std::nullopt;
    if (rentals) {
        spec.rent = [rentals](Reporter&) { return standby_of(rentals->rent_again()); };
        spec.ended = [rentals](const std::string& host) { return rentals->ended(host); };
        spec.give_back = [rentals](const StandbyHost& h) { rentals->give_back(h.rented_id); };
    }
    spec.base = c.target;
    spec.remote_dir = c.settings.remote_dir.empty() ? "." : c.settings.remote_dir;
    spec.model = c.model.name;
    spec.compression = c.settings.compression;
    for (const auto& bad : excluded_hosts_now())
        spec.excluded.emplace_back(bad.host, "marked bad until " +
                                                 iso_time(static_cast<std::time_t>(bad.until)) +
                                                 " by run " + bad.run_id + ": " + bad.why);
    spec.lines = [cli, model_arg, test](const std::string& host) {
        SshCommandLine other = cli;
        other.hosts.clear();
        if (!host.empty()) other.hosts.push_back(host);  // a rented one is found again
        other.port = 0;                                  // the standby host's own port
        return resume_and_stop_lines(other, model_arg, test);
    };
    return spec;
}

std::unique_ptr<HostPool> host_pool_for(const RunContext& c, const SshCommandLine& cli,
                                        const std::string& model_arg, bool test,
                                        ForwardingConnection& connection, int transfer_connections,
                                        RunRentals* rentals) {
    auto spec = host_pool_spec_for(c, cli, model_arg, test, transfer_connections, false, rentals);
    return spec ? std::make_unique<HostPool>(std::move(*spec), connection) : nullptr;
}

}  // namespace

namespace {

// A rented target's destination with no host yet: its key file read and checked as the
// run's connection checks it (no prompt, no network). Throws as resolve_destination does.
Destination key_checked(const ConnectSpec& rented) {
    ConnectSpec probe = rented;
    probe.host = "localhost";
    return resolve_destination(probe);
}

// Releases a run's rented machines however the command ends: an error before the run held a
// job (the machine just rented, nothing of the run on it) destroys them, one after keeps
// them running, and says so; a run that ended by itself releases them by its ending
// (end()). A resumed run's machines hold results: kept unless it ended.
class RentalRelease {
  public:
    RentalRelease(RunRentals* rentals, bool resumed)
        : rentals_(rentals), how_(resumed ? Release::keep : Release::destroy) {}
    RentalRelease(const RentalRelease&) = delete;
    RentalRelease& operator=(const RentalRelease&) = delete;
    ~RentalRelease() {
        if (!rentals_) return;
        try {
            rentals_->finish(rentals_->run_id(), how_);
        } catch (...) {  // the error that ends the command is the one to show
        }
    }
    void keep() { how_ = Release::keep; }
    void end(Release how) {
        if (!rentals_) return;
        RunRentals* const rentals = std::exchange(rentals_, nullptr);
        rentals->finish(rentals->run_id(), how);
    }

  private:
    RunRentals* rentals_;
    Release how_;
};

// --rent: the provider's machines, whatever hosts were given (a --resume finds the run's).
void rent_instead(RunContext& c) {
    if (!c.settings.provider.on())
        throw usage_error("--rent: no provider is set",
                          "set provider: {name: vast, ...} in the settings (docs/providers.md)");
    for (Target& t : c.targets) {
        t.connect.host = std::string(kRentedHost);
        t.connect.host_origin = "rented from " + c.settings.provider.name;
        t.connect.user.clear();  // -h's user and port are the given host's
        t.connect.port = 0;
    }
    c.target = c.targets.front();
}

// The lines of a run that --rent put on a rented machine although a host was given: its
// resume finds the machine again (--rent), its stop goes to the machine's address with the
// instance's own known_hosts.
void rented_lines(TrainPlan& plan, const ConnectSpec& aimed, const TrainOptions& o, bool test) {
    SshCommandLine here;
    here.hosts = {aimed.host + ":" + std::to_string(aimed.port)};
    const std::string& user = aimed.user.empty() ? aimed.fallback_user : aimed.user;
    if (!user.empty()) here.hosts.front() = user + "@" + here.hosts.front();
    here.ssh_options = {"UserKnownHostsFile=" + aimed.known_hosts_path};
    plan.stop_line = resume_and_stop_lines(here, o.model, test).second;
    // --rent before --resume: a --restore line is made of it by its last word.
    std::string resume = resume_and_stop_lines(SshCommandLine{}, o.model, test).first;
    const std::string last = " --resume";
    resume.insert(resume.size() - last.size(), " --rent");
    plan.resume_line = resume;
}

// A new run is refused while a machine rented for the model is not released: its run would
// be mixed up with this one.
void refuse_unreleased(const RunRentals& rentals, const std::string& model, const TrainOptions& o) {
    const auto left = rentals.unreleased();
    if (!left.empty() && !o.force)
        throw Error(ErrorKind::conflict,
                    rented_instance_name(left.back()) + ", rented for run " + left.back().run_id +
                        " of " + model + ", is not released",
                    "continue that run with --resume, or release it: mlt ssh release " +
                        left.back().id + " (--force rents another beside it)");
}

// A run on a rented machine: a --resume's is the model's machine still running; a new run's
// is rented once the key was checked and no unreleased machine of the model is left (its run
// would be mixed up with this one), under the run's id. The run is pointed at it. nullptr
// when the target is no rented one.
std::unique_ptr<RunRentals> rent_for(RunContext& c, TrainPlan& plan, const TrainOptions& o,
                                     bool test) {
    if (!is_rented(c.target.connect)) return nullptr;
    key_checked(c.target.connect);  // before anything bills
    auto rentals = std::make_unique<RunRentals>(c.settings.provider, plan.model, reporter());
    plan.rented = true;
    if (c.settings.provider.teardown != Teardown::keep)
        plan.unattended_release = c.settings.provider.name;
    Rental r;
    if (o.resume) {
        r = rentals->find();
    } else {
        refuse_unreleased(*rentals, plan.model, o);
        plan.run_id = new_run_id();
        r = rentals->rent(plan.run_id);
    }
    plan.rented_id = r.id;
    RunRentals::aim(c.target.connect, r);
    if (o.rent) rented_lines(plan, c.target.connect, o, test);
    c.targets = {c.target};
    if (!o.price) plan.price_per_hour = r.price_per_hour;
    return rentals;
}

// The machines of several nodes, as rent_for rents one: a --resume's are the run's by rank,
// a new run's are rented one per node (those rented before a failing one are destroyed).
std::unique_ptr<RunRentals> rent_nodes(const RunContext& c, std::vector<NodeSpec>& nodes,
                                       const TrainOptions& o) {
    if (!is_rented(nodes.front().target.connect)) return nullptr;
    key_checked(nodes.front().target.connect);  // before anything bills
    auto rentals = std::make_unique<RunRentals>(c.settings.provider, c.model.name, reporter());
    std::vector<Rental> found;
    if (o.resume) {
        found = rentals->find_nodes(static_cast<int>(nodes.size()));
    } else {
        refuse_unreleased(*rentals, c.model.name, o);
        const std::string run_id = new_run_id();
        try {
            for (size_t rank = 0; rank < nodes.size(); ++rank)
                found.push_back(rentals->rent(run_id, static_cast<int>(rank)));
        } catch (...) {
            InterruptDeferral whole;  // those rented go, whatever ended the renting
            try {
                rentals->finish(run_id, Release::destroy);
            } catch (...) {
            }
            throw;
        }
    }
    for (size_t rank = 0; rank < nodes.size(); ++rank) {
        RunRentals::aim(nodes[rank].target.connect, found[rank]);
        TrainPlan& plan = nodes[rank].plan;
        plan.rented = true;
        plan.rented_id = found[rank].id;
        if (!o.price) plan.price_per_hour = found[rank].price_per_hour;
    }
    return rentals;
}

// What becomes of a gang's rented machines once it returned `code`: as release_for, by the
// code alone (the gang says no more): a --no-wait, a lost link or a conflict leaves them
// running.
Release release_for_nodes(int code, const TrainOptions& o) {
    if (o.no_wait) return Release::keep;
    if (code == exit_code::kOk || code == exit_code::kLimit || code == exit_code::kRuled)
        return Release::teardown;
    // Left on a signal, a lost link, a conflict, a remote or local failure: the jobs may run
    // on, their results not home.
    if (code == exit_code::kRemote || code == exit_code::kUsage || code == exit_code::kConflict ||
        code == exit_code::kHostKey || code == exit_code::kInterrupted ||
        code == exit_code::kHangup || code == exit_code::kTerminated ||
        code == exit_code::kConnection)
        return Release::keep;
    return Release::stop;  // the training failed: the disks keep what it left
}

// What becomes of a rented machine once the run returned `code`: released by the settings'
// teardown when the results came home after an ending of its own, stopped when the training
// failed, kept running when the run goes on there (detached, link lost, results not home).
Release release_for(const TrainRun& run, int code, bool resumed) {
    if (!run.took_lock() && !resumed) return Release::destroy;  // nothing of it there
    if (!run.results_home()) return Release::keep;
    if (code == exit_code::kOk || code == exit_code::kLimit || code == exit_code::kRuled)
        return Release::teardown;
    return Release::stop;
}

// The plan of one node's run: everything checked locally before any remote action. `shown`
// (a dry run) gets the workspace and what the uploads leave out.
TrainPlan plan_node(const RunContext& c, const SshCommandLine& cli, const TrainOptions& o,
                    bool test, DryRunNode* shown = nullptr) {
    if (o.clean && !c.remote_log_dir.empty()) check_clean_target(c);
    TrainPlan plan = plan_for(c, cli, o.model, test);
    if (plan.spec_here) {
        std::string workspace = o.workspace.empty() ? std::string() : expand_user(o.workspace);
        if (workspace.empty() && !c.settings.workspace.empty())
            workspace = local_path_in(c.model.spec_dir, c.settings.workspace);
        if (o.clean) check_local_clean_target(c, workspace);
        // Local checks before any remote action.
        plan.uploads = plan_uploads(c, workspace, shown ? &shown->left_out : nullptr);
        if (shown) shown->workspace = workspace;
        plan.wrapper = wrapper_for(c, o);
    }
    check_restore(o, plan);
    plan.restore = o.restore;
    plan.failover = !o.no_failover;
    plan.clean = o.clean;
    plan.force = o.force;
    plan.resume = o.resume;
    plan.no_wait = o.no_wait;
    plan.raw_console = o.raw_console;
    if (o.reconnect_timeout) plan.reconnect_timeout_s = *o.reconnect_timeout;
    if (o.max_restarts) plan.max_restarts = *o.max_restarts;
    if (o.price) plan.price_per_hour = *o.price;
    // A machine to rent bills under provider.max_price: --max-cost counts with it until the
    // rental reads back its billed price.
    const ProviderSettings& provider = c.settings.provider;
    if (is_rented(c.target.connect) && !o.price && provider.max_price)
        plan.price_per_hour = *provider.max_price;
    plan.budget = {o.max_hours, o.max_cost};
    check_budget_flags(plan.price_per_hour, plan.budget);
    if (o.sync_every) plan.sync_every_s = *o.sync_every;
    if (o.connections) plan.transfer_connections = *o.connections;
    return plan;
}

// The context of node `t` of the run of `c`.
RunContext node_context(const RunContext& c, const Target& t) {
    RunContext node = c;
    node.target = t;
    node.remote_log_dir = node_log_dir(c.settings.remote_log_dir, c.model.name, t.remote_dir);
    return node;
}

// Several nodes: one plan per node, then the gang (nodes.cpp); rented machines are rented
// once every node's plan holds, and released by how the gang ended.
int train_nodes(const RunContext& c, const SshCommandLine& cli, const TrainOptions& o, bool test) {
    NodesSpec spec;
    spec.master_addr = c.settings.master_addr;
    spec.master_port = c.settings.master_port;
    for (const Target& t : c.targets)
        spec.nodes.push_back({t, plan_node(node_context(c, t), cli, o, test)});
    standby_hosts_of(c);  // checked before anything is rented
    const std::unique_ptr<RunRentals> rentals = rent_nodes(c, spec.nodes, o);
    const TrainPlan& first = spec.nodes.front().plan;
    if (first.failover)
        spec.standby = host_pool_spec_for(c, cli, o.model, test, first.transfer_connections, true,
                                          rentals.get());
    spec.max_restarts = first.max_restarts;
    spec.lines = [cli, model = o.model, test,
                  rented = rentals != nullptr](const std::vector<std::string>& hosts) {
        SshCommandLine moved = cli;
        moved.hosts = rented ? std::vector<std::string>{} : hosts;  // found again
        return resume_and_stop_lines(moved, model, test);
    };
    if (rentals) spec.run_id = rentals->run_id();
    RentalRelease release(rentals.get(), true);  // a gang's error: what it left is kept
    const int code = run_train_nodes(std::move(spec));
    release.end(release_for_nodes(code, o));
    return code;
}

// Where the run's connection would lead, as it would resolve it; a machine to rent is shown
// as what will be rented.
Destination destination_of(const ConnectSpec& connect, const ProviderSettings& provider,
                           bool resume) {
    if (!is_rented(connect)) return resolve_destination(connect);
    Destination d = key_checked(connect);
    d.known_hosts = "the instance's own, learned on first contact";
    d.checking = HostKeyChecking::accept_new;
    d.proxy.clear();
    if (resume) {
        d.display = "the machine of " + provider.name +
                    " that the model's run rented (found when the run starts); released when "
                    "the run is over";
        return d;
    }
    const std::string cap =
        provider.max_price ? "under " + usd_per_hour(*provider.max_price) : "no max_price";
    d.display = "a machine of " + provider.name + " rented when the run starts: offer '" +
                provider.offer + "', " + cap + ", image " + provider.image + ", " +
                std::to_string(provider.disk_gb) + " GB; released when the run is over (teardown " +
                (provider.teardown == Teardown::destroy ? "destroy"
                 : provider.teardown == Teardown::stop  ? "stop"
                                                        : "keep") +
                ")";
    return d;
}

// --dry-run: every node planned and checked as the run plans and checks it up to its first
// remote action (the local model lock aside: a dry run may look while a run goes on), then
// the plan printed. Nothing is connected to.
int dry_run(const RunContext& c, const SshCommandLine& cli, const TrainOptions& o, bool test) {
    DryRun run;
    for (const Target& t : c.targets) {
        DryRunNode node;
        node.plan = plan_node(node_context(c, t), cli, o, test, &node);
        check_own_file(node.plan.local_console);
        check_own_file(node.plan.local_state_dir + "/console_run");
        node.target = t;
        node.destination = destination_of(t.connect, c.settings.provider, o.resume);
        run.nodes.push_back(std::move(node));
    }
    // The run reads these when it may fail over (host_pool_for), or replace a lost node.
    if (!o.no_failover) {
        run.fallback_hosts = standby_hosts_of(c);
        run.provision_cmd = c.settings.provision_cmd;
    }
    run.master_addr = c.settings.master_addr;
    run.master_port = c.settings.master_port;
    std::fputs(render_dry_run(run).c_str(), stdout);
    std::fflush(stdout);
    return 0;
}

// A connection made while python3 loads the spec (MLTK: 0.1 s to seconds): the model's
// local lock taken and the key read first, as without it; nothing remote runs before the
// spec has loaded and the local checks have passed.
struct EarlyConnection {
    std::shared_ptr<SpecLoadAhead> spec;
    std::unique_ptr<LocalModelLock> lock;
    std::unique_ptr<SessionConnection> connection;
    ConnectSpec connect;

    // The connection for `target`: this one when it was made for the same destination
    // (always, as the spec sets none of it), else a new one.
    std::unique_ptr<SessionConnection> take_for(const ConnectSpec& target) {
        const auto key = [](const ConnectSpec& c) {
            return std::tie(c.host, c.user, c.port, c.identity_file, c.config_path, c.fallback_user,
                            c.fallback_port, c.fallback_identity_file);
        };
        if (connection && key(connect) == key(target)) return std::move(connection);
        return std::make_unique<SessionConnection>(target);
    }
};

// Nothing is logged or said while it lives: what is read and checked under it is read and
// checked again (and said) by the planning after the spec's load. No other thread runs yet.
class QuietLog : public Reporter {
  public:
    QuietLog() {
        logger_->set_level(spdlog::level::off);
        set_reporter(this);
    }
    ~QuietLog() override {
        set_reporter(&outer_);
        logger_->set_level(level_);
    }
    QuietLog(const QuietLog&) = delete;
    QuietLog& operator=(const QuietLog&) = delete;
    void emit(Event, std::string_view) override {}

  private:
    Reporter& outer_ = reporter();
    std::shared_ptr<spdlog::logger> logger_ = spdlog::default_logger();
    spdlog::level::level_enum level_ = logger_->level();
};

// Whether the run's local checks pass on `m` (the settings without Python): bad input makes
// no connection at all.
bool passes_local_checks(ModelSettings m, const SshCommandLine& cli, const TrainOptions& o,
                         bool test) {
    // The venv's packages are not checked: set, they keep the local MLTK's version unasked
    // here, where the spec's load about to start reports it (one python3 start, not two).
    if (!m.settings.venv_packages) m.settings.venv_packages.emplace();
    try {
        const RunContext c = context_of(std::move(m), cli, true);
        const TrainPlan plan = plan_node(c, cli, o, test);
        check_own_file(plan.local_console);
        check_own_file(plan.local_state_dir + "/console_run");
        standby_hosts_of(c);
        return true;
    } catch (const Error&) {
        return false;
    }
}

EarlyConnection connect_while_spec_loads(const SshCommandLine& cli, const TrainOptions& o,
                                         bool test) {
    EarlyConnection e;
    std::optional<ModelSettings> quick;
    {
        QuietLog quiet;
        quick = resolve_settings_quietly(cli, o.model, test, o.resume);
        // Several nodes connect in their own way (train_nodes).
        if (!quick || quick->targets.size() != 1 || is_rented(quick->targets.front().connect) ||
            o.rent || !passes_local_checks(*quick, cli, o, test))
            return e;
    }
    e.spec = start_spec_load_ahead(quick->model);
    if (!e.spec) return e;  // no Python runs: nothing to wait for
    const std::string& name = quick->model.name;
    e.lock = std::make_unique<LocalModelLock>(local_state_dir(name), name);
    e.connect = quick->targets.front().connect;
    e.connection = std::make_unique<SessionConnection>(e.connect);
    e.connection->open_ahead();
    return e;
}

}  // namespace

int run_train(const SshCommandLine& cli, const TrainOptions& o) {
    install_interrupt_handler();
    check_job_flags(o.resume, o.force);
    // MLTK's own suite passes --clean with --resume: accepted, but never silently dropped.
    if (o.resume && o.clean)
        reporter().warning("--clean is ignored with --resume: the run's logs and archive are kept");
    const bool test = wants_test_model(o.args);
    EarlyConnection early = o.dry_run ? EarlyConnection{} : connect_while_spec_loads(cli, o, test);
    // --resume acts on the run the remote holds: a bare NAME is enough unless that run must
    // upload again (TrainRun refuses it then).
    RunContext c = prepare(cli, o.model, test, o.resume, true, early.spec, true);
    if (o.rent) rent_instead(c);
    if (o.dry_run) return dry_run(c, cli, o, test);
    if (c.targets.size() > 1) return train_nodes(c, cli, o, test);
    TrainPlan plan = plan_node(c, cli, o, test);

    // Before any connection (or, made early, before anything remote): a second mlt on this
    // model's local files is refused, and the key is decrypted (or the password asked) once
    // for the whole run.
    std::unique_ptr<LocalModelLock> local_lock = std::move(early.lock);
    if (!local_lock)
        local_lock = std::make_unique<LocalModelLock>(plan.local_state_dir, plan.model);
    check_own_file(plan.local_console);
    check_own_file(plan.local_state_dir + "/console_run");
    standby_hosts_of(c);  // checked before anything is rented
    const std::unique_ptr<RunRentals> rentals = rent_for(c, plan, o, test);
    RentalRelease release(rentals.get(), o.resume);
    const std::unique_ptr<SessionConnection> owned_connection = early.take_for(c.target.connect);
    SessionConnection& first_connection = *owned_connection;
    ShellJob first_job(first_connection, plan.remote_dir, plan.model, plan.compression,
                       plan.transfer_connections);
    ForwardingConnection connection(first_connection);
    std::unique_ptr<HostPool> standby =
        plan.failover ? host_pool_for(c, cli, o.model, test, connection, plan.transfer_connections,
                                      rentals.get())
                      : nullptr;
    TrainRun run(connection, first_job, std::move(plan), reporter(), real_clock(),
                 installed_run_observer(), standby.get());
    int code = 0;
    try {
        code = run.run();  // it ends with its summary and the billing reminder
    } catch (...) {
        if (run.took_lock()) release.keep();
        throw;
    }
    release.end(release_for(run, code, o.resume));
    return code;
}

}  // namespace mlt
