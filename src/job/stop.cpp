// The stop of a model's job (docs/remote-protocol.md, "Stopping"): every process of it, with
// or without the release of its lock, and the removal of a job's files.
#include "job_shell.h"
#include "mlt/job/job.h"

namespace mlt {

using namespace job_detail;

namespace {

// stop.sh's command: `scoped`, the job files must be run `run_id`'s; `release`, the lock goes
// in the same command.
ShellCommand stop_command(const std::string& remote_dir, const std::string& model,
                          const std::string& run_id, int grace_s, bool scoped, bool release) {
    ShellCommand c = run_command(remote_dir, model, run_id);
    c.number("mlt_grace", grace_s)
        .flag("mlt_scoped", scoped)
        .flag("mlt_and_release", release)
        .add(scripts::job_alive)
        .add(scripts::job_stop_functions)
        .add(scripts::job_stop);
    return c;
}

}  // namespace

bool JobDir::stop_job(int grace_s, const std::string* run_id) {
    const std::string rid = run_id ? *run_id : std::string();
    const RemoteOutput out = run_checked(
        remote(), stop_command(remote_dir_, model_, rid, grace_s, run_id != nullptr, false),
        "stopping the job", model_, rid);
    return out.out.find("stopped") != std::string::npos;
}

StopOutcome JobDir::stop_and_release(int grace_s) {
    const RemoteOutput out =
        run_checked(remote(), stop_command(remote_dir_, model_, "", grace_s, false, true),
                    "stopping the job", model_, "");
    if (out.out.find("stopped") != std::string::npos) return StopOutcome::stopped;
    if (out.out.find("finished") != std::string::npos) return StopOutcome::finished;
    return StopOutcome::none;
}

void JobDir::discard_job() {
    ShellCommand c = job_dir_command(remote_dir_, model_);
    c.add(scripts::job_discard);
    run_or_fail(remote(), c, "discarding the old job");
}

}  // namespace mlt
