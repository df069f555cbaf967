// The restart of a lost job as the next attempt of its run (docs/remote-protocol.md,
// "Restarting a lost job").
#include <climits>

#include "job_shell.h"
#include "mlt/job/job.h"
#include "mlt/util/error.h"
#include "mlt/util/text.h"

namespace mlt {

using namespace job_detail;

long JobDir::restart_job(const std::string& run_id, int attempt, bool failed) {
    ShellCommand c = run_command(remote_dir_, model_, run_id);
    c.number("mlt_attempt", attempt)
        .flag("mlt_failed", failed)
        .number("mlt_st_not_lost", kNotLostStatus)
        .add(scripts::job_alive)
        .add(scripts::job_launch)
        .add(scripts::job_log_line)
        .add(scripts::job_guard_rules)
        .add(scripts::job_checkpoints)
        .add(scripts::job_restart);
    RemoteOutput out = remote().run(c.text());
    if (out.exit_status == kNotLostStatus)
        throw Error(ErrorKind::conflict,
                    "cannot restart the job of " + model_ + " (run " + run_id + ") on " +
                        remote().name() + " as attempt " + std::to_string(attempt) + ": " +
                        trim(out.err),
                    "see 'mlt ssh ... status " + model_ + "'");
    const long pgid = static_cast<long>(parse_decimal(trim(out.out), 1, INT_MAX).value_or(0));
    if (out.exit_status == 0 && pgid <= 0) out.exit_status = 1;
    check_status(remote(), "restarting the job", out, model_, run_id);
    return pgid;
}

}  // namespace mlt
