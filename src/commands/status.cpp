// `mlt ssh ... status [MODEL]`: the job table of every node, with the last GPU sample.
#include "mlt/job/status.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <optional>

#include "mlt/commands/model.h"
#include "mlt/commands/model_settings.h"
#include "mlt/commands/status.h"
#include "mlt/job/job.h"
#include "mlt/ssh/remote.h"
#include "mlt/train/local/history.h"
#include "mlt/train/watch/gpu_watch.h"
#include "mlt/transfer/progress.h"
#include "mlt/util/error.h"
#include "mlt/util/terminal.h"
#include "mlt/util/text.h"

namespace mlt {

namespace {

// "last sample (14:02:11): GPU 80% 12.0/80.0 GiB, load 3.5, 120.4 GiB free": the host's guard's
// last sample of the job, or else the last of the metrics file of the local log dir when it
// is of `job`'s run.
std::optional<std::string> last_sample_line(const std::string& local_logs, const JobStatus& job) {
    std::optional<HostSample> sample = parse_sample(job.sample);
    if (!sample) {
        std::ifstream in(local_logs + "/" + kMetricsFile);
        std::string line, last;
        while (std::getline(in, line))
            if (!line.empty()) last = line;
        std::string of_run;
        sample = parse_sample_json(last, &of_run);
        if (job.run_id.empty() || of_run != job.run_id) return std::nullopt;
    }
    if (!sample) return std::nullopt;
    const HostSample& s = *sample;
    std::string out = gpu_status(s);
    if (s.load1) out += (out.empty() ? "" : ", ") + std::string("load ") + number_text(*s.load1);
    if (s.free_kib)
        out += (out.empty() ? "" : ", ") + format_bytes(static_cast<uint64_t>(*s.free_kib) * 1024) +
               " free";
    char when[32] = "";
    const std::time_t t = static_cast<std::time_t>(s.time);
    std::strftime(when, sizeof when, "%H:%M:%S", std::localtime(&t));
    return "last sample (" + std::string(when) + "): " + out;
}

// "; notifications: 2 sent, 1 try failed (.mlt/MODEL/notify.log)", or "".
std::string notify_words(const JobStatus& job) {
    if (!job.notifies) return "";
    return "; notifications: " + std::to_string(job.notify_sent) + " sent" +
           (job.notify_failed > 0 ? ", " + std::to_string(job.notify_failed) + " tr" +
                                        (job.notify_failed == 1 ? "y" : "ies") + " failed (.mlt/" +
                                        job.model + "/notify.log)"
                                  : std::string());
}

// Why the guard stopped the job (guard.stop's line as status.sh gives it), for people.
std::string guard_stop_words(const std::string& record) {
    const auto after = [&record](const std::string& prefix) {
        return record.rfind(prefix, 0) == 0 ? record.substr(prefix.size()) : std::string();
    };
    if (const std::string limit = after("limit "); !limit.empty()) return limit + " reached";
    if (const std::string s = after("silent "); !s.empty())
        return "no new console output for " + s + " s (watch.silent_minutes)";
    if (const std::string s = after("idle "); !s.empty())
        return "every GPU idle for " + s + " s (watch.idle_gpu_minutes)";
    if (const std::string rule = after("rule "); !rule.empty()) {
        const size_t space = rule.find(' ');
        const long index = std::atol(rule.substr(0, space).c_str());
        return "watch.stop_when rule #" + std::to_string(index + 1) + " (line: '" +
               (space == std::string::npos ? std::string() : rule.substr(space + 1)) + "')";
    }
    return record;
}

// What the host's guard of `job` does, for people: nothing when it has no duty and stopped
// nothing.
std::optional<std::string> guard_line(const JobStatus& job) {
    if (!job.guard_stop.empty())
        return "stopped by the host's guard: " + guard_stop_words(job.guard_stop) +
               notify_words(job);
    if (job.guard == GuardState::gone)
        return std::string(
            "guard: NOT RUNNING on the host (its process is gone): nothing there "
            "keeps the run's limit, rules or silence; a --resume of the run starts "
            "it again");
    if (job.guard != GuardState::running) {
        if (!job.notifies) return std::nullopt;
        return "the host's guard" + notify_words(job);
    }
    std::string line = "guard: running on the host";
    if (job.deadline > 0 && job.remote_now > 0)
        line += "; stops the job at " +
                (job.limit.empty() ? std::string("its deadline") : job.limit) +
                (job.deadline > job.remote_now
                     ? " in " + format_duration(static_cast<double>(job.deadline - job.remote_now))
                     : std::string(" now"));
    if (job.silent_s > 0)
        line += "; watches for " + format_duration(static_cast<double>(job.silent_s)) +
                " without console output";
    if (job.idle_s > 0)
        line += "; watches for GPUs idle " + format_duration(static_cast<double>(job.idle_s));
    if (job.rules > 0)
        line += "; decides " + std::to_string(job.rules) + " watch.stop_when rule" +
                (job.rules == 1 ? "" : "s");
    return line + notify_words(job);
}

// The jobs `status` shows: the model's, or every model's when none was named.
std::vector<JobStatus> jobs_of(Remote& remote, const std::string& remote_dir,
                               const std::string& name) {
    return name.empty() ? query_jobs(remote, remote_dir)
                        : JobDir(remote, remote_dir, name).query_jobs();
}

// The marks of watch.on_failure (exclude_host) on the hosts asked, from this machine's history.
void print_marks(const std::vector<std::string>& hosts) {
    std::vector<ExcludedHost> marked;
    for (const auto& bad : excluded_hosts_now())
        if (std::find(hosts.begin(), hosts.end(), bad.host) != hosts.end()) marked.push_back(bad);
    std::fputs(format_excluded(marked).c_str(), stdout);
}

}  // namespace

int run_status(const SshCommandLine& cli, const std::string& model) {
    // The model's own settings (its sidecar, say a remote_dir of its own) as train reads them.
    const ModelSettings m = resolve_model_settings(cli, model, false, true);
    const std::string& name = m.model.name;
    if (m.targets.size() == 1) {
        const Target& target = m.targets.front();
        Session session = Session::open(target.connect);
        SessionRemote remote(session);
        auto jobs = jobs_of(remote, target.remote_dir, name);
        std::fputs(format_jobs(jobs, target.remote_dir, remote.name()).c_str(), stdout);
        if (!jobs.empty()) {
            if (auto line = last_sample_line(local_log_dir(name), jobs.front()))
                std::printf("%s\n", line->c_str());
            if (auto line = guard_line(jobs.front())) std::printf("%s\n", line->c_str());
        }
        print_marks({remote.name()});
        std::fflush(stdout);
        return exit_code::kOk;
    }
    // Several nodes: one table, a row per node; a node that cannot be asked has a row that
    // says why, the others are still shown, and the exit status is that node's error's.
    std::vector<NodeJobs> nodes;
    int code = exit_code::kOk;
    for (const Target& target : m.targets) {
        NodeJobs node;
        node.host = target.connect.host +
                    (target.connect.port ? ":" + std::to_string(target.connect.port) : "");
        try {
            Session session = Session::open(target.connect);
            SessionRemote remote(session);
            node.host = remote.name();
            node.jobs = jobs_of(remote, target.remote_dir, name);
        } catch (const Error& e) {
            if (is_signal(e.kind())) throw;
            node.problem = e.what();
            if (code == exit_code::kOk) code = e.code();
        }
        nodes.push_back(std::move(node));
    }
    std::fputs(format_node_jobs(nodes).c_str(), stdout);
    std::vector<std::string> asked;
    for (const auto& node : nodes) asked.push_back(node.host);
    print_marks(asked);
    // Where a node moved (a standby took a lost rank), every attempt's nodes, from this
    // machine's history: the table shows only the hosts asked.
    for (const auto& node : nodes) {
        if (node.jobs.empty()) continue;
        int skipped = 0;
        const auto attempts =
            node_attempts_of(read_history(history_path(), &skipped), node.jobs.front().run_id);
        if (!attempts.empty()) std::printf("%s\n", format_node_attempts(attempts).c_str());
        break;
    }
    std::fflush(stdout);
    return code;
}

}  // namespace mlt
