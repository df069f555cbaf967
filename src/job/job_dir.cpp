// A model's job dir: the value that reaches it (JobDir), its files (JobPaths), the phases a
// run's lock records, and the errors of a job dir that is no longer the run's.
#include <utility>

#include "mlt/job/job.h"

namespace mlt {

namespace {

constexpr const char* kPhases[] = {"uploading", "starting", "running", "finished", "collected"};

}  // namespace

JobDir::JobDir(Remote& remote, std::string remote_dir, std::string model)
    : remote_(&remote), remote_dir_(std::move(remote_dir)), model_(std::move(model)) {}

JobPaths::JobPaths(const std::string& model) : dir(".mlt/" + model) {
    lock = dir + "/lock";
    run_id = dir + "/run_id";
    run_sh = dir + "/run.sh";
    cmd = dir + "/cmd";
    started = dir + "/started";
    pid = dir + "/pid";
    console_log = dir + "/console.log";
    exit_status = dir + "/exit_status";
    sha256 = dir + "/sha256";
    shutdown_sh = dir + "/shutdown.sh";
    shutdown_started = dir + "/shutdown.started";
    shutdown_pid = dir + "/shutdown.pid";
    shutdown_log = dir + "/shutdown.log";
    shutdown_status = dir + "/shutdown.status";
    batch = dir + "/batch.sh";
    shutdown_batch = dir + "/shutdown.batch.sh";
    log_dir = dir + "/log_dir";
    training = dir + "/training";
    stopped = dir + "/stopped";
    disk_full = dir + "/disk_full";
    downloads = dir + "/download_files";
    restore = dir + "/restore";
    ready = dir + "/ready";
    go = dir + "/go";
    start_tickets = dir + "/start.ticket.";
    start_claimed = dir + "/start.claimed";
    running = dir + "/running";
}

const char* to_string(RunPhase phase) {
    return kPhases[static_cast<int>(phase)];
}

Error foreign_run(const Remote& remote, const std::string& model, const std::string& run_id,
                  const std::string& err) {
    return foreign_run(remote.name(), model, run_id, err);
}

Error foreign_run(const std::string& host, const std::string& model, const std::string& run_id,
                  const std::string& err) {
    // The last line the command said: the one that names the other owner (one line, so
    // that no message carries a line break).
    std::string other = err;
    while (!other.empty() && (other.back() == '\n' || other.back() == ' ')) other.pop_back();
    const size_t last_break = other.find_last_of('\n');
    if (last_break != std::string::npos) other.erase(0, last_break + 1);
    return Error(ErrorKind::conflict,
                 "the job of " + model + " on " + host + " is no longer run '" + run_id +
                     "': " + other + " (another mlt took it over, or stopped it)",
                 "see 'mlt ssh ... status " + model + "'; 'mlt ssh ... download " + model +
                     "' pulls what its job left");
}

Error remote_dir_gone(const std::string& host, const std::string& remote_dir,
                      const std::string& model, const std::string& run_id) {
    const std::string dir = remote_dir.empty() ? "the remote dir" : "the remote dir " + remote_dir;
    return Error(ErrorKind::gone,
                 dir + " on " + host + " holds no job of " + model + " any more (the host was " +
                     "re-imaged or wiped): the job of run '" + run_id +
                     "' is lost there, with what it had not brought home",
                 "continue from the checkpoints that came home with '--restore' (a new run), or "
                 "set fallback_hosts to have the run go on elsewhere");
}

}  // namespace mlt
