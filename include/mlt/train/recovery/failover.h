#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mlt/config/host_spec.h"
#include "mlt/ssh/connection.h"
#include "mlt/train/run/remote_job.h"
#include "mlt/train/run/target.h"
#include "mlt/train/run/train_plan.h"
#include "mlt/util/reporter.h"

namespace mlt {

// A host a run may continue on, as a `fallback_hosts` entry or the last line of
// `provision_cmd` names it: a host spec as -h takes it, optionally followed by its own
// price and (for a node of several) its address for MASTER_ADDR, e.g.
// "root@1.2.3.4:4022/work price_per_hour=0.35 master_addr=10.0.0.7".
struct StandbyHost {
    std::string text;  // the host spec as written (for messages and the resume line)
    HostSpec spec;
    std::optional<double> price_per_hour;
    std::string master_addr;  // empty: none given
    // A machine the settings' provider rented: its host key is learned into this file of its
    // own (empty: the run's known_hosts), and its resume line names no host.
    std::string known_hosts;
    std::string rented_id;  // the instance, when rented
};

// Parses one standby host; `where` names its origin for the error ("fallback_hosts entry 2",
// "provision_cmd's output"). Throws mlt::Error (usage, exit 2): a bad host spec, a word that
// is neither price_per_hour=USD nor master_addr=ADDR (or one given twice), a price that is no
// number >= 0, an empty address.
StandbyHost parse_standby_host(std::string_view text, const std::string& where);

// The host a run continues on after a failover.
struct NextHost {
    std::string name;        // user@host:port, for messages
    std::string remote_dir;  // its remote working dir
    std::optional<double> price_per_hour;
    std::string resume_line;  // `mlt ssh -h THIS ... train MODEL --resume`
    std::string stop_line;
    // The run's job on that host (owned by the Failover): the run talks to it from now on.
    RemoteJob* job = nullptr;
    Target target;            // how it was reached
    std::string master_addr;  // its own address for MASTER_ADDR, when its spec gave one
    std::string rented_id;    // the instance the settings' provider rented; empty: none
};

// Where a run goes when its host is lost for good (it did not come back within
// reconnect_timeout). TrainRun asks it for the next host; the train command owns the hosts.
class Failover {
  public:
    virtual ~Failover() = default;
    // Points the run's Connection at the next standby host that answers, and says which
    // (with the run's job there); nullopt when none is left. Says each host that does not answer in
    // one line through `reporter`. Throws mlt::Error (interrupted) when a signal arrives.
    virtual std::optional<NextHost> next(Reporter& reporter) = 0;
    // Points them at `host` (a host the run went to before, as its history names it),
    // whether or not it is one of the standby hosts; nullopt (said through `reporter`) when
    // it does not answer. None by default.
    virtual std::optional<NextHost> at(const StandbyHost& host, Reporter& reporter) {
        (void)host, (void)reporter;
        return std::nullopt;
    }
    // Whether a standby host may be left to try.
    virtual bool has_more() const { return true; }
    // The run does not take `host` (user@host:port) again: next() skips it (watch.on_failure
    // exclude_host).
    virtual void exclude(const std::string& host) { (void)host; }
    // Why the machine at `host` (user@host:port) is known to be gone for good (its
    // marketplace says it exited, went offline or is destroyed): the wait for its link ends
    // at once. nullopt: not known (the default).
    virtual std::optional<std::string> ended(const std::string& host) {
        (void)host;
        return std::nullopt;
    }
};

// `plan` moved to `next`: its remote dir (and the upload bases under it), its resume and stop
// lines, its price when it names one.
void point_plan_at(TrainPlan& plan, const NextHost& next);

// A Connection that passes everything on to another one, which can be replaced: the run
// keeps talking to this while a failover moves it to another host.
class ForwardingConnection : public Connection {
  public:
    explicit ForwardingConnection(Connection& target) : target_(&target) {}
    // Points nowhere until point_at().
    ForwardingConnection() = default;
    void point_at(Connection& target) { target_ = &target; }
    Connection& target() { return *target_; }
    Connection* pointed() const { return target_; }
    const std::string& name() const override { return target_->name(); }
    Remote& remote() override { return target_->remote(); }
    void reconnect() override { target_->reconnect(); }
    std::unique_ptr<Connection> open_side() override { return target_->open_side(); }

  private:
    Connection* target_ = nullptr;
};

// What a HostPool needs to know besides its hosts.
struct HostPoolSpec {
    Target base;             // the first host's target: key, password, options and ssh config
    std::string remote_dir;  // for a standby host whose spec names none (the settings')
    std::string model;
    std::string compression;
    int transfer_connections = 0;             // 0: auto
    std::vector<StandbyHost> fallback_hosts;  // tried in order, each once
    std::string provision_cmd;                // run locally when they are used up; empty: none
    // Hosts (user@host:port) not to take, each with why: marked bad by an earlier run
    // (excluded_hosts in the history).
    std::vector<std::pair<std::string, std::string>> excluded;
    // The resume and stop lines for a host spec (as -h takes it; empty: a rented machine's,
    // which name none).
    std::function<std::pair<std::string, std::string>(const std::string& host)> lines;
    // The settings' provider, when the run rents: a machine for the run, rented when the
    // other standby hosts are used up (at most kMaxProvisions), and its word on a lost one.
    std::function<StandbyHost(Reporter&)> rent;
    std::function<std::optional<std::string>(const std::string& host)> ended;
    // Gives back a rented machine the run cannot use (its connect failed, it is excluded).
    std::function<void(const StandbyHost&)> give_back;
};

// The Failover of the train command: the fallback hosts in order, then hosts that
// provision_cmd prints (at most kMaxProvisions per run: each may rent a machine). Each host
// gets a connection of its own (the first host's key, password, -o options and ssh config)
// and a ShellJob; `connection` and `job` are pointed at the one in use.
class HostPool : public Failover {
  public:
    static constexpr int kMaxProvisions = 3;
    // How long provision_cmd may take (renting a machine and waiting for its sshd).
    static constexpr int kProvisionTimeoutS = 900;

    HostPool(HostPoolSpec spec, ForwardingConnection& connection);
    ~HostPool() override;
    std::optional<NextHost> next(Reporter& reporter) override;
    std::optional<NextHost> at(const StandbyHost& host, Reporter& reporter) override;
    // Whether a standby host is left to try (a fallback host, or a provision_cmd run).
    bool has_more() const override;
    void exclude(const std::string& host) override;
    std::optional<std::string> ended(const std::string& host) override {
        return spec_.ended ? spec_.ended(host) : std::nullopt;
    }

  private:
    // The next standby host to try, from the list or from provision_cmd; nullopt: none.
    std::optional<StandbyHost> candidate(Reporter& reporter);
    StandbyHost provision(Reporter& reporter);

    HostPoolSpec spec_;
    ForwardingConnection& connection_;
    size_t next_fallback_ = 0;
    int provisions_ = 0;
    int rentals_ = 0;
    std::vector<std::unique_ptr<Connection>> connections_;
    std::vector<std::unique_ptr<RemoteJob>> jobs_;
};

}  // namespace mlt
