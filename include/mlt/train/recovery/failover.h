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
#include "mlt/util/reporter.h"

namespace mlt {

// A host a run may continue on, as a `fallback_hosts` entry or the last line of
// `provision_cmd` names it: a host spec as -h takes it, optionally followed by its own
// price, e.g. "root@1.2.3.4:4022/work price_per_hour=0.35".
struct StandbyHost {
    std::string text;  // the host spec as written (for messages and the resume line)
    HostSpec spec;
    std::optional<double> price_per_hour;
};

// Parses one standby host; `where` names its origin for the error ("fallback_hosts entry 2",
// "provision_cmd's output"). Throws mlt::Error (usage, exit 2): a bad host spec, a word that
// is not price_per_hour=USD, a price that is no number >= 0.
StandbyHost parse_standby_host(std::string_view text, const std::string& where);

// The host a run continues on after a failover.
struct NextHost {
    std::string name;        // user@host:port, for messages
    std::string remote_dir;  // its remote working dir
    std::optional<double> price_per_hour;
    std::string resume_line;  // `mlt ssh -h THIS ... train MODEL --resume`
    std::string stop_line;
};

// Where a run goes when its host is lost for good (it did not come back within
// reconnect_timeout). TrainRun asks it for the next host; the train command owns the hosts.
class Failover {
  public:
    virtual ~Failover() = default;
    // Points the run's Connection and RemoteJob at the next standby host that answers, and
    // says which; nullopt when none is left. Says each host that does not answer in one line
    // through `reporter`. Throws mlt::Error (interrupted) when a signal arrives.
    virtual std::optional<NextHost> next(Reporter& reporter) = 0;
    // Points them at `host` (a host the run went to before, as its history names it),
    // whether or not it is one of the standby hosts; nullopt (said through `reporter`) when
    // it does not answer. None by default.
    virtual std::optional<NextHost> at(const StandbyHost& host, Reporter& reporter) {
        (void)host, (void)reporter;
        return std::nullopt;
    }
};

// A Connection that passes everything on to another one, which can be replaced: the run
// keeps talking to this while a failover moves it to another host.
class ForwardingConnection : public Connection {
  public:
    explicit ForwardingConnection(Connection& target) : target_(&target) {}
    void point_at(Connection& target) { target_ = &target; }
    const std::string& name() const override { return target_->name(); }
    Remote& remote() override { return target_->remote(); }
    void reconnect() override { target_->reconnect(); }
    std::unique_ptr<Connection> open_side() override { return target_->open_side(); }

  private:
    Connection* target_;
};

// The same for a RemoteJob.
class ForwardingJob : public RemoteJob {
  public:
    explicit ForwardingJob(RemoteJob& target) : t_(&target) {}
    void point_at(RemoteJob& target) { t_ = &target; }

    std::vector<JobStatus> status() override { return t_->status(); }
    bool lock(const NewRun& run) override { return t_->lock(run); }
    void upload_ahead(const std::map<std::string, std::vector<UploadItem>>& uploads) override {
        t_->upload_ahead(uploads);
    }
    void follow_ahead(Task task, const std::string* run_id, uint64_t offset, int seconds) override {
        t_->follow_ahead(task, run_id, offset, seconds);
    }
    void collect_ahead_on_guess(const TrainPlan& plan, const std::string& run_id) override {
        t_->collect_ahead_on_guess(plan, run_id);
    }
    bool release_with_follow(const ReleaseAtEnd& release) override {
        return t_->release_with_follow(release);
    }
    void retake(const std::string& run_id) override { t_->retake(run_id); }
    void mark_moved(const std::string& run_id, const std::string& where) override {
        t_->mark_moved(run_id, where);
    }
    void begin_gang_attempt(const std::string& run_id, int attempt) override {
        t_->begin_gang_attempt(run_id, attempt);
    }
    void watch(int every_s, OutputSink on_sample) override {
        t_->watch(every_s, std::move(on_sample));
    }
    void set_phase(const std::string& run_id, RunPhase phase) override {
        t_->set_phase(run_id, phase);
    }
    void release(const std::string& run_id) override { t_->release(run_id); }
    void prepare() override { t_->prepare(); }
    void discard() override { t_->discard(); }
    void clean(const std::string& archive, const std::string& log_dir) override {
        t_->clean(archive, log_dir);
    }
    SyncResult upload(const std::map<std::string, std::vector<UploadItem>>& uploads) override {
        return t_->upload(uploads);
    }
    long start(const std::string& run_id) override { return t_->start(run_id); }
    void start_ahead_if_current(const std::string& run_id, const std::string& ticket,
                                const std::string& current_test) override {
        t_->start_ahead_if_current(run_id, ticket, current_test);
    }
    std::optional<long> start_sent_ahead() override { return t_->start_sent_ahead(); }
    bool start_claimed() const override { return t_->start_claimed(); }
    bool void_start_tickets(const std::string& run_id) override {
        return t_->void_start_tickets(run_id);
    }
    long restart(const std::string& run_id, int attempt) override {
        return t_->restart(run_id, attempt);
    }
    bool stop(int grace_s, const std::string* run_id) override { return t_->stop(grace_s, run_id); }
    FollowStep follow(Task task, const std::string* run_id, uint64_t offset, int seconds,
                      const OutputSink& sink) override {
        return t_->follow(task, run_id, offset, seconds, sink);
    }
    JobResult result() override { return t_->result(); }
    TransferStats collect(const TrainPlan& plan, const JobResult& result,
                          Reporter& reporter) override {
        return t_->collect(plan, result, reporter);
    }
    bool start_shutdown(const std::string& run_id, const std::string& script,
                        bool record_collected) override {
        return t_->start_shutdown(run_id, script, record_collected);
    }
    std::optional<int> shutdown_status() override { return t_->shutdown_status(); }

  private:
    RemoteJob* t_;
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
    // The resume and stop lines for a host spec (as -h takes it).
    std::function<std::pair<std::string, std::string>(const std::string& host)> lines;
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

    HostPool(HostPoolSpec spec, ForwardingConnection& connection, ForwardingJob& job);
    ~HostPool() override;
    std::optional<NextHost> next(Reporter& reporter) override;
    std::optional<NextHost> at(const StandbyHost& host, Reporter& reporter) override;

  private:
    // The next standby host to try, from the list or from provision_cmd; nullopt: none.
    std::optional<StandbyHost> candidate(Reporter& reporter);
    StandbyHost provision(Reporter& reporter);

    HostPoolSpec spec_;
    ForwardingConnection& connection_;
    ForwardingJob& job_;
    size_t next_fallback_ = 0;
    int provisions_ = 0;
    std::vector<std::unique_ptr<Connection>> connections_;
    std::vector<std::unique_ptr<RemoteJob>> jobs_;
};

}  // namespace mlt
