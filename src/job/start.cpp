// The start of a run's job (docs/remote-protocol.md): at most once per run, from its run.sh,
// directly or sent ahead with the lock on the ticket that lock wrote, and the voiding of
// those tickets.
#include <climits>

#include "job_shell.h"
#include "mlt/job/job.h"
#include "mlt/util/text.h"

namespace mlt {

using namespace job_detail;

namespace {

// start.sh's command without its start: the libraries it needs added.
ShellCommand start_command(const std::string& remote_dir, const std::string& model,
                           const std::string& run_id) {
    ShellCommand c = run_command(remote_dir, model, run_id);
    c.add(scripts::job_launch).add(scripts::job_log_line);
    return c;
}

// The process group start.sh printed; throws for anything else.
long started_group(const Remote& remote, RemoteOutput out, const std::string& model,
                   const std::string& run_id) {
    const long pgid = static_cast<long>(parse_decimal(trim(out.out), 1, INT_MAX).value_or(0));
    if (out.exit_status == 0 && pgid <= 0) out.exit_status = 1;
    check_status(remote, "starting the job", out, model, run_id);
    return pgid;
}

// start_job_if_current's command: the upload's test first, from the login dir where the
// upload's bases are relative to; then the claim of the ticket, then the start.
std::string start_if_current_command(const std::string& remote_dir, const std::string& model,
                                     const std::string& run_id, const std::string& ticket,
                                     const std::string& current_test) {
    ShellCommand c;
    c.set("mlt_current_test", current_test)
        .add(scripts::job_start_test)
        .add(start_command(remote_dir, model, run_id).text())
        .set("mlt_ticket", ticket)
        .add(scripts::job_start_claim)
        .add(scripts::job_start);
    return c.text();
}

}  // namespace

long JobDir::start_job(const std::string& run_id) {
    ShellCommand c = start_command(remote_dir_, model_, run_id);
    c.add(scripts::job_start);
    return started_group(remote(), remote().run(c.text()), model_, run_id);
}

void JobDir::start_job_ahead_if_current(const std::string& run_id, const std::string& ticket,
                                        const std::string& current_test) {
    remote().run_ahead(start_if_current_command(remote_dir_, model_, run_id, ticket, current_test),
                       {});
}

std::optional<long> JobDir::start_job_if_current(const std::string& run_id,
                                                 const std::string& ticket,
                                                 const std::string& current_test) {
    RemoteOutput out =
        remote().run(start_if_current_command(remote_dir_, model_, run_id, ticket, current_test));
    if (out.exit_status == 0 && trim(out.out) == "changed") return std::nullopt;
    return started_group(remote(), std::move(out), model_, run_id);
}

bool JobDir::void_start_tickets(const std::string& run_id) {
    ShellCommand c = run_command(remote_dir_, model_, run_id);
    c.set("mlt_ticket", "").add(scripts::job_tickets);
    return said_claimed(
        run_checked(remote(), c, "looking for a start sent ahead", model_, run_id).out);
}

}  // namespace mlt
