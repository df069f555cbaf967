// The restart of a lost job as the next attempt of its run (docs/remote-protocol.md,
// "Restarting a lost job").
#include <climits>

#include "alive.h"
#include "job_shell.h"
#include "mlt/job/job.h"
#include "mlt/util/error.h"
#include "mlt/util/shell.h"
#include "mlt/util/text.h"

namespace mlt {

using namespace job_detail;

namespace {

// The run's attempt as its lock records it (1 without an `attempt=` line), and whether the
// job is lost: a process group recorded and gone, no exit status, results not collected,
// no shutdown_cmds started, and the attempt before `attempt`. `mlt_why` says why it is not.
std::string lost_functions(int attempt) {
    return std::string(job_detail::kAliveFunction) +
           "mlt_attempt() { a=$(sed -n 's/^attempt=//p' \"$j/lock\" 2>/dev/null); echo "
           "\"${a:-1}\"; }\n"
           "mlt_why() {\n"
           "  g=$(cat \"$j/pid\" 2>/dev/null)\n"
           "  if [ -e \"$j/exit_status\" ]; then echo \"it ended with exit status $(cat "
           "\"$j/exit_status\")\"\n"
           "  elif [ -z \"$g\" ]; then echo 'it has not started'\n"
           "  elif mlt_job_alive \"$g\" \"$r\" \"$j\"; then echo 'it is running'\n"
           "  elif [ -e \"$j/shutdown.started\" ] || [ \"$(sed -n 's/^phase=//p' \"$j/lock\")\" = "
           "collected ]; then echo 'its results were collected'\n"
           "  elif [ \"$(mlt_attempt)\" != " +
           std::to_string(attempt - 1) +
           " ]; then echo \"it is attempt $(mlt_attempt)\"\n"
           "  fi\n"
           "}\n";
}

}  // namespace

long restart_job(Remote& remote, const std::string& remote_dir, const std::string& model,
                 const std::string& run_id, int attempt) {
    const JobPaths p(model);
    const TaskFiles f = task_files(p, Task::job);
    const std::string n = std::to_string(attempt);
    const std::string marker = "\"$j/started." + n + "\"";
    // The first caller (the marker, created atomically) sets the attempt up: the old pid
    // removed, the marker line in the console log, attempt=N in the lock; a second one
    // (a retry, a concurrent --resume) waits for that and then for the job's process group.
    const std::string fresh =
        "rm -f \"$j/pid\" \"$j/training\" \"$j/disk_full\" || exit 1\n"
        "  { [ -z \"$(tail -c 1 \"$j/console.log\" 2>/dev/null)\" ] || echo; echo \"==== mlt: "
        "attempt " +
        n +
        " of run $r (the job was lost) ====\"; } >> \"$j/console.log\" || { mlt_nospace; exit 1; "
        "}\n"
        "  { sed '/^attempt=/d' \"$j/lock\" && echo attempt=" +
        n +
        "; } > \"$j/lock.$$.tmp\" && mv -f \"$j/lock.$$.tmp\" \"$j/lock\" || { mlt_nospace; exit "
        "1; }\n"
        "  mlt_phase starting";
    const std::string again = "t=$(($(date +%s) + 10)); while [ \"$(mlt_attempt)\" != " + n +
                              " ] && [ \"$(date +%s)\" -le \"$t\" ]; do sleep 0.05; done";
    const std::string body = "{ mlt_mine && mlt_files_mine; } || mlt_foreign\n" +
                             lost_functions(attempt) + "if [ ! -e " + marker +
                             " ] && [ -n \"$(mlt_why)\" ] && [ ! -e " + marker +
                             " ]; then\n"
                             "  echo \"the job is not lost: $(mlt_why)\" >&2; exit " +
                             std::to_string(kNotLostStatus) + "\nfi\n" +
                             launch_once(marker, shell_quote(p.run_sh), f,
                                         "env MLT_ATTEMPT=" + n + " sh", fresh, again) +
                             "mlt_phase running\ncat " + f.pid + "\n";
    RemoteOutput out = remote.run(run_command(remote_dir, model, run_id, body));
    if (out.exit_status == kNotLostStatus)
        throw Error(ErrorKind::conflict,
                    "cannot restart the job of " + model + " (run " + run_id + ") on " +
                        remote.name() + " as attempt " + n + ": " + trim(out.err),
                    "see 'mlt ssh ... status " + model + "'");
    const long pgid = static_cast<long>(parse_decimal(trim(out.out), 1, INT_MAX).value_or(0));
    if (out.exit_status == 0 && pgid <= 0) out.exit_status = 1;
    check_status(remote, "restarting the job", out, model, run_id);
    return pgid;
}

}  // namespace mlt
