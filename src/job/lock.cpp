// The job lock of a run (docs/remote-protocol.md): taking it, recording the run's phase,
// releasing it, taking it back, marking it moved, and a gang's next attempt under it.
#include "job_shell.h"
#include "mlt/config/rule_dialect.h"
#include "mlt/job/job.h"

namespace mlt {

using namespace job_detail;

namespace {

// The idle-GPU rule's lines (none when it is off).
std::string idle_lines(const NewRun& run) {
    if (run.idle_seconds <= 0 || run.sample_every <= 0) return "";
    return "idle=" + std::to_string(run.idle_seconds) + "\n" +
           (run.stop_idle ? "idle_stop=1\n" : "") +
           "idle_below=" + std::to_string(run.idle_below_percent) + "\n" +
           "every=" + std::to_string(run.sample_every) + "\n";
}

// The lock's lines after `phase=`: clean=1, attempt=N, from=HOST, silent=S, silent_stop=1,
// unattended=S, rules=1, idle=S, idle_stop=1, idle_below=P, every=S.
std::string lock_more(const NewRun& run) {
    return std::string(run.clean ? "clean=1\n" : "") +
           (run.attempt > 1 ? "attempt=" + std::to_string(run.attempt) + "\n" : "") +
           (run.came_from.empty() ? "" : "from=" + run.came_from + "\n") +
           (run.silent_seconds > 0 ? "silent=" + std::to_string(run.silent_seconds) + "\n" : "") +
           (run.silent_seconds > 0 && run.stop_silent ? "silent_stop=1\n" : "") +
           (run.unattended_seconds > 0 && !run.shutdown_script.empty()
                ? "unattended=" + std::to_string(run.unattended_seconds) + "\n"
                : "") +
           (run.rules_text.empty() ? "" : "rules=1\n") +
           (run.checkpoints_text.empty() ? "" : "ckpt=1\n") + (run.notify ? "notify=1\n" : "") +
           idle_lines(run);
}

}  // namespace

std::string checkpoints_file_text(const CheckpointSettings& c) {
    return "mlt-checkpoints 1\npattern=" + c.pattern +
           "\nkeep_last=" + std::to_string(c.keep_last) +
           "\nbest_n=" + std::to_string(c.best_metric.empty() ? 0 : c.best_n) +
           "\nbest_mode=" + (c.best_max ? "max" : "min") +
           "\nsettle=" + std::to_string(c.settle_seconds) + "\nmarker=" + c.marker +
           "\nmetric=" + (c.best_metric.empty() ? "" : host_metric_line(c.best_metric)) +
           "\nmetric_file=" + c.best_file + "\n";
}

bool JobDir::acquire_run(const NewRun& run, bool* start_claimed) {
    ShellCommand c = run_command(remote_dir_, model_, run.run_id, true);
    c.set("mlt_owner", run.owner)
        .set("mlt_lock_more", lock_more(run))
        .set("mlt_budget_s", run.budget_seconds ? std::to_string(*run.budget_seconds) : "")
        .set("mlt_limit", run.limit)
        .set("mlt_archive", run.archive)
        .set("mlt_cmd", run.command_text)
        .set("mlt_pending_shutdown", run.unattended_seconds > 0 ? run.shutdown_script : "")
        .set("mlt_rules", run.rules_text)
        .set("mlt_checkpoints", run.checkpoints_text)
        .set("mlt_ticket", run.start_ticket)
        .add(scripts::job_alive)
        .add(scripts::job_acquire)
        .add(scripts::job_tickets);
    const RemoteOutput out =
        run_checked(remote(), c, "taking the job lock", model_, run.run_id, run.wrapper);
    const bool acquired = out.out.find("acquired") != std::string::npos;
    if (start_claimed) *start_claimed = acquired && said_claimed(out.out);
    return acquired;
}

void JobDir::set_run_phase(const std::string& run_id, RunPhase phase) {
    ShellCommand c = run_command(remote_dir_, model_, run_id);
    c.set("mlt_to", to_string(phase)).add(scripts::job_phase);
    run_checked(remote(), c, "recording the run's phase", model_, run_id);
}

void JobDir::release_run(const std::string& run_id) {
    ShellCommand c = run_command(remote_dir_, model_, run_id);
    c.add(scripts::job_release);
    run_checked(remote(), c, "releasing the job lock", model_, run_id);
}

void JobDir::mark_run_moved(const std::string& run_id, const std::string& where) {
    ShellCommand c = run_command(remote_dir_, model_, run_id);
    c.set("mlt_where", where).add(scripts::job_mark_moved);
    run_checked(remote(), c, "marking the job lock as moved", model_, run_id);
}

void JobDir::begin_gang_attempt(const std::string& run_id, int attempt,
                                const std::string& wrapper) {
    ShellCommand c = run_command(remote_dir_, model_, run_id);
    c.number("mlt_attempt", attempt)
        .set("mlt_run_sh", wrapper)
        .add(scripts::job_alive)
        .add(scripts::job_guard_rules)
        .add(scripts::job_checkpoints)
        .add(scripts::job_gang_attempt);
    run_checked(remote(), c, "setting up the gang's next attempt", model_, run_id);
}

void JobDir::retake_run(const std::string& run_id) {
    ShellCommand c = run_command(remote_dir_, model_, run_id);
    c.add(scripts::job_released).add(scripts::job_retake);
    run_checked(remote(), c, "taking the job lock back", model_, run_id);
}

}  // namespace mlt
