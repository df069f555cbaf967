// The remote job protocol (docs/remote-protocol.md): lock with run id and phase, wrapper,
// idempotent start, bounded log follows, stop, detached shutdown.
#include "mlt/job/job.h"

#include <climits>

#include "alive.h"
#include "job_shell.h"
#include "mlt/job/status.h"
#include "mlt/transfer/transfer.h"
#include "mlt/util/bounded.h"
#include "mlt/util/error.h"
#include "mlt/util/shell.h"
#include "mlt/util/text.h"

namespace mlt {

namespace job_detail {

std::string job_status_variables() {
    return "mlt_st_gone=" + std::to_string(kDirGoneStatus) +
           " mlt_st_foreign=" + std::to_string(kForeignRunStatus) +
           " mlt_st_nospace=" + std::to_string(kNoSpaceStatus) + "\n";
}

constexpr const char* kPhases[] = {"uploading", "starting", "running", "finished", "collected"};

// Every job command starts in the remote dir; a missing dir is created only by acquire_run.
std::string in_dir(const std::string& remote_dir, const std::string& command) {
    return "cd " + shell_quote_path(remote_dir) + " && " + command;
}

// `cd DIR && j=.mlt/MODEL && r=RUN` and the functions above: the start of every command
// that acts for one run.
std::string run_command(const std::string& remote_dir, const std::string& model,
                        const std::string& run_id, const std::string& body) {
    // `|| exit`: a multi-line body must not run in the wrong directory. A remote dir that is
    // not there at all is gone (kDirGoneStatus): a run-scoped command comes after its start.
    const std::string dir = shell_quote_path(remote_dir);
    return "cd " + dir + " 2>/dev/null || { [ -e " + dir +
           " ] || { echo 'the remote dir is gone' >&2; exit 80; }; cd " + dir +
           " || exit 1; }\nj=" + shell_quote(JobPaths(model).dir) + "; r=" + shell_quote(run_id) +
           "\n" + job_status_variables() + std::string(scripts::job_run_functions) + body;
}

void check_status(const Remote& remote, const std::string& what, const RemoteOutput& out,
                  const std::string& model, const std::string& run_id) {
    if (out.exit_status == kForeignRunStatus) throw foreign_run(remote, model, run_id, out.err);
    if (out.exit_status == kDirGoneStatus) throw remote_dir_gone(remote.name(), "", model, run_id);
    if (out.exit_status == kNoSpaceStatus)
        throw Error(ErrorKind::remote,
                    "no space left on the remote: " + what + " of " + model + " on " +
                        remote.name() + " failed (" + trim(out.err) + ")",
                    "free space on the remote (df -h there), then run again");
    if (out.exit_status != 0) throw remote_failure(remote, what, out.exit_status, out.err);
}

TaskFiles task_files(const JobPaths& p, Task task) {
    if (task == Task::shutdown)
        return {shell_quote(p.shutdown_log), shell_quote(p.shutdown_pid),
                shell_quote(p.shutdown_status)};
    return {shell_quote(p.console_log), shell_quote(p.pid), shell_quote(p.exit_status)};
}

// Launches a task's script detached (its own session: it survives the connection) unless
// its marker exists, then waits (bounded, 10 s) for its pid file (looking every 10 ms for
// the first half second: a script records it at once, and the start is one round trip). The marker
// is created atomically first; `fresh` runs after it and before the launch (writing the script, so
// a second caller can never rewrite a script that runs), `again` when it existed already.
std::string launch_once(const std::string& marker, const std::string& script, const TaskFiles& f,
                        const std::string& shell, const std::string& fresh,
                        const std::string& again) {
    return "if [ ! -e " + marker +
           " ]; then command -v setsid >/dev/null || { echo 'setsid not found (util-linux)' >&2; "
           "exit 127; }; fi\n"
           "if (set -C; : > " +
           marker + ") 2>/dev/null; then\n  " + fresh + "\n  (setsid " + shell + " " + script +
           " >> " + f.log + " 2>&1 < /dev/null &)\nelse\n  " + again +
           "\nfi\n"
           "t=$(($(date +%s) + 10)); q=50; while [ ! -s " +
           f.pid + " ] && [ ! -e " + f.status +
           " ] && [ \"$(date +%s)\" -le \"$t\" ]; do if [ $q -gt 0 ]; then q=$((q - 1)); "
           "sleep 0.01; else sleep 0.05; fi; done\n"
           "[ -s " +
           f.pid +
           " ] || { echo 'it did not record its process group within 10 s' >&2; exit 1; }\n";
}

}  // namespace job_detail

using namespace job_detail;

namespace {

// Prints a job's result as tagged lines (a half-written file cannot shift one value into
// another's place); runs in the remote dir. read_job_result, and follow_log at a job's end.
std::string job_result_lines(const JobPaths& p) {
    // The first line of each file, read by the shell itself: this runs at every job's end,
    // where each `cat` would be a process more between the end and mlt seeing it.
    std::string o;
    for (const auto& [var, file] :
         std::vector<std::pair<const char*, const std::string*>>{{"mlt_v1", &p.run_id},
                                                                 {"mlt_v2", &p.exit_status},
                                                                 {"mlt_v3", &p.sha256},
                                                                 {"mlt_v4", &p.log_dir},
                                                                 {"mlt_v5", &p.stopped}})
        o += std::string(var) + "=; { IFS= read -r " + var + " < " + shell_quote(*file) +
             "; } 2>/dev/null\n";
    return o +
           "printf 'run=%s\\nexit=%s\\nsha=%s\\nlog=%s\\ntrain=%s\\nstopped=%s\\nfull=%s\\n' "
           "\"$mlt_v1\" \"$mlt_v2\" \"$mlt_v3\" \"$mlt_v4\" \"$([ -e " +
           shell_quote(p.training) + " ] && echo 1)\" \"$mlt_v5\" \"$({ [ -e " +
           shell_quote(p.disk_full) +
           " ] || [ \"$(df -Pk . 2>/dev/null | awk 'NR == 2 { print $4 }')\" "
           "= 0 ]; } && echo 1)\"\n";
}

// The result in job_result_lines' text; other lines are skipped.
JobResult parse_job_result(std::string_view text) {
    JobResult result;
    size_t start = 0;
    while (start < text.size()) {
        size_t nl = text.find('\n', start);
        if (nl == std::string_view::npos) nl = text.size();
        const std::string line(text.substr(start, nl - start));
        start = nl + 1;
        if (line.rfind("run=", 0) == 0) result.run_id = line.substr(4);
        if (line.rfind("sha=", 0) == 0) result.sha256 = line.substr(4);
        if (line.rfind("log=", 0) == 0) result.log_dir = line.substr(4);
        if (line == "train=1") result.training_started = true;
        if (line == "full=1") result.disk_full = true;
        if (line == "released=1") result.released = true;
        if (line == "gone=1") result.lock_gone = true;
        if (line.rfind("stopped=", 0) == 0)
            result.stopped_with = recorded_status(std::string_view(line).substr(8));
        if (line.rfind("exit=", 0) == 0)
            result.exit_status = recorded_status(std::string_view(line).substr(5));
    }
    return result;
}

// A shell test: the lock is gone because a follow of run $r released it (ReleaseAtEnd: it
// lies as `released`), and the job files are still that run's.
constexpr const char* kReleasedByFollow =
    "{ [ ! -e \"$j/lock\" ] && mlt_files_mine && grep -qxF \"run=$r\" \"$j/released\" "
    "2>/dev/null; }";

// What the follow of a run's job does at its end: phase finished, only over phase running.
// A follow that an mlt left behind (killed, or cut off) may still reach the end after a
// newer mlt of the run recorded collected, which it must not undo. The lock is written
// through a temp file of each shell's own ($$): concurrent writers never mix their bytes.
// A lock that another follow of the run released (ReleaseAtEnd: it lies as `released`) is
// said (`gone=1` in the result), for mlt to take it back before it collects.
std::string finished_at_end() {
    return std::string(
               "mlt_gone=\n"
               "if mlt_mine; then\n"
               "  [ \"$(sed -n 's/^phase=//p' \"$j/lock\")\" != running ] || mlt_phase finished\n"
               "elif ") +
           kReleasedByFollow + "; then mlt_gone=1\nelse mlt_foreign; fi\n";
}

// The line before the result a follow prints on stderr at the task's end.
constexpr std::string_view kResultMarker = "mlt-follow-result\n";

// The result after the last kResultMarker line in a follow's stderr (which keeps what came
// before it); none when there is no such line.
std::optional<JobResult> take_follow_result(std::string& err) {
    const std::string marker(kResultMarker);
    size_t at = err.rfind("\n" + marker);
    if (at != std::string::npos)
        ++at;
    else if (err.compare(0, marker.size(), marker) == 0)
        at = 0;
    else
        return std::nullopt;
    JobResult result = parse_job_result(std::string_view(err).substr(at + marker.size()));
    err.resize(at);
    return result;
}

}  // namespace

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

namespace {

// The files of a previous run that a new run moves into previous/, as shell words.
std::string previous_run_words(const JobPaths& p) {
    std::string moved;
    for (const std::string* f : {&p.run_id,           &p.run_sh,       &p.cmd,
                                 &p.started,          &p.pid,          &p.console_log,
                                 &p.exit_status,      &p.sha256,       &p.stopped,
                                 &p.disk_full,        &p.downloads,    &p.shutdown_sh,
                                 &p.shutdown_started, &p.shutdown_pid, &p.shutdown_log,
                                 &p.shutdown_status,  &p.batch,        &p.shutdown_batch,
                                 &p.log_dir,          &p.training,     &p.restore,
                                 &p.start_claimed})
        moved += " " + shell_quote(*f);
    moved += " \"$j\"/started.[0-9]* \"$j\"/gang.[0-9]*";  // the markers of later attempts
    return moved;
}

// Removes every start ticket, then prints "claimed" when a start sent ahead claimed the
// start already, else runs `otherwise` (if any).
std::string void_tickets(const JobPaths& p, const std::string& otherwise) {
    return "rm -f \"$j\"/start.ticket.* || exit 1\n"
           "if [ -e " +
           shell_quote(p.start_claimed) + " ]; then echo claimed\n" +
           (otherwise.empty() ? std::string() : "else " + otherwise + "\n") + "fi\n";
}

// Whether void_tickets printed its "claimed" line in `out`.
bool said_claimed(const std::string& out) {
    return ("\n" + out).find("\nclaimed\n") != std::string::npos;
}

}  // namespace

bool acquire_run(Remote& remote, const std::string& remote_dir, const std::string& model,
                 const NewRun& run, bool* start_claimed) {
    const JobPaths p(model);
    // started= by the remote clock: `status` subtracts it from the remote's `date`.
    const std::string lock_text =
        "printf 'owner=%s\\nstarted=%s\\nrun=%s\\nphase=uploading\\n%s' " + shell_quote(run.owner) +
        " \"$(date +%s)\" \"$r\" " +
        shell_quote(std::string(run.clean ? "clean=1\n" : "") +
                    (run.attempt > 1 ? "attempt=" + std::to_string(run.attempt) + "\n" : "") +
                    (run.came_from.empty() ? "" : "from=" + run.came_from + "\n"));
    const std::string moved = previous_run_words(p);
    const std::string a = shell_quote(run.archive);
    // The lock first (O_EXCL through noclobber: of concurrent launches exactly one wins),
    // then the previous run aside (one mv), then this run's files; run_id last, so that its
    // presence says the rest is done. A retry finds the lock its own and redoes only what is
    // missing, without emptying previous/ a second time: what previous/ holds already stays,
    // and a file of that name still in the job dir is this run's own half-written one, removed.
    // The lock is written whole under a name of its own, then linked into place (atomic,
    // fails when one exists): a full disk leaves no empty lock behind. A job of the previous
    // run that still lives (its group, or a process of its run that left the group) keeps
    // the model, lock or no lock.
    const std::string body =
        std::string(job_detail::kAliveFunction) +
        "if mlt_mine; then :\n"
        "elif mlt_job_alive \"$(cat \"$j/pid\" 2>/dev/null)\" \"$(cat \"$j/run_id\" "
        "2>/dev/null)\" \"$j\"; then echo held; exit 0\n"
        "else\n"
        "  t=\"$j/lock.new.$$\"\n"
        "  if ! (" +
        lock_text +
        " > \"$t\") 2>/dev/null; then rm -f \"$t\"; mlt_nospace; echo \"cannot write $t\" >&2; "
        "exit 1; fi\n"
        "  if ln \"$t\" \"$j/lock\" 2>/dev/null; then rm -f \"$t\"; rm -rf \"$j/previous\" "
        "\"$j\"/*.tmp \"$j/released\" \"$j/retaken\" || exit 1\n"
        "  else rm -f \"$t\"; mlt_mine || { echo held; exit 0; }; fi\n"
        "fi\n"
        "if ! mlt_files_mine; then\n"
        "  mkdir -p \"$j/previous\" || exit 1\n"
        "  set --\n"
        "  for f in" +
        moved +
        "; do if [ ! -e \"$f\" ]; then :; elif [ -e \"$j/previous/${f##*/}\" ]; then rm -f \"$f\" "
        "|| exit 1; else set -- \"$@\" \"$f\"; fi; done\n"
        "  [ $# = 0 ] || mv -f -- \"$@\" \"$j/previous/\" || exit 1\n"
        "  if [ -e " +
        a + " ]; then mv -f " + a +
        " \"$j/previous/\" || exit 1; fi\n"
        "  : > \"$j/console.log\" && cat > \"$j/run.sh.tmp\" && mv -f \"$j/run.sh.tmp\" "
        "\"$j/run.sh\" "
        "&& printf '%s\\n' " +
        shell_quote(run.command_text) +
        " > \"$j/cmd\" && printf '%s\\n' \"$r\" > \"$j/run_id.tmp\" && mv -f \"$j/run_id.tmp\" "
        "\"$j/run_id\" || { mlt_nospace; exit 1; }\n"
        "fi\n" +
        // Every older ticket goes first (start_job_if_current): a start sent ahead before this
        // lock has claimed the start by now, which is said ("claimed": nothing may be uploaded
        // any more), or never will. Without its ticket (a full disk) the start sent ahead
        // with this lock does not start the job; start_job does, after the upload.
        void_tickets(
            p, run.start_ticket.empty()
                   ? std::string()
                   : ": > " + shell_quote(p.start_tickets + run.start_ticket) + " 2>/dev/null") +
        "echo acquired\n";
    const std::string command =
        "mkdir -p " + shell_quote_path(remote_dir) + " || exit 1\n" +
        run_command(remote_dir, model, run.run_id, "mkdir -p \"$j\" || exit 1\n" + body);
    RemoteOutput out = remote.run(command, run.wrapper);
    check_status(remote, "taking the job lock", out, model, run.run_id);
    const bool acquired = out.out.find("acquired") != std::string::npos;
    if (start_claimed) *start_claimed = acquired && said_claimed(out.out);
    return acquired;
}

void set_run_phase(Remote& remote, const std::string& remote_dir, const std::string& model,
                   const std::string& run_id, RunPhase phase) {
    RemoteOutput out = remote.run(
        run_command(remote_dir, model, run_id,
                    std::string("mlt_mine || mlt_foreign\nmlt_phase ") + to_string(phase) + "\n"));
    check_status(remote, "recording the run's phase", out, model, run_id);
}

void release_run(Remote& remote, const std::string& remote_dir, const std::string& model,
                 const std::string& run_id) {
    RemoteOutput out = remote.run(
        run_command(remote_dir, model, run_id, "if mlt_mine; then rm -f \"$j/lock\"; fi\n"));
    check_status(remote, "releasing the job lock", out, model, run_id);
}

void mark_run_moved(Remote& remote, const std::string& remote_dir, const std::string& model,
                    const std::string& run_id, const std::string& where) {
    // The lock rewritten whole under a name of its own, then moved into place.
    const std::string body = "w=" + shell_quote(where) +
                             "\nmlt_mine || exit 0\n"
                             "{ grep -v '^moved=' \"$j/lock\"; printf 'moved=%s\\n' \"$w\"; } > "
                             "\"$j/lock.$$.tmp\" && mv -f \"$j/lock.$$.tmp\" \"$j/lock\" || "
                             "{ rm -f \"$j/lock.$$.tmp\"; mlt_nospace; exit 1; }\n";
    RemoteOutput out = remote.run(run_command(remote_dir, model, run_id, body));
    check_status(remote, "marking the job lock as moved", out, model, run_id);
}

void begin_gang_attempt(Remote& remote, const std::string& remote_dir, const std::string& model,
                        const std::string& run_id, int attempt) {
    const JobPaths p(model);
    std::string state;
    for (const std::string* f :
         {&p.started, &p.pid, &p.exit_status, &p.sha256, &p.stopped, &p.disk_full, &p.downloads,
          &p.training, &p.ready, &p.go, &p.start_claimed, &p.shutdown_started, &p.shutdown_pid,
          &p.shutdown_status})
        state += " " + shell_quote(*f);
    // Once per attempt (its marker): a retry after a lost link finds it and changes nothing.
    const std::string marker = shell_quote(p.dir + "/gang." + std::to_string(attempt));
    const std::string body = std::string(job_detail::kAliveFunction) +
                             "{ mlt_mine && mlt_files_mine; } || mlt_foreign\n"
                             "[ -e " +
                             marker +
                             " ] && exit 0\n"
                             "if mlt_job_alive \"$(cat \"$j/pid\" 2>/dev/null)\" \"$r\" \"$j\"; "
                             "then echo 'the job of the "
                             "attempt before still runs' >&2; exit 1; fi\n"
                             "rm -f" +
                             state + " \"$j\"/started.[0-9]* || exit 1\n: > " + marker +
                             " || { mlt_nospace; exit 1; }\n";
    RemoteOutput out = remote.run(run_command(remote_dir, model, run_id, body));
    check_status(remote, "setting up the gang's next attempt", out, model, run_id);
}

void retake_run(Remote& remote, const std::string& remote_dir, const std::string& model,
                const std::string& run_id) {
    // Only a lock of the run to keep (the run's, one a follow of the run released, one being
    // released): otherwise nothing is written. `retaken` first, which no follow's release
    // passes (release_at_end looks for it after it moved the lock aside); then the lock put
    // back: the released one linked into place (fails when another took its place), a
    // release under way waited for, briefly.
    const std::string released = kReleasedByFollow;
    const std::string body =
        "mlt_releasing() { set -- \"$j\"/lock.release.*; [ -e \"$1\" ]; }\n"
        "if mlt_mine || " +
        released +
        " || mlt_releasing; then\n"
        "  (printf '%s\\n' \"$r\" > \"$j/retaken\") 2>/dev/null || { mlt_nospace; echo \"cannot "
        "write $j/retaken\" >&2; exit 1; }\n"
        "else mlt_foreign; fi\n"
        "n=0\n"
        "until mlt_mine; do\n"
        "  [ $n -lt 20 ] || mlt_foreign\n"
        "  n=$((n + 1))\n"
        "  if " +
        released +
        "; then ln \"$j/released\" \"$j/lock\" 2>/dev/null && rm -f \"$j/released\"\n"
        "  elif mlt_releasing; then sleep 0.05\n"
        "  else mlt_foreign; fi\n"
        "done\n";
    RemoteOutput out = remote.run(run_command(remote_dir, model, run_id, body));
    check_status(remote, "taking the job lock back", out, model, run_id);
}

namespace {

// What start_job runs after the run functions: prints the job's process group.
std::string start_body(const JobPaths& p) {
    const TaskFiles f = task_files(p, Task::job);
    // Only while the run holds the lock: a `stop` meanwhile released it.
    // A run that continues here after its host was lost starts as the attempt its lock
    // records, with one marker line after what the earlier attempts showed.
    const std::string marker_line =
        "if [ -n \"$a\" ]; then { [ -z \"$(tail -c 1 \"$j/console.log\" 2>/dev/null)\" ] || "
        "echo; echo \"==== mlt: attempt $a of run $r (continued on this host: the previous one "
        "was lost) ====\"; } >> \"$j/console.log\" || { mlt_nospace; exit 1; }; fi";
    return "{ mlt_mine && mlt_files_mine; } || mlt_foreign\nmlt_phase starting\n"
           "a=$(sed -n 's/^attempt=//p' \"$j/lock\" 2>/dev/null)\n" +
           launch_once(shell_quote(p.started), shell_quote(p.run_sh), f,
                       "${a:+env MLT_ATTEMPT=\"$a\"} sh", marker_line) +
           "mlt_phase running\ncat " + f.pid + "\n";
}

// The process group start_body printed; throws for anything else.
long started_group(const Remote& remote, RemoteOutput out, const std::string& model,
                   const std::string& run_id) {
    const long pgid = static_cast<long>(parse_decimal(trim(out.out), 1, INT_MAX).value_or(0));
    if (out.exit_status == 0 && pgid <= 0) out.exit_status = 1;
    check_status(remote, "starting the job", out, model, run_id);
    return pgid;
}

// start_job_if_current's command. Without a start or a claim yet, the ticket is claimed only
// when nothing is left to upload; otherwise it goes, and "changed" is printed.
std::string start_if_current_command(const std::string& remote_dir, const std::string& model,
                                     const std::string& run_id, const std::string& ticket,
                                     const std::string& current_test) {
    const JobPaths p(model);
    const std::string claimed = shell_quote(p.start_claimed);
    const std::string mine = shell_quote(p.start_tickets + ticket);
    // The test first, from the login dir, where the upload's bases are relative to.
    return "if " + current_test + "; then mlt_current=1; else mlt_current=; fi\n" +
           run_command(remote_dir, model, run_id,
                       "{ mlt_mine && mlt_files_mine; } || mlt_foreign\n"
                       "if [ ! -e " +
                           shell_quote(p.started) + " ] && [ ! -e " + claimed +
                           " ]; then\n"
                           "  if [ -z \"$mlt_current\" ] || ! mv " +
                           mine + " " + claimed + " 2>/dev/null; then rm -f " + mine +
                           "; echo changed; exit 0; fi\n"
                           "fi\n" +
                           start_body(p));
}

}  // namespace

long start_job(Remote& remote, const std::string& remote_dir, const std::string& model,
               const std::string& run_id) {
    RemoteOutput out =
        remote.run(run_command(remote_dir, model, run_id, start_body(JobPaths(model))));
    return started_group(remote, std::move(out), model, run_id);
}

void start_job_ahead_if_current(Remote& remote, const std::string& remote_dir,
                                const std::string& model, const std::string& run_id,
                                const std::string& ticket, const std::string& current_test) {
    remote.run_ahead(start_if_current_command(remote_dir, model, run_id, ticket, current_test), {});
}

std::optional<long> start_job_if_current(Remote& remote, const std::string& remote_dir,
                                         const std::string& model, const std::string& run_id,
                                         const std::string& ticket,
                                         const std::string& current_test) {
    RemoteOutput out =
        remote.run(start_if_current_command(remote_dir, model, run_id, ticket, current_test));
    if (out.exit_status == 0 && trim(out.out) == "changed") return std::nullopt;
    return started_group(remote, std::move(out), model, run_id);
}

bool void_start_tickets(Remote& remote, const std::string& remote_dir, const std::string& model,
                        const std::string& run_id) {
    const JobPaths p(model);
    RemoteOutput out = remote.run(
        run_command(remote_dir, model, run_id, "mlt_mine || mlt_foreign\n" + void_tickets(p, "")));
    check_status(remote, "looking for a start sent ahead", out, model, run_id);
    return said_claimed(out.out);
}

namespace {

// The stop: TERM to the group and to every process of the run, wait (until a deadline) for
// them to go, then KILL. A wrapper killed by KILL cannot record its status, so the stopper
// does; `stopped` says that mlt's stop ended the job, and with which status. Prints
// "stopped", "finished" (it had ended, its results are not collected) or "none". With
// `release`, the lock is removed in the same command, and only if it still names the run
// that held it when the stop began, never a finished job's (--resume collects it).
std::string stop_script(int grace_s, bool scoped, bool release) {
    const auto wait_up_to = [](int seconds) {
        return "  t=$(($(date +%s) + " + std::to_string(seconds) +
               "))\n"
               "  while mlt_job_alive \"$g\" \"$o\" \"$j\" && [ \"$(date +%s)\" -le \"$t\" ]; do "
               "sleep "
               "0.1; done\n";
    };
    return std::string(scoped ? "mlt_files_mine || mlt_foreign\n" : "") +
           (release ? "h=; if [ -f \"$j/lock\" ]; then h=1; r=$(mlt_lock_run); fi\n" : "") +
           "mlt_release() { " +
           (release ? "if [ -n \"$h\" ] && mlt_mine; then rm -f \"$j/lock\"; fi; " : "") +
           "true; }\n" + std::string(job_detail::kAliveFunction) +
           "g=$(cat \"$j/pid\" 2>/dev/null); o=$(cat \"$j/run_id\" 2>/dev/null)\n"
           "if ! mlt_job_alive \"$g\" \"$o\" \"$j\"; then\n"
           "  if [ -e \"$j/exit_status\" ] && [ -f \"$j/lock\" ] && "
           "[ \"$(sed -n 's/^phase=//p' \"$j/lock\")\" != collected ]; then echo finished; exit 0; "
           "fi\n"
           "  mlt_release; echo none; exit 0\n"
           "fi\n"
           "s=143; mlt_signal TERM \"$g\" \"$o\" \"$j\"\n" +
           wait_up_to(grace_s) +
           "if mlt_job_alive \"$g\" \"$o\" \"$j\"; then\n"
           "  s=137; mlt_signal KILL \"$g\" \"$o\" \"$j\"\n" +
           wait_up_to(5) +
           "fi\n"
           "printf '%s\\n' \"$s\" > \"$j/stopped\"\n"
           "[ -f \"$j/exit_status\" ] || { printf '%s\\n' \"$s\" > \"$j/exit_status.tmp\" && "
           "mv -f \"$j/exit_status.tmp\" \"$j/exit_status\"; }\n"
           "mlt_release; echo stopped\n";
}

}  // namespace

bool stop_job(Remote& remote, const std::string& remote_dir, const std::string& model, int grace_s,
              const std::string* run_id) {
    const std::string rid = run_id ? *run_id : std::string();
    RemoteOutput out = remote.run(
        run_command(remote_dir, model, rid, stop_script(grace_s, run_id != nullptr, false)));
    check_status(remote, "stopping the job", out, model, rid);
    return out.out.find("stopped") != std::string::npos;
}

StopOutcome stop_and_release(Remote& remote, const std::string& remote_dir,
                             const std::string& model, int grace_s) {
    RemoteOutput out =
        remote.run(run_command(remote_dir, model, "", stop_script(grace_s, false, true)));
    check_status(remote, "stopping the job", out, model, "");
    if (out.out.find("stopped") != std::string::npos) return StopOutcome::stopped;
    if (out.out.find("finished") != std::string::npos) return StopOutcome::finished;
    return StopOutcome::none;
}

void discard_job(Remote& remote, const std::string& remote_dir, const std::string& model) {
    RemoteOutput out = remote.run(in_dir(remote_dir, "rm -rf " + shell_quote(JobPaths(model).dir)));
    if (out.exit_status != 0)
        throw remote_failure(remote, "discarding the old job", out.exit_status, out.err);
}

namespace {

// The sampler of a follow (watch.every): one line on stderr, "mlt-sample TIME [gpu=U,USED,TOTAL;
// ...] load=L free=KIB", from the second after the segment's start and then every `every`
// seconds while the task runs, in the follow's own loop (no command of its own): a job that
// ends within a second costs no sample.
std::string sampler(int every) {
    if (every <= 0) return "mlt_sample() { :; }\n";
    return "mlt_sample() { { printf 'mlt-sample %s' \"$1\"\n"
           "  if command -v nvidia-smi >/dev/null 2>&1; then printf ' gpu=%s' \"$(nvidia-smi "
           "--query-gpu=utilization.gpu,memory.used,memory.total --format=csv,noheader,nounits "
           "2>/dev/null | tr -d ' ' | paste -sd ';' -)\"; fi\n"
           "  printf ' load=%s free=%s\\n' \"$(cut -d ' ' -f 1 /proc/loadavg 2>/dev/null)\" "
           "\"$(df -Pk . 2>/dev/null | awk 'NR == 2 { print $4 }')\"; } >&2; w=$(($1 + " +
           std::to_string(every) + ")); }\n";
}

// A BoundedTail for a follow's stderr: each sample line goes to `on_sample` (if any) and is
// not kept, so that what is kept is the follow's own words and result.
BoundedTail follow_stderr(const OutputSink* on_sample) {
    return BoundedTail(kKeptStderr, [on_sample](std::string_view line) {
        static constexpr std::string_view kSample = "mlt-sample ";
        if (line.substr(0, kSample.size()) != kSample) return false;
        if (on_sample && *on_sample) (*on_sample)(line);
        return true;
    });
}

// What a follow of a run's job does at the end, after its result (ReleaseAtEnd): releases
// the lock when nothing is left to collect. After the result, so that a follow whose reader
// is gone (its channel closed) dies on that write first and releases nothing. Never once
// retake_run has left `retaken` (a follow of an earlier connection may still be waiting for
// the job's end): the lock is moved aside first and `retaken` looked for after that, so a
// retake that came meanwhile gets it back. The lock released lies as `released`, which
// names the run: only a retake of that run puts it back.
std::string release_at_end(const ReleaseAtEnd& release) {
    return "if [ -e \"$s\" ] && [ -z \"$mlt_v3\" ] && { [ -z \"$mlt_v4\" ] || [ \"$mlt_v4\" = " +
           shell_quote(release.log_dir) + " ]; } && [ ! -e \"$j/retaken\" ] && mlt_mine && [ \"$(" +
           remote_tree_digest(release.log_dir) + ")\" = " + release.listing_sha256 +
           " ] && mv \"$j/lock\" \"$j/lock.release.$$\" 2>/dev/null; then\n"
           "  if grep -qxF \"run=$r\" \"$j/lock.release.$$\" && [ ! -e \"$j/retaken\" ] && mv -f "
           "\"$j/lock.release.$$\" \"$j/released\" 2>/dev/null; then printf 'released=1\\n' >&2\n"
           "  else ln \"$j/lock.release.$$\" \"$j/lock\" 2>/dev/null; rm -f "
           "\"$j/lock.release.$$\"; fi\n"
           "fi\n";
}

// mlt_nap SECONDS: the follow's wait between two looks. For a job, on the wrapper's lock of
// `running` (flock -s -w), which ends the wait as the job ends: status 1 is the time up (the
// job runs); 0 with no status file, or an error, means the wrapper holds no lock (no flock
// there, an older wrapper, a job dir it cannot write), and the follow sleeps from then on.
std::string nap(const JobPaths& p, Task task) {
    if (task != Task::job) return "mlt_nap() { sleep \"$1\"; }\n";
    // BusyBox's flock has no -w (its usage error would read as the time up): util-linux's
    // answers `-w 0` on /dev/null with 0.
    return "mlt_fl=; [ -z \"$g\" ] || ! command -v flock >/dev/null 2>&1 || ! flock -s -w 0 "
           "/dev/null true 2>/dev/null || mlt_fl=1\n"
           "mlt_nap() {\n"
           "  if [ -z \"$mlt_fl\" ]; then sleep \"$1\"; return; fi\n"
           "  flock -s -w \"$1\" " +
           shell_quote(p.running) +
           " true 2>/dev/null\n"
           "  case $? in 0) [ -e \"$s\" ] || mlt_fl= ;; 1) ;; *) mlt_fl=; sleep \"$1\" ;; esac\n"
           "}\n";
}

// follow_log's command.
std::string follow_command(const std::string& remote_dir, const std::string& model, Task task,
                           const std::string* run_id, uint64_t offset, int seconds,
                           int sample_every, const ReleaseAtEnd* release) {
    const JobPaths p(model);
    const TaskFiles f = task_files(p, task);
    // At the end, after the log's last byte: the result on stderr, and for a run's job its
    // phase, so that collecting it needs no round trip of its own. The lock must still be
    // the run's, as set_run_phase requires.
    const std::string at_end =
        (run_id && task == Task::job ? finished_at_end() : std::string()) + "{ printf '" +
        std::string(kResultMarker.substr(0, kResultMarker.size() - 1)) + "\\n'; " +
        (task == Task::job ? job_result_lines(p)
                           : "printf 'exit=%s\\n' \"$(cat " + f.status + " 2>/dev/null)\"\n") +
        (run_id && task == Task::job ? "[ -z \"$mlt_gone\" ] || printf 'gone=1\\n'\n" : "") +
        "} >&2\n" + (release && run_id && task == Task::job ? release_at_end(*release) : "");
    // Polls the log's size and sends exactly the bytes between the offset and that size, so
    // the remote side knows what it sent: when the task has ended, one last send reaches the
    // end of the log and nothing is left for a catch-up. Exit 0: ended; kSegmentOverStatus:
    // the segment's time is up, by the remote clock (a count of sleeps would stretch under
    // load). From the start of the log it polls every 0.05 s for 2 s, then every 0.2 s: a
    // short task's end is seen sooner, a long one costs no more. Each poll looks at the log
    // and the status file with builtins and one `wc`; the processes (ps) and the clock only
    // every 5th: a task that ends writes its status, and only one killed outright is seen
    // by ps, up to 1 s later (the poll's own processes took CPU from the task it follows).
    const std::string body =
        "mlt_end() {\n" + at_end + "}\n" +
        std::string(run_id ? "mlt_files_mine || mlt_foreign\n" : "") + job_detail::kAliveFunction +
        "l=" + f.log + "; s=" + f.status + "; o=" + std::to_string(offset) + "; g=$(cat " + f.pid +
        " 2>/dev/null)\n"
        "[ -n \"$g\" ] || [ -e \"$s\" ] || { echo 'it has not started' >&2; exit " +
        std::to_string(kNotStartedStatus) +
        "; }\n"
        "mlt_send() { n=$(wc -c < \"$l\" 2>/dev/null) || return 0; n=$((n)); "
        "if [ \"$n\" -gt \"$o\" ]; then tail -c +$((o+1)) \"$l\" | head -c $((n-o)); o=$n; fi; "
        "}\n" +
        sampler(sample_every) + nap(p, task) + "e=$(($(date +%s) + " + std::to_string(seconds) +
        ")); w=$((e - " + std::to_string(seconds) + " + 1)); q=" + (offset == 0 ? "40" : "0") +
        "\n"
        "k=0\n"
        "while :; do\n" +
        std::string(run_id ? "  mlt_files_mine || mlt_foreign\n" : "") +
        "  mlt_send\n"
        "  if [ -e \"$s\" ] || [ -z \"$g\" ] || { [ $k = 0 ] && ! mlt_alive \"$g\"; }; then "
        "mlt_send; mlt_end; exit 0; fi\n"
        "  if [ $k = 0 ]; then\n"
        "    t=$(date +%s); [ \"$t\" -lt \"$w\" ] || mlt_sample \"$t\"\n"
        "    [ \"$t\" -lt \"$e\" ] || exit " +
        std::to_string(kSegmentOverStatus) +
        "\n"
        "  fi\n"
        "  k=$(((k + 1) % 5))\n"
        "  if [ $q -gt 0 ]; then q=$((q - 1)); mlt_nap 0.05; else mlt_nap 0.2; fi\n"
        "done\n";
    return run_command(remote_dir, model, run_id ? *run_id : std::string(), body);
}

}  // namespace

void follow_log_ahead(Remote& remote, const std::string& remote_dir, const std::string& model,
                      Task task, const std::string* run_id, uint64_t offset, int seconds,
                      int sample_every, const ReleaseAtEnd* release) {
    remote.run_ahead(
        follow_command(remote_dir, model, task, run_id, offset, seconds, sample_every, release),
        {});
}

FollowStep follow_log(Remote& remote, const std::string& remote_dir, const std::string& model,
                      Task task, const std::string* run_id, uint64_t offset, int seconds,
                      const OutputSink& sink, int sample_every, const OutputSink* on_sample,
                      const ReleaseAtEnd* release) {
    FollowStep step;
    step.offset = offset;
    BoundedTail said = follow_stderr(on_sample);
    const std::string rid = run_id ? *run_id : std::string();
    int status = remote.stream(
        follow_command(remote_dir, model, task, run_id, offset, seconds, sample_every, release), {},
        [&](std::string_view d) {
            step.offset += d.size();
            sink(d);
        },
        said.sink());
    std::string err = said.str();
    if (status == kForeignRunStatus) throw foreign_run(remote, model, rid, err);
    if (status == kDirGoneStatus) throw remote_dir_gone(remote.name(), remote_dir, model, rid);
    if (status == kSegmentOverStatus) return step;
    if (status != 0) throw remote_failure(remote, "reading the console log", status, err);
    step.ended = true;
    step.result = take_follow_result(err);
    return step;
}

void start_tensorboard(Remote& remote, const std::string& remote_dir, const std::string& model,
                       int port) {
    const JobPaths p(model);
    const std::string log = p.dir + "/tensorboard.log", pid = p.dir + "/tensorboard.pid";
    const std::string script =
        "d=$(cat " + p.log_dir +
        " 2>/dev/null)\n"
        "[ -n \"$d\" ] || { echo 'its job recorded no log dir yet: train it first' >&2; exit 3; }\n"
        "if [ -x .venv/bin/tensorboard ]; then tb=.venv/bin/tensorboard\n"
        "elif command -v tensorboard >/dev/null 2>&1; then tb=tensorboard\n"
        "else echo 'tensorboard is not installed there (not in .venv, not on PATH): install it, "
        "e.g. pip install tensorboard (in the job'\\''s venv: .venv/bin/pip install "
        "tensorboard)' >&2; exit 4; fi\n"
        "mkdir -p " +
        p.dir +
        " || exit 1\n"
        "(exec setsid \"$tb\" --logdir \"$d\" --port " +
        std::to_string(port) + " --host 127.0.0.1 > " + log +
        " 2>&1 < /dev/null) &\n"
        "echo $! > " +
        pid +
        "\n"
        "i=0; while ! grep -q 'http://' " +
        log +
        " 2>/dev/null; do\n"
        "  kill -0 $! 2>/dev/null || { echo 'tensorboard ended at once:' >&2; tail -n 5 " +
        log +
        " >&2; exit 5; }\n"
        "  i=$((i+1)); [ $i -lt 600 ] || { echo 'tensorboard did not serve within 60 s' >&2; "
        "exit 5; }\n"
        "  sleep 0.1\n"
        "done\n";
    const RemoteOutput out = remote.run(in_dir(remote_dir, script));
    if (out.exit_status != 0)
        throw remote_failure(remote, "starting tensorboard for " + model, out.exit_status, out.err,
                             "see docs/usage.md, \"Watching a run\"");
}

void stop_tensorboard(Remote& remote, const std::string& remote_dir, const std::string& model) {
    const std::string pid = JobPaths(model).dir + "/tensorboard.pid";
    remote.run(in_dir(remote_dir, "p=$(cat " + pid +
                                      " 2>/dev/null) && [ -n \"$p\" ] || exit 0\n"
                                      "kill -s TERM -- \"-$p\" 2>/dev/null; i=0\n"
                                      "while kill -s 0 -- \"-$p\" 2>/dev/null && [ $i -lt 50 ]; do "
                                      "sleep 0.1; i=$((i+1)); done\n"
                                      "kill -s KILL -- \"-$p\" 2>/dev/null; rm -f " +
                                      pid + "\n"));
}

FollowStep follow_to_end(Remote& remote, const std::string& remote_dir, const std::string& model,
                         Task task, const std::string* run_id, uint64_t& offset, int seconds,
                         const OutputSink& sink) {
    for (;;) {
        FollowStep step =
            follow_log(remote, remote_dir, model, task, run_id, offset, seconds, sink);
        offset = step.offset;
        if (step.ended) return step;
    }
}

namespace {

// The command of read_log.
std::string read_log_command(const std::string& remote_dir, const std::string& model, Task task,
                             uint64_t offset) {
    const TaskFiles f = task_files(JobPaths(model), task);
    return in_dir(remote_dir, "if [ -e " + f.log + " ]; then tail -c +" +
                                  std::to_string(offset + 1) + " " + f.log + "; fi");
}

}  // namespace

void read_log_ahead_on_guess(Remote& remote, const std::string& remote_dir,
                             const std::string& model, Task task, uint64_t offset) {
    remote.run_ahead_on_guess(read_log_command(remote_dir, model, task, offset), {});
}

uint64_t read_log(Remote& remote, const std::string& remote_dir, const std::string& model,
                  Task task, uint64_t offset, const OutputSink& sink) {
    BoundedTail err;
    uint64_t received = 0;
    int status = remote.stream(
        read_log_command(remote_dir, model, task, offset), {},
        [&](std::string_view d) {
            received += d.size();
            sink(d);
        },
        err.sink());
    if (status != 0) throw remote_failure(remote, "reading the console log", status, err.str());
    return offset + received;
}

JobResult read_job_result(Remote& remote, const std::string& remote_dir, const std::string& model) {
    RemoteOutput out = remote.run(in_dir(remote_dir, job_result_lines(JobPaths(model))));
    if (out.exit_status != 0)
        throw remote_failure(remote, "reading the job result", out.exit_status, out.err);
    return parse_job_result(out.out);
}

bool start_shutdown(Remote& remote, const std::string& remote_dir, const std::string& model,
                    const std::string& run_id, const std::string& script, bool record_collected) {
    const JobPaths p(model);
    const TaskFiles f = task_files(p, Task::shutdown);
    // The script goes up only by the caller that created the marker: no second caller (a
    // retry, another machine's --resume) can rewrite a script that runs.
    const std::string body =
        "mlt_files_mine || mlt_foreign\n" +
        std::string(record_collected ? "mlt_mine || mlt_foreign\nmlt_phase collected\n" : "") +
        launch_once(shell_quote(p.shutdown_started), shell_quote(p.shutdown_sh), f, "sh",
                    "cat > " + shell_quote(p.shutdown_sh) + " || exit 1",
                    "cat > /dev/null; echo again");
    RemoteOutput out = remote.run(run_command(remote_dir, model, run_id, body), script);
    check_status(remote, "starting shutdown_cmds", out, model, run_id);
    return out.out.find("again") == std::string::npos;
}

std::optional<int> read_shutdown_status(Remote& remote, const std::string& remote_dir,
                                        const std::string& model) {
    RemoteOutput out = remote.run(in_dir(
        remote_dir, "cat " + shell_quote(JobPaths(model).shutdown_status) + " 2>/dev/null; true"));
    if (out.exit_status != 0)
        throw remote_failure(remote, "reading the shutdown status", out.exit_status, out.err);
    return recorded_status(trim(out.out));  // half-written: not there yet
}

}  // namespace mlt
