// A randomized recovery campaign: host A (behind a FaultRelay) is lost mid-training in one
// of several ways, mlt itself is killed during the failover, or a budget runs out around it,
// with a standby B in fallback_hosts. Every instance draws its choices from a seed
// (MLT_CAMPAIGN_SEED, default time-based; MLT_CAMPAIGN_RUNS instances per kind, default 3)
// and is checked against the same invariants: no epoch lost or trained by two attempts at
// once, nothing trained silently, the local results are the final attempt's, the history
// names every attempt once and agrees with the exit code, the summary is truthful. Every
// violation of an instance is collected and reported with its seed (replay it with
// MLT_CAMPAIGN_SEED=<seed> MLT_CAMPAIGN_RUNS=1).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "harness/expect.h"
#include "harness/fault_relay.h"
#include "harness/files.h"
#include "harness/test_sshd.h"
#include "harness/train_fixture.h"

namespace fs = std::filesystem;

namespace mlt_test {
namespace {

constexpr int kEpochs = 6;
const char* const kMarker = "==== mlt: attempt ";

// The model: resumes after its newest checkpoint; attempt 1 trains fast and stops after
// epoch STOP to wait (bounded) to be lost, later attempts train slower (so a budget can run
// out on B). Each start and each epoch is appended to TRACE (outside both hosts' dirs, with
// the job's dir and the time): the ground truth of what trained where.
std::string model_script(int stop, const std::string& trace) {
    return "n=0\n"
           "for f in \"$MLT_LOG_DIR\"/ckpt-*; do [ -e \"$f\" ] || continue; k=${f##*ckpt-}; "
           "[ \"$k\" -gt \"$n\" ] && n=$k; done\n"
           "a=${MLT_ATTEMPT:-1}\n"
           "echo \"attempt $a resumes after epoch $n\"\n"
           "echo \"S $a $n $PWD $(date +%s.%N)\" >> '" +
           trace +
           "'\n"
           "echo \"attempt $a in $PWD\" > \"$MLT_LOG_DIR/owner\"\n"
           "i=$((n+1))\n"
           "while [ $i -le 6 ]; do\n"
           "  if [ \"$a\" = 1 ]; then sleep 0.2; else sleep 0.8; fi\n"
           "  echo \"epoch $i\"\n"
           "  echo \"E $a $i $PWD $(date +%s.%N)\" >> '" +
           trace +
           "'\n"
           "  echo \"weights of epoch $i by attempt $a\" > \"$MLT_LOG_DIR/.tmp\" && mv "
           "\"$MLT_LOG_DIR/.tmp\" \"$MLT_LOG_DIR/ckpt-$i\"\n"
           "  if [ \"$a\" = 1 ] && [ $i -eq " +
           std::to_string(stop) +
           " ]; then echo waiting; w=0; "
           "while [ $w -lt 2400 ]; do sleep 0.05; w=$((w+1)); done; exit 9; fi\n"
           "  i=$((i+1))\n"
           "done\n"
           "[ -z \"$MLT_ARCHIVE\" ] || printf 'archive of attempt %s in %s' \"$a\" \"$PWD\" > "
           "\"$MLT_ARCHIVE\"\n"
           "true\n";
}

double now_s() {
    timeval tv{};
    ::gettimeofday(&tv, nullptr);
    return static_cast<double>(tv.tv_sec) + tv.tv_usec / 1e6;
}

void pause_ms(int ms) {
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

// One line of the trace: a start (epoch 0, `resumed` set) or an epoch, on host 'A' or 'B'.
struct Trained {
    bool start = false;
    int attempt = 0;
    int epoch = 0;  // the epoch trained; for a start, the epoch it resumed after
    char host = '?';
    double at = 0;
};

// One instance: its seed, its choices in words, what mlt printed, what it broke.
struct Instance {
    unsigned long long seed = 0;
    std::string choices;
    std::string transcript;
    std::vector<std::string> violations;
    void check(bool ok, const std::string& what) {
        if (!ok) violations.push_back(what);
    }
    void add_output(const std::string& what, const ProcessResult& r) {
        transcript += "---- " + what + ": exit " + std::to_string(r.exit_code) +
                      (r.timed_out ? " (timed out)" : "") + "\nstdout:\n" + r.out + "stderr:\n" +
                      r.err;
    }
};

// What an instance allows at its end.
struct Expected {
    std::set<int> exit_codes;
    char final_host = 0;    // 'A', 'B', or 0 when either will do
    int home_at_loss = -1;  // the newest checkpoint home when A (or its job) was lost
};

unsigned long long base_seed() {
    const char* text = std::getenv("MLT_CAMPAIGN_SEED");
    if (text && *text) return std::strtoull(text, nullptr, 10);
    return static_cast<unsigned long long>(
        std::chrono::system_clock::now().time_since_epoch().count() % 1000000000ULL);
}

int campaign_runs() {
    const char* text = std::getenv("MLT_CAMPAIGN_RUNS");
    const int n = text ? std::atoi(text) : 0;
    return n > 0 ? n : 3;
}

std::string tail_of(const std::string& text, std::size_t n) {
    return text.size() <= n ? text : "[...]\n" + text.substr(text.size() - n);
}

std::string join(const std::set<int>& codes) {
    std::string out;
    for (int c : codes) out += (out.empty() ? "" : "/") + std::to_string(c);
    return out;
}

}  // namespace

class RecoveryCampaignSlowTest : public TrainTest {
  protected:
    void SetUp() override {
        TrainTest::SetUp();
        seed_ = base_seed();
        runs_ = campaign_runs();
        std::cout << "[campaign] MLT_CAMPAIGN_SEED=" << seed_ << " MLT_CAMPAIGN_RUNS=" << runs_
                  << std::endl;
    }
    void TearDown() override {
        drop_hosts();
        TrainTest::TearDown();
    }

    // Runs `body` for each instance of a kind, each on fresh hosts, and reports its
    // violations (with seed and choices) without stopping the campaign.
    template <class Body>
    void campaign(const char* kind, Body body) {
        for (int i = 0; i < runs_; ++i) {
            if (i > 0) {
                drop_hosts();
                TrainTest::TearDown();
                TrainTest::SetUp();
            }
            Instance inst;
            inst.seed = seed_ + static_cast<unsigned long long>(i);
            std::mt19937_64 rng(inst.seed * 1000003ULL + std::hash<std::string>{}(kind));
            body(inst, rng);
            std::cout << "[campaign] " << kind << " seed " << inst.seed << " (" << inst.choices
                      << "): "
                      << (inst.violations.empty()
                              ? std::string("ok")
                              : std::to_string(inst.violations.size()) + " violation(s)")
                      << std::endl;
            if (std::getenv("MLT_CAMPAIGN_VERBOSE")) std::cout << inst.transcript << std::endl;
            if (inst.violations.empty()) continue;
            std::string list;
            for (const auto& v : inst.violations) list += "  - " + v + "\n";
            ADD_FAILURE() << kind << " seed " << inst.seed
                          << " (replay: MLT_CAMPAIGN_SEED=" << inst.seed
                          << " MLT_CAMPAIGN_RUNS=1)\n  choices: " << inst.choices << "\n"
                          << list << tail_of(inst.transcript, 12000);
        }
    }

    // Host A behind relay_, standby B (behind b_relay_ when `b_relayed`), the model.
    void set_up_hosts(int stop, bool b_relayed) {
        relay_ = std::make_unique<FaultRelay>(sshd().port());
        a_port_ = relay_->port();
        standby_ = std::make_unique<TestSshd>();
        standby_->authorize_key_file(sshd().client_key_path() + ".pub");
        if (b_relayed) {
            b_relay_ = std::make_unique<FaultRelay>(standby_->port());
            append_file(default_known_hosts(), "[127.0.0.1]:" + std::to_string(b_relay_->port()) +
                                                   " " + standby_->host_key_type_and_blob() + "\n");
        }
        append_file(default_known_hosts(), "[127.0.0.1]:" + std::to_string(a_port_) + " " +
                                               sshd().host_key_type_and_blob() + "\n");
        trace_ = sshd().dir() + "/trace.txt";
        write_shell_model("m", model_script(stop, trace_));
        write_model_settings("m", "ssh:\n  train_cmd: \"sh {spec}\"\n");
        // A stale archive of an earlier run: it must give way to the final attempt's.
        write_file(local_archive("m"), "an archive of an earlier run");
    }
    void drop_hosts() {
        relay_.reset();
        b_relay_.reset();
        if (standby_) {
            for (const auto& p : processes_in(standby_->dir()))
                ::kill(static_cast<pid_t>(std::strtol(p.c_str(), nullptr, 10)), SIGKILL);
            wait_until([&] { return processes_in(standby_->dir()).empty(); }, kEffectTimeout);
        }
        standby_.reset();
    }

    void write_settings(const std::string& extra) const {
        env().write_settings("ssh:\n  remote_dir: \"" + remote() +
                             "\"\n  remote_log_dir: \"logs/{model}\"\n  compression: none\n"
                             "  connection:\n    hostname: 127.0.0.1\n    port: " +
                             std::to_string(a_port_) + "\n    username: " + sshd().user() +
                             "\n    key_filename: \"" + sshd().client_key_path() + "\"\n" + extra);
    }
    int b_port() const { return b_relay_ ? b_relay_->port() : standby_->port(); }
    std::string b_spec() const {
        return sshd().user() + "@127.0.0.1:" + std::to_string(b_port()) + "/" +
               standby_->remote_dir();
    }
    std::string fallback_line(const std::string& price) const {
        return "  fallback_hosts: [\"" + b_spec() + (price.empty() ? "" : " " + price) + "\"]\n";
    }
    std::string a_name() const { return "127.0.0.1:" + std::to_string(a_port_); }
    std::string b_name() const { return "127.0.0.1:" + std::to_string(b_port()); }
    std::string b_job_file(const std::string& name) const {
        return standby_->remote_dir() + "/.mlt/m/" + name;
    }
    std::string host_console(char host) const {
        return read_or_empty(host == 'A' ? job_file("m", "console.log")
                                         : b_job_file("console.log"));
    }

    // The newest checkpoint in the local log dir.
    int newest_home() const {
        int newest = 0;
        for (int i = 1; i <= kEpochs; ++i)
            if (path_exists(local_logs("m") + "/ckpt-" + std::to_string(i))) newest = i;
        return newest;
    }
    // Kills the job of A (its process group `pgid`, or the one it recorded).
    void kill_job_a(long pgid = 0) {
        if (pgid <= 0) pgid = job_pgid("m");
        if (pgid <= 0) return;
        ::kill(static_cast<pid_t>(-pgid), SIGKILL);
        wait_group_gone(pgid);
    }

    std::vector<Trained> read_trace() const;
    void check_trace(Instance& inst, const Expected& want, bool success,
                     const nlohmann::json& record) const;
    void check_console(Instance& inst, const std::vector<Trained>& trace) const;
    nlohmann::json newest_record(Instance& inst) const;
    void check_history(Instance& inst, const nlohmann::json& record, int exit_code) const;
    void check_summary(Instance& inst, const ProcessResult& r, const nlohmann::json& record) const;
    void check_local_results(Instance& inst, const nlohmann::json& record) const;
    void check_no_job_left(Instance& inst, int exit_code) const;
    void check_end(Instance& inst, const ProcessResult& r, const Expected& want);
    void check_returning_a_refuses(Instance& inst, bool wiped);

    void host_lost_instance(Instance& inst, std::mt19937_64& rng);
    void client_killed_instance(Instance& inst, std::mt19937_64& rng);
    void kill_client_at(Instance& inst, BackgroundProcess& run, const std::string& point,
                        int delay);
    ProcessResult resume_on(Instance& inst, const std::string& where);
    void budget_instance(Instance& inst, std::mt19937_64& rng);
    void gang_instance(Instance& inst, std::mt19937_64& rng);
    std::vector<std::string> gang(const std::vector<std::string>& args) const;
    void check_gang(Instance& inst, const ProcessResult& r, int stop);
    void check_budget(Instance& inst, const ProcessResult& r, bool by_cost, double limit_s,
                      double t0, double b_price);

    // Kind 1's and kind 3's start: the run with B as standby, followed until attempt 1
    // printed epoch `stop`.
    std::unique_ptr<BackgroundProcess> start_run(Instance& inst,
                                                 const std::vector<std::string>& extra, int stop,
                                                 const std::string& connect_timeout = "2");

    unsigned long long seed_ = 0;
    int runs_ = 3;
    std::unique_ptr<FaultRelay> relay_;
    std::unique_ptr<FaultRelay> b_relay_;
    std::unique_ptr<TestSshd> standby_;
    int a_port_ = 0;
    std::string trace_;
};

std::vector<Trained> RecoveryCampaignSlowTest::read_trace() const {
    std::vector<Trained> out;
    for (const auto& line : split_lines(read_or_empty(trace_))) {
        const auto f = split_fields(line);
        if (f.size() != 5) continue;
        Trained t;
        t.start = f[0] == "S";
        t.attempt = std::atoi(f[1].c_str());
        t.epoch = std::atoi(f[2].c_str());
        t.host = f[3].rfind(sshd().dir(), 0) == 0
                     ? 'A'
                     : (standby_ && f[3].rfind(standby_->dir(), 0) == 0 ? 'B' : '?');
        t.at = std::atof(f[4].c_str());
        out.push_back(t);
    }
    return out;
}

std::unique_ptr<BackgroundProcess> RecoveryCampaignSlowTest::start_run(
    Instance& inst, const std::vector<std::string>& extra, int stop,
    const std::string& connect_timeout) {
    std::vector<std::string> args = {"ssh",
                                     "-o",
                                     "ConnectTimeout=" + connect_timeout,
                                     "-o",
                                     "ServerAliveInterval=1",
                                     "-o",
                                     "ServerAliveCountMax=2",
                                     "train",
                                     "m",
                                     "--reconnect-timeout",
                                     "2",
                                     "--sync-every",
                                     "1"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto run = start_mlt(args);
    if (!run->wait_for_output("epoch " + std::to_string(stop) + "\n", kEffectTimeout)) {
        inst.check(false, "harness: attempt 1 never showed epoch " + std::to_string(stop));
    }
    return run;
}

// The trace against the history and the expectations: each attempt started once, on the
// host the history names; attempts never overlap in time; each continuing attempt resumed
// from at least the checkpoint home at the loss; epochs R+1..6 of the final attempt trained
// by it exactly once; an epoch trained twice only where the lost host's cost allows it.
void RecoveryCampaignSlowTest::check_trace(Instance& inst, const Expected& want, bool success,
                                           const nlohmann::json& record) const {
    const auto trace = read_trace();
    std::map<int, Trained> starts;
    std::map<int, double> last_at;
    std::map<int, int> count;  // epoch -> trainings
    for (const auto& t : trace) {
        if (t.start) {
            inst.check(!starts.count(t.attempt), "attempt " + std::to_string(t.attempt) +
                                                     " started twice (again on " +
                                                     std::string(1, t.host) + ")");
            if (!starts.count(t.attempt)) starts[t.attempt] = t;
        } else {
            ++count[t.epoch];
        }
        last_at[t.attempt] = t.at;
    }
    std::map<int, std::string> hosts;  // attempt -> host of the history
    if (record.contains("attempts") && record["attempts"].is_array())
        for (const auto& a : record["attempts"])
            hosts[a.value("attempt", 0)] = a.value("host", std::string());
    for (const auto& [n, s] : starts) {
        const std::string where = s.host == 'A' ? a_name() : b_name();
        inst.check(hosts.count(n) && has_text(hosts[n], where),
                   "attempt " + std::to_string(n) + " trained on " + std::string(1, s.host) + " (" +
                       where + ") but the history has it " +
                       (hosts.count(n) ? "on " + hosts[n] : "not at all") +
                       ": a training mlt does not know of");
        if (n >= 2 && want.home_at_loss >= 0)
            inst.check(s.epoch >= want.home_at_loss,
                       "attempt " + std::to_string(n) + " resumed after epoch " +
                           std::to_string(s.epoch) + ", older than checkpoint " +
                           std::to_string(want.home_at_loss) + " that was home at the loss");
        if (starts.count(n + 1))
            inst.check(last_at[n] <= starts[n + 1].at,
                       "attempt " + std::to_string(n) + " still trained after attempt " +
                           std::to_string(n + 1) + " started: two trainings at once");
    }
    for (int i = 1; i <= kEpochs; ++i) {
        if (success) inst.check(count[i] >= 1, "epoch " + std::to_string(i) + " was never trained");
        const int allowed = (want.home_at_loss >= 0 && i > want.home_at_loss) ? 2 : 1;
        inst.check(count[i] <= allowed, "epoch " + std::to_string(i) + " trained " +
                                            std::to_string(count[i]) + " times (allowed " +
                                            std::to_string(allowed) + ")");
    }
    if (success && !starts.empty()) {
        const Trained& last = starts.rbegin()->second;
        if (want.final_host)
            inst.check(last.host == want.final_host, "the final attempt ran on " +
                                                         std::string(1, last.host) + ", expected " +
                                                         std::string(1, want.final_host));
    }
    check_console(inst, trace);
}

// Nothing trains silently: what each attempt trained (the trace) is what the local console
// copy shows of it, and every attempt after the first has one marker line.
void RecoveryCampaignSlowTest::check_console(Instance& inst,
                                             const std::vector<Trained>& trace) const {
    const std::string console = read_or_empty(local_console("m"));
    std::multiset<std::pair<int, int>> shown, done;
    std::set<int> attempts;
    int current = 0;
    for (const auto& line : split_lines(console)) {
        int a = 0, n = 0;
        if (std::sscanf(line.c_str(), "attempt %d resumes after epoch %d", &a, &n) == 2) {
            current = a;
            shown.insert({a, 0});
        } else if (line.rfind("epoch ", 0) == 0) {
            shown.insert({current, std::atoi(line.c_str() + 6)});
        }
    }
    for (const auto& t : trace) {
        done.insert({t.attempt, t.start ? 0 : t.epoch});
        attempts.insert(t.attempt);
    }
    for (const auto& p : done)
        inst.check(shown.count(p) == done.count(p),
                   "attempt " + std::to_string(p.first) +
                       (p.second ? " epoch " + std::to_string(p.second) : std::string(" start")) +
                       ": trained " + std::to_string(done.count(p)) +
                       "x, the local console shows " + std::to_string(shown.count(p)) + "x");
    for (const auto& p : shown)
        inst.check(done.count(p) > 0, "the local console shows attempt " + std::to_string(p.first) +
                                          " epoch " + std::to_string(p.second) +
                                          " that never trained");
    for (int a : attempts)
        if (a >= 2)
            inst.check(
                lines_starting(console, kMarker + std::to_string(a) + " of run ").size() == 1,
                "the local console has not one marker line of attempt " + std::to_string(a));
}

nlohmann::json RecoveryCampaignSlowTest::newest_record(Instance& inst) const {
    nlohmann::json newest;
    for (const auto& line : split_lines(read_or_empty(history_path()))) {
        if (trim(line).empty()) continue;
        try {
            auto j = nlohmann::json::parse(line);
            if (j.is_object() && j.value("model", std::string()) == "m") newest = j;
        } catch (const std::exception& e) {
            inst.check(false, std::string("a history line is no JSON: ") + e.what());
        }
    }
    inst.check(newest.is_object(), "no history record of the run");
    return newest;
}

// The history's newest record: attempts 1..n once each, in order; every host of an attempt
// in `hosts`; `success` exactly when mlt exited 0.
void RecoveryCampaignSlowTest::check_history(Instance& inst, const nlohmann::json& record,
                                             int exit_code) const {
    if (!record.is_object()) return;
    const std::string status = record.value("status", std::string());
    inst.check((status == "success") == (exit_code == 0),
               "history status '" + status + "' with exit " + std::to_string(exit_code));
    if (exit_code == 5) inst.check(status == "limit", "exit 5 but history status " + status);
    const auto attempts = record.value("attempts", nlohmann::json::array());
    inst.check(attempts.is_array() && !attempts.empty(), "the record has no attempts");
    std::string hosts = record.contains("hosts") ? record["hosts"].dump() : "";
    int expected = 1;
    for (const auto& a : attempts) {
        const int n = a.value("attempt", 0);
        inst.check(n == expected, "history attempts out of order or twice: " + attempts.dump());
        expected = n + 1;
        inst.check(has_text(hosts, a.value("host", std::string("?"))),
                   "host " + a.value("host", std::string("?")) + " of attempt " +
                       std::to_string(n) + " missing from hosts " + hosts);
    }
    if (!attempts.empty() && exit_code == 0)
        inst.check(attempts.back().value("how", nlohmann::json()) == "success",
                   "exit 0 but the last attempt ended " + attempts.back().dump());
}

// The summary block: every attempt once, no "still on the remote" when the job is gone, a lost
// job said to be lost.
void RecoveryCampaignSlowTest::check_summary(Instance& inst, const ProcessResult& r,
                                             const nlohmann::json& record) const {
    const auto lines = lines_starting(r.out, "mlt:   attempts: ");
    inst.check(lines.size() == 1,
               "the summary has " + std::to_string(lines.size()) + " attempts lines (stdout)");
    inst.check(!has_text(r.out + r.err, "\\n"), "a message holds a literal \\n");
    if (lines.size() != 1 || !record.is_object()) return;
    const auto attempts = record.value("attempts", nlohmann::json::array());
    for (const auto& a : attempts) {
        const std::string tag = "#" + std::to_string(a.value("attempt", 0)) + " on ";
        inst.check(count_occurrences(lines[0], tag) == 1,
                   "the summary names '" + tag + "' " +
                       std::to_string(count_occurrences(lines[0], tag)) + "x: " + lines[0]);
    }
    if (!attempts.empty() && attempts.back().value("how", nlohmann::json()) == "lost")
        inst.check(has_text(lines[0], "lost"), "a lost job not said lost: " + lines[0]);
    const bool job_gone = r.exit_code == 0 || r.exit_code == 5 || r.exit_code == 1;
    if (job_gone)
        inst.check(!has_text(r.out + r.err, "still on the remote"),
                   "the summary says results are still on the remote after exit " +
                       std::to_string(r.exit_code));
}

// After a success: the local log dir, console copy and archive are the final attempt's.
void RecoveryCampaignSlowTest::check_local_results(Instance& inst,
                                                   const nlohmann::json& record) const {
    const auto trace = read_trace();
    const Trained* last = nullptr;
    for (const auto& t : trace)
        if (t.start && (!last || t.attempt > last->attempt)) last = &t;
    if (!last) return inst.check(false, "the trace has no start");
    const std::string dir = last->host == 'A' ? remote() : standby_->remote_dir();
    const std::string who = "attempt " + std::to_string(last->attempt) + " in ";
    const std::string owner = trim(read_or_empty(local_logs("m") + "/owner"));
    inst.check(owner.rfind(who, 0) == 0 && has_text(owner, dir.substr(dir.rfind('/'))),
               "the local log dir is '" + owner + "', not the final attempt's (" + who + dir + ")");
    const std::string archive = read_or_empty(local_archive("m"));
    inst.check(
        archive.rfind("archive of " + who, 0) == 0 && has_text(archive, dir.substr(dir.rfind('/'))),
        "the local archive is '" + archive + "', not the final attempt's");
    for (int i = last->epoch + 1; i <= kEpochs; ++i)
        inst.check(read_or_empty(local_logs("m") + "/ckpt-" + std::to_string(i)) ==
                       "weights of epoch " + std::to_string(i) + " by attempt " +
                           std::to_string(last->attempt) + "\n",
                   "local ckpt-" + std::to_string(i) + " is not the final attempt's");
    inst.check(read_or_empty(local_console("m")) == host_console(last->host),
               std::string("the local console copy differs from ") + last->host + "'s console.log");
    (void)record;
}

void RecoveryCampaignSlowTest::check_no_job_left(Instance& inst, int exit_code) const {
    if (exit_code != 0 && exit_code != 1 && exit_code != 5 && exit_code != 3) return;
    const bool gone = wait_until(
        [&] {
            return processes_in(sshd().dir()).empty() &&
                   (!standby_ || processes_in(standby_->dir()).empty());
        },
        std::chrono::seconds(5));
    inst.check(gone, "a job still runs after mlt exited " + std::to_string(exit_code));
}

void RecoveryCampaignSlowTest::check_end(Instance& inst, const ProcessResult& r,
                                         const Expected& want) {
    inst.check(!r.timed_out, "mlt did not end within its bound");
    inst.check(want.exit_codes.count(r.exit_code) > 0,
               "exit " + std::to_string(r.exit_code) + ", expected " + join(want.exit_codes));
    const nlohmann::json record = newest_record(inst);
    check_history(inst, record, r.exit_code);
    check_summary(inst, r, record);
    check_trace(inst, want, r.exit_code == 0, record);
    if (r.exit_code == 0) check_local_results(inst, record);
    check_no_job_left(inst, r.exit_code);
}

// A, back (with its disk unless `wiped`), refuses a --resume of the run that went to B.
void RecoveryCampaignSlowTest::check_returning_a_refuses(Instance& inst, bool wiped) {
    if (!relay_) relay_ = std::make_unique<FaultRelay>(sshd().port(), a_port_);
    if (relay_->stalled()) {
        relay_->cut();
        relay_->resume();
    }
    const std::size_t before = read_trace().size();
    ProcessResult again = mlt(
        {"ssh", "-o", "ConnectTimeout=2", "train", "m", "--resume", "--reconnect-timeout", "2"});
    inst.add_output("--resume on the returning A", again);
    inst.check(again.exit_code == 3, "the returning A" + std::string(wiped ? " (wiped)" : "") +
                                         " answered --resume with exit " +
                                         std::to_string(again.exit_code) + ", not 3");
    inst.check(read_trace().size() == before, "the --resume on the returning A trained");
    inst.check(!has_text(again.out + again.err, "\\n"), "a message holds a literal \\n");
}

// ---- Kind 1: host A lost mid-training --------------------------------------------------

void RecoveryCampaignSlowTest::host_lost_instance(Instance& inst, std::mt19937_64& rng) {
    const char* const ways[] = {"unreachable", "wiped", "job-killed", "stalled"};
    const std::string way = ways[rng() % 4];
    const int stop = 1 + static_cast<int>(rng() % 5);
    const int delay = static_cast<int>(rng() % 1500);
    const int restarts = way == "job-killed" ? static_cast<int>(rng() % 2) : 1;
    inst.choices = "way=" + way + " stop-after-epoch=" + std::to_string(stop) +
                   " delay-ms=" + std::to_string(delay) +
                   " max-restarts=" + std::to_string(restarts);
    set_up_hosts(stop, false);
    write_settings(fallback_line("price_per_hour=0.5"));
    auto run = start_run(inst, {"--max-restarts", std::to_string(restarts)}, stop);
    pause_ms(delay);
    Expected want;
    want.home_at_loss = newest_home();
    inst.choices += " home-at-loss=" + std::to_string(want.home_at_loss);
    const long pgid = job_pgid("m");
    if (way == "unreachable") relay_.reset();
    if (way == "stalled") relay_->stall();
    if (way == "wiped") {
        std::error_code ec;
        fs::remove_all(remote(), ec);
    }
    kill_job_a(pgid);
    ProcessResult r = run->wait(kTrainTimeout);
    inst.add_output("train", r);
    const bool in_place = way == "job-killed";
    want.exit_codes = {in_place && restarts == 0 ? 1 : 0};
    want.final_host = in_place ? 'A' : 'B';
    check_end(inst, r, want);
    if (in_place)
        inst.check(!path_exists(standby_->remote_dir() + "/.mlt"), "B was used for a lost job");
    if (way == "wiped")
        inst.check(has_text(r.err, "its remote dir is gone"), "no 'its remote dir is gone'");
    if (!in_place && r.exit_code == 0) check_returning_a_refuses(inst, way == "wiped");
}

TEST_F(RecoveryCampaignSlowTest, HostLostMidTraining) {
    campaign("HostLostMidTraining",
             [&](Instance& inst, std::mt19937_64& rng) { host_lost_instance(inst, rng); });
}

// ---- Kind 2: mlt killed (SIGKILL) during the failover, then --resume -------------------

// Waits for the failover to reach `point` (B behind b_relay_: stalled for before-B, slowed
// for pushing), then `delay` ms, then kills mlt and lets B's link flow again.
void RecoveryCampaignSlowTest::kill_client_at(Instance& inst, BackgroundProcess& run,
                                              const std::string& point, int delay) {
    bool reached = false;
    if (point == "before-B") {
        reached = wait_until([&] { return has_text(run.err(), "looking for a standby host"); },
                             kTrainTimeout);
    } else if (point == "pushing") {
        reached = wait_until(
            [&] { return path_exists(b_job_file("lock")) && b_relay_->bytes(Direction::up) > 0; },
            kTrainTimeout);
    } else if (point == "job-started-on-B") {
        reached = wait_until([&] { return path_exists(b_job_file("pid")); }, kTrainTimeout);
    } else {
        reached = wait_until([&] { return has_text(run.out(), "==== mlt: attempt 2 of run"); },
                             kTrainTimeout);
    }
    inst.check(reached, "harness: the failover never reached " + point);
    pause_ms(delay);
    inst.choices += std::string(" B-locked-at-kill=") +
                    (path_exists(b_job_file("lock")) ? "1" : "0") +
                    " B-job-at-kill=" + (path_exists(b_job_file("pid")) ? "1" : "0");
    run.signal(SIGKILL);
    ProcessResult killed = run.wait(kEffectTimeout);
    inst.add_output("train (killed at " + point + ")", killed);
    b_relay_->resume();
    b_relay_->set_rate(0);
}

// `train m --resume` on A (the settings' host) or on B.
ProcessResult RecoveryCampaignSlowTest::resume_on(Instance& inst, const std::string& where) {
    std::vector<std::string> args = {"ssh", "-o", "ConnectTimeout=2"};
    if (where == "B") args.insert(args.end(), {"-h", b_spec()});
    args.insert(args.end(), {"train", "m", "--resume", "--reconnect-timeout", "2"});
    ProcessResult r = mlt(args);
    inst.add_output("--resume on " + where, r);
    inst.check(!has_text(r.out + r.err, "\\n"), "a message holds a literal \\n");
    return r;
}

void RecoveryCampaignSlowTest::client_killed_instance(Instance& inst, std::mt19937_64& rng) {
    const char* const points[] = {"before-B", "pushing", "job-started-on-B", "after-marker"};
    const char* const wheres[] = {"A-down", "A-back-with-disk", "A-back-wiped", "B"};
    const std::string point = points[rng() % 4];
    const std::string where = wheres[rng() % 4];
    const int stop = 1 + static_cast<int>(rng() % 5);
    const int delay = static_cast<int>(rng() % 400);
    inst.choices = "kill-at=" + point + " resume-on=" + where +
                   " stop-after-epoch=" + std::to_string(stop) +
                   " delay-ms=" + std::to_string(delay);
    set_up_hosts(stop, true);
    write_settings(fallback_line(""));
    auto run = start_run(inst, {}, stop, point == "before-B" ? "60" : "2");
    if (point == "pushing") {
        // A big file in the local log dir, and a slow link to B: the push takes ~10 s.
        write_file(local_logs("m") + "/pad.bin", std::string(1500000, 'x'));
        b_relay_->set_rate(150000);
    }
    if (point == "before-B") b_relay_->stall();
    Expected want;
    want.home_at_loss = newest_home();
    const long pgid = job_pgid("m");
    relay_.reset();
    kill_job_a(pgid);
    kill_client_at(inst, *run, point, delay);
    // Once B's lock is the run's, the history has attempt 2 there: A must refuse.
    const bool locked_b = path_exists(b_job_file("lock"));
    const bool moved = point == "job-started-on-B" || point == "after-marker";
    if (where == "A-back-wiped") {
        std::error_code ec;
        fs::remove_all(remote(), ec);
    }
    if (where != "A-down" && where != "B")
        relay_ = std::make_unique<FaultRelay>(sshd().port(), a_port_);
    ProcessResult r = resume_on(inst, where == "B" ? "B" : "A");
    std::set<int> first = {0};
    if (where == "A-back-wiped" || (moved && where == "A-down")) first = {0, 3, 255};
    if (where == "A-back-with-disk" && locked_b)
        first = moved ? std::set<int>{3} : std::set<int>{0, 3};
    inst.check(first.count(r.exit_code) > 0, "the first --resume (on " + where + ") exited " +
                                                 std::to_string(r.exit_code) + ", expected " +
                                                 join(first));
    inst.choices += " first-resume-exit=" + std::to_string(r.exit_code);
    if (r.exit_code != 0 && r.exit_code != 124) r = resume_on(inst, "B");
    want.exit_codes = {0};
    want.final_host = (where == "A-back-with-disk" && !locked_b) ? 0 : 'B';
    check_end(inst, r, want);
    if (r.exit_code == 0 && !read_trace().empty() && read_trace().back().host == 'B')
        check_returning_a_refuses(inst, where == "A-back-wiped");
}

TEST_F(RecoveryCampaignSlowTest, ClientKilledDuringFailover) {
    campaign("ClientKilledDuringFailover",
             [&](Instance& inst, std::mt19937_64& rng) { client_killed_instance(inst, rng); });
}

// ---- Kind 3: a budget that runs out around the failover --------------------------------

// The budget held: the run ended within a few seconds of its limit, and no standby was
// taken once the limit was reached.
void RecoveryCampaignSlowTest::check_budget(Instance& inst, const ProcessResult& r, bool by_cost,
                                            double limit_s, double t0, double b_price) {
    const auto trace = read_trace();
    double b_start = 0;
    for (const auto& t : trace)
        if (t.start && t.host == 'B') b_start = t.at;
    const bool b_used = b_start > 0;
    const std::set<int> codes = b_used ? std::set<int>{0, 5} : std::set<int>{5, 255};
    inst.check(codes.count(r.exit_code) > 0, "budget run exited " + std::to_string(r.exit_code) +
                                                 (b_used ? " after B trained" : " without B") +
                                                 ", expected " + join(codes));
    const double ended = now_s() - t0;
    const auto record = newest_record(inst);
    const double cost = record.is_object() && record.contains("cost") && record["cost"].is_number()
                            ? record["cost"].get<double>()
                            : -1;
    const double worst = std::max(1.0, b_price / 3600.0);
    std::ostringstream figures;
    figures << " (limit " << limit_s << (by_cost ? " $" : " s") << ", cost $" << cost
            << ", mlt ended after " << ended << " s, B started "
            << (b_used ? std::to_string(b_start - t0) + " s" : std::string("never")) << ")";
    inst.choices += figures.str();
    if (by_cost) {
        inst.check(cost >= 0, "no cost recorded under --max-cost");
        if (r.exit_code == 0 || r.exit_code == 5)
            inst.check(cost <= limit_s + 4 * worst, "the cost overran --max-cost" + figures.str());
        if (b_used && record.is_object() && record.contains("attempts")) {
            const auto& first = record["attempts"][0];
            inst.check(first.value("cost", 0.0) < limit_s + 1,
                       "B was taken although attempt 1 alone had cost $" +
                           std::to_string(first.value("cost", 0.0)) + figures.str());
        }
    } else {
        if (r.exit_code == 0 || r.exit_code == 5)
            inst.check(ended <= limit_s + 5, "the run overran --max-hours" + figures.str());
        if (b_used)
            inst.check(b_start - t0 <= limit_s + 1.5,
                       "B was taken after --max-hours was reached" + figures.str());
    }
    if (!b_used)
        inst.check(!path_exists(b_job_file("lock")), "B holds a lock of a run that never used it");
}

void RecoveryCampaignSlowTest::budget_instance(Instance& inst, std::mt19937_64& rng) {
    const bool by_cost = rng() % 2 == 0;
    const int limit = 8 + static_cast<int>(rng() % 11);
    const int offset_ms = -7000 + static_cast<int>(rng() % 9000);
    const int stop = 1 + static_cast<int>(rng() % 5);
    const double b_price = (rng() % 3 == 0) ? 1800 : (rng() % 2 ? 3600 : 7200);
    std::ostringstream hours;
    hours.precision(8);
    hours << limit / 3600.0;
    inst.choices = std::string(by_cost ? "--max-cost " : "--max-hours ") +
                   (by_cost ? std::to_string(limit) : hours.str()) + " loss-at-limit" +
                   (offset_ms >= 0 ? "+" : "") + std::to_string(offset_ms) +
                   "ms stop-after-epoch=" + std::to_string(stop) +
                   " B-price=" + std::to_string(static_cast<int>(b_price));
    set_up_hosts(stop, false);
    write_settings(fallback_line("price_per_hour=" + std::to_string(static_cast<int>(b_price))));
    std::vector<std::string> extra = {"--price", "3600"};
    if (by_cost)
        extra.insert(extra.end(), {"--max-cost", std::to_string(limit)});
    else
        extra.insert(extra.end(), {"--max-hours", hours.str()});
    const double t0 = now_s();
    auto run = start_run(inst, extra, stop);
    const double loss_at = t0 + limit + offset_ms / 1000.0;
    while (now_s() < loss_at && !has_text(run->out(), "mlt: summary")) pause_ms(20);
    Expected want;
    want.home_at_loss = newest_home();
    inst.choices += " home-at-loss=" + std::to_string(want.home_at_loss);
    const long pgid = job_pgid("m");
    relay_.reset();
    kill_job_a(pgid);
    ProcessResult r = run->wait(kTrainTimeout);
    inst.add_output("train", r);
    want.exit_codes = {0, 5, 255};
    check_end(inst, r, want);
    check_budget(inst, r, by_cost, limit, t0, b_price);
}

TEST_F(RecoveryCampaignSlowTest, BudgetRunsOutAroundTheFailover) {
    campaign("BudgetRunsOutAroundTheFailover",
             [&](Instance& inst, std::mt19937_64& rng) { budget_instance(inst, rng); });
}

// ---- Kind 4: a two-node gang loses one node's job or host, then --resume ---------------

// `mlt ssh -i KEY -h A -h B ARGS...`: rank 0 on A (behind relay_), rank 1 on B (behind
// b_relay_).
std::vector<std::string> RecoveryCampaignSlowTest::gang(
    const std::vector<std::string>& args) const {
    std::vector<std::string> all = {
        "ssh",
        "-o",
        "ConnectTimeout=2",
        "-o",
        "ServerAliveInterval=1",
        "-o",
        "ServerAliveCountMax=2",
        "-i",
        sshd().client_key_path(),
        "-h",
        sshd().user() + "@127.0.0.1:" + std::to_string(a_port_) + "/" + remote(),
        "-h",
        b_spec()};
    all.insert(all.end(), args.begin(), args.end());
    return all;
}

// Every node trained each epoch after its newest checkpoint once in the end, never two
// attempts at once, and what each trained is in its local console copy.
void RecoveryCampaignSlowTest::check_gang(Instance& inst, const ProcessResult& r, int stop) {
    inst.check(r.exit_code == 0, "the gang's --resume exited " + std::to_string(r.exit_code));
    inst.transcript += "---- history:\n" + read_or_empty(history_path());
    const auto record = newest_record(inst);
    check_history(inst, record, r.exit_code);
    const std::string hosts =
        record.is_object() && record.contains("hosts") ? record["hosts"].dump() : "";
    inst.check(has_text(hosts, a_name()) && has_text(hosts, b_name()),
               "the run's newest history record names not both nodes: " + hosts);
    inst.check(!has_text(r.out + r.err, "\\n"), "a message holds a literal \\n");
    if (r.exit_code == 0)
        for (const char* rank : {"0", "1"})
            inst.check(lines_starting(r.out, std::string("mlt: [rank ") + rank + "]   attempts: ")
                               .size() == 1,
                       std::string("rank ") + rank + "'s summary has not one attempts line");
    for (char host : {'A', 'B'}) {
        const std::string h(1, host);
        std::map<int, int> count;
        std::map<int, int> starts;
        int last_resume = -1;
        for (const auto& t : read_trace()) {
            if (t.host != host) continue;
            if (t.start) {
                ++starts[t.attempt];
                last_resume = t.epoch;
            } else {
                ++count[t.epoch];
            }
        }
        for (const auto& [a, n] : starts)
            inst.check(n == 1, "attempt " + std::to_string(a) + " started " + std::to_string(n) +
                                   "x on " + h);
        inst.check(last_resume >= stop || starts.size() == 1,
                   h + "'s last attempt resumed after epoch " + std::to_string(last_resume) +
                       ", before its own checkpoint " + std::to_string(stop));
        for (int i = 1; i <= kEpochs; ++i) {
            inst.check(count[i] >= 1, "epoch " + std::to_string(i) + " never trained on " + h);
            inst.check(count[i] <= 1 + (i > stop ? 1 : 0),
                       "epoch " + std::to_string(i) + " trained " + std::to_string(count[i]) +
                           "x on " + h);
        }
        const std::string rank = host == 'A' ? "0" : "1";
        inst.check(read_or_empty(local_logs("m") + "/nodes/" + rank + "/mltk_ssh_train_m.log") ==
                       host_console(host),
                   "rank " + rank + "'s local console copy differs from " + h + "'s console.log");
    }
    check_no_job_left(inst, r.exit_code);
}

void RecoveryCampaignSlowTest::gang_instance(Instance& inst, std::mt19937_64& rng) {
    const bool rank1 = rng() % 2 == 1;
    const bool host_lost = rng() % 2 == 1;
    const int stop = 1 + static_cast<int>(rng() % 5);
    const int delay = static_cast<int>(rng() % 1000);
    inst.choices = std::string("node=rank") + (rank1 ? "1" : "0") +
                   (host_lost ? " way=host-lost" : " way=job-killed") +
                   " stop-after-epoch=" + std::to_string(stop) +
                   " delay-ms=" + std::to_string(delay);
    set_up_hosts(stop, true);
    env().write_settings("ssh:\n  remote_log_dir: \"logs/{model}\"\n  compression: none\n");
    auto run = start_mlt(gang({"train", "m", "--reconnect-timeout", "2"}));
    const std::string line = "] epoch " + std::to_string(stop) + "\n";
    inst.check(wait_until([&] { return count_occurrences(run->out(), line) >= 2; }, kEffectTimeout),
               "harness: both ranks never showed epoch " + std::to_string(stop));
    pause_ms(delay);
    const long pgid = rank1 ? std::atol(read_or_empty(b_job_file("pid")).c_str()) : job_pgid("m");
    const int port = rank1 ? b_relay_->port() : a_port_;
    if (host_lost) (rank1 ? b_relay_ : relay_).reset();
    kill_job_a(pgid);
    ProcessResult first = run->wait(kTrainTimeout);
    inst.add_output("train", first);
    inst.choices += " first-exit=" + std::to_string(first.exit_code);
    inst.check(first.exit_code == (host_lost ? 255 : 1),
               "the gang exited " + std::to_string(first.exit_code) + " after a " +
                   (host_lost ? "lost host" : "killed job") + ", expected " +
                   (host_lost ? "255" : "1"));
    inst.check(!has_text(first.out + first.err, "\\n"), "a message holds a literal \\n");
    if (host_lost && rank1) b_relay_ = std::make_unique<FaultRelay>(standby_->port(), port);
    if (host_lost && !rank1) relay_ = std::make_unique<FaultRelay>(sshd().port(), port);
    ProcessResult r = mlt(gang({"train", "m", "--resume", "--reconnect-timeout", "2"}));
    inst.add_output("--resume of the gang", r);
    check_gang(inst, r, stop);
}

TEST_F(RecoveryCampaignSlowTest, GangNodeLost) {
    campaign("GangNodeLost",
             [&](Instance& inst, std::mt19937_64& rng) { gang_instance(inst, rng); });
}

}  // namespace mlt_test
