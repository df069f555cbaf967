// The state of a remote dir's jobs (status.sh) and how it is shown.
#include "mlt/job/status.h"

#include <algorithm>
#include <climits>
#include <ctime>
#include <sstream>

#include "job_shell.h"
#include "mlt/util/error.h"
#include "mlt/util/text.h"

namespace mlt {

namespace {

long to_long(const std::string& s) {
    // A half-written file reads as "unknown", never as an error.
    return static_cast<long>(parse_decimal(trim(s), 0, LONG_MAX).value_or(0));
}

std::string format_duration(long seconds) {
    if (seconds < 0) seconds = 0;
    char buf[32];
    if (seconds >= 3600)
        std::snprintf(buf, sizeof buf, "%ldh%02ldm", seconds / 3600, seconds % 3600 / 60);
    else
        std::snprintf(buf, sizeof buf, "%ldm%02lds", seconds / 60, seconds % 60);
    return buf;
}

std::string format_time(long epoch) {
    if (epoch <= 0) return "-";
    std::time_t t = epoch;
    std::tm tm{};
    localtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
    return buf;
}

}  // namespace

void validate_model_name(const std::string& name) {
    constexpr std::size_t kMaxName = 200;
    if (name.size() > kMaxName)
        throw usage_error("invalid model name: " + std::to_string(name.size()) +
                              " characters, more than the " + std::to_string(kMaxName) + " allowed",
                          "use a shorter name (it names a remote directory)");
    bool ok = !name.empty() && name[0] != '.' && name[0] != '-';
    for (char c : name)
        ok = ok && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-');
    if (!ok)
        throw usage_error("invalid model name '" + name + "'",
                          "use letters, digits, '.', '_' and '-' (it names a remote directory)");
}

namespace {

// The jobs status.sh reports under `remote_dir` (only `model`'s, or every model's).
std::vector<JobStatus> read_jobs(Remote& remote, const std::string& remote_dir,
                                 const std::string& model) {
    job_detail::ShellCommand command;
    command.path("mlt_rd", remote_dir)
        .set("mlt_model", model)
        .add(scripts::job_alive)
        .add(scripts::job_guard_functions)
        .add(scripts::job_status);
    const RemoteOutput out =
        job_detail::run_or_fail(remote, command, "reading the job state",
                                "check that the remote has a POSIX shell; run with -v");
    std::vector<JobStatus> result;
    std::istringstream lines(out.out);
    std::string line;
    while (std::getline(lines, line)) {
        auto f = split(line, '\t');
        if (f.size() != 23 || f[0] != "job") continue;
        JobStatus job;
        job.model = f[1];
        job.pgid = to_long(f[2]);
        job.started = to_long(f[4]);
        job.remote_now = to_long(f[6]);
        job.locked = f[7] == "1";
        job.run_id = f[8];
        job.phase = f[9];
        job.clean = f[10] == "1";
        job.attempt = static_cast<int>(std::clamp(to_long(f[11]), 1L, 1000000L));
        job.exit_status = recorded_status(trim(f[5]));
        job.moved_to = printable(f[12]);
        job.logged = to_long(f[13]);
        job.deadline = to_long(f[14]);
        job.limit = printable(f[15]);
        job.silent_s = to_long(f[16]);
        job.guard = f[17] == "running" ? GuardState::running
                                       : (f[17] == "gone" ? GuardState::gone : GuardState::none);
        job.guard_stop = printable(f[18]);
        job.idle_s = to_long(f[19]);
        job.sample = f[20];
        job.rules = static_cast<int>(std::clamp(to_long(f[21]), 0L, 100000L));
        if (const auto counts = split(f[22], ' '); counts.size() == 2) {
            job.notify_sent = static_cast<int>(std::clamp(to_long(counts[0]), 0L, 1000000L));
            job.notify_failed = static_cast<int>(std::clamp(to_long(counts[1]), 0L, 1000000L));
            job.notifies = true;
        }
        job.state =
            job_state(job.locked, job.phase, job.pgid, f[3] == "1", job.exit_status.has_value());
        result.push_back(std::move(job));
    }
    return result;
}

}  // namespace

std::vector<JobStatus> JobDir::query_jobs() {
    validate_model_name(model_);
    return read_jobs(*remote_, remote_dir_, model_);
}

std::vector<JobStatus> query_jobs(Remote& remote, const std::string& remote_dir) {
    return read_jobs(remote, remote_dir, "");
}

JobState job_state(bool locked, const std::string& phase, long pgid, bool alive,
                   bool has_exit_status) {
    // What the processes and files show wins over the phase a lock records: an mlt that was
    // cut off or killed never wrote "finished".
    if (alive) return JobState::running;
    if (!locked) {
        if (has_exit_status) return JobState::collected;
        return pgid ? JobState::lost : JobState::aborted;  // `stop` of a job that was gone
    }
    if (has_exit_status) return phase == "collected" ? JobState::collected : JobState::finished;
    if (pgid) return JobState::lost;
    return phase == "uploading" ? JobState::uploading : JobState::starting;
}

namespace {

// The signal that an exit status of 129..159 stands for ("SIGKILL"), or null.
const char* killing_signal(int status) {
    static const char* const kNames[] = {
        nullptr,     "SIGHUP",  "SIGINT",    "SIGQUIT", "SIGILL",   "SIGTRAP", "SIGABRT", "SIGBUS",
        "SIGFPE",    "SIGKILL", "SIGUSR1",   "SIGSEGV", "SIGUSR2",  "SIGPIPE", "SIGALRM", "SIGTERM",
        "SIGSTKFLT", "SIGCHLD", "SIGCONT",   "SIGSTOP", "SIGTSTP",  "SIGTTIN", "SIGTTOU", "SIGURG",
        "SIGXCPU",   "SIGXFSZ", "SIGVTALRM", "SIGPROF", "SIGWINCH", "SIGIO",   "SIGPWR",  "SIGSYS"};
    const int signal = status - 128;
    return signal >= 1 && signal <= 31 ? kNames[signal] : nullptr;
}

}  // namespace

std::optional<int> recorded_status(std::string_view text) {
    const auto status = parse_decimal(text, 0, INT_MAX);
    if (!status) return std::nullopt;
    return static_cast<int>(*status);
}

std::string describe_exit_status(int status, bool by_mlt_stop) {
    std::string text = "exit status " + std::to_string(status);
    if (const char* signal = killing_signal(status)) {
        text += std::string(" (killed by ") + signal;
        if (by_mlt_stop)
            text += ", sent by mlt's stop";
        else if (status == 128 + 9)
            text += "; out of memory? see dmesg on the remote";
        text += ")";
    }
    return text;
}

const char* to_string(JobState state) {
    switch (state) {
        case JobState::uploading:
            return "uploading";
        case JobState::aborted:
            return "aborted";
        case JobState::starting:
            return "starting";
        case JobState::running:
            return "running";
        case JobState::finished:
            return "finished";
        case JobState::lost:
            return "lost";
        case JobState::collected:
            return "collected";
    }
    return "?";
}

namespace {

constexpr char kJobColumns[] = "%-24s %-9s %-16s %-7s %-8s %-19s %-9s %s";

std::string job_header() {
    char line[512];
    std::snprintf(line, sizeof line, kJobColumns, "MODEL", "STATE", "RUN", "ATTEMPT", "PGID",
                  "STARTED", "ELAPSED", "EXIT");
    return line;
}

std::string job_row(const JobStatus& j) {
    const std::string elapsed = j.state == JobState::running && j.started > 0 && j.remote_now > 0
                                    ? format_duration(j.remote_now - j.started)
                                    : "-";
    std::string exit = j.exit_status ? std::to_string(*j.exit_status) : "-";
    if (const char* signal = j.exit_status ? killing_signal(*j.exit_status) : nullptr)
        exit += std::string(" (") + signal + ")";
    // The model (a remote dir's name) and the run id are the remote's words: escaped.
    const std::string model = printable(j.model, 200);
    const std::string run = j.run_id.empty() ? "-" : printable(j.run_id, 100);
    char line[1024];
    std::snprintf(line, sizeof line, kJobColumns, model.c_str(), to_string(j.state), run.c_str(),
                  std::to_string(j.attempt).c_str(), j.pgid ? std::to_string(j.pgid).c_str() : "-",
                  format_time(j.started).c_str(), elapsed.c_str(), exit.c_str());
    return line;
}

}  // namespace

std::string format_jobs(const std::vector<JobStatus>& jobs, const std::string& remote_dir,
                        const std::string& host) {
    if (jobs.empty()) return "no job in " + remote_dir + " on " + host + "\n";
    std::string out = job_header() + "\n";
    for (const auto& j : jobs) out += job_row(j) + "\n";
    return out;
}

std::string format_node_jobs(const std::vector<NodeJobs>& nodes) {
    size_t host_width = 4;
    for (const auto& n : nodes) host_width = std::max(host_width, n.host.size());
    const auto lead = [&](const std::string& rank, const std::string& host) {
        return rank + std::string(rank.size() < 5 ? 5 - rank.size() : 1, ' ') + host +
               std::string(host_width + 1 - host.size(), ' ');
    };
    std::string out = lead("RANK", "HOST") + job_header() + "\n";
    for (size_t i = 0; i < nodes.size(); ++i) {
        const NodeJobs& n = nodes[i];
        const std::string start = lead(std::to_string(i), n.host);
        if (!n.problem.empty())
            out += start + "unreachable: " + printable(n.problem, 2000) + "\n";
        else if (n.jobs.empty())
            out += start + "none\n";
        for (const auto& j : n.jobs) out += start + job_row(j) + "\n";
    }
    return out;
}

}  // namespace mlt
