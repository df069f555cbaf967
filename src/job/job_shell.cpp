// How the job layer's remote commands are assembled (job_shell.h), and what their exit
// statuses mean.
#include "job_shell.h"

#include "mlt/job/status.h"
#include "mlt/util/error.h"
#include "mlt/util/shell.h"
#include "mlt/util/text.h"

namespace mlt::job_detail {

ShellCommand& ShellCommand::set(std::string_view name, std::string_view value) {
    text_ += shell_assignment(name, shell_quote(value));
    return *this;
}

ShellCommand& ShellCommand::path(std::string_view name, std::string_view remote_path) {
    text_ += shell_assignment(name, shell_quote_path(remote_path));
    return *this;
}

ShellCommand& ShellCommand::number(std::string_view name, long long value) {
    text_ += shell_assignment(name, std::to_string(value));
    return *this;
}

ShellCommand& ShellCommand::flag(std::string_view name, bool on) {
    text_ += shell_assignment(name, on ? "1" : "");
    return *this;
}

ShellCommand& ShellCommand::add(std::string_view script) {
    text_.append(script);
    if (!script.empty() && script.back() != '\n') text_ += '\n';
    return *this;
}

ShellCommand remote_dir_command(const std::string& remote_dir) {
    ShellCommand c;
    c.path("mlt_rd", remote_dir).add(scripts::job_enter);
    return c;
}

ShellCommand job_dir_command(const std::string& remote_dir, const std::string& model) {
    ShellCommand c = remote_dir_command(remote_dir);
    c.set("j", JobPaths(model).dir);
    return c;
}

ShellCommand run_command(const std::string& remote_dir, const std::string& model,
                         const std::string& run_id, bool create_dir) {
    ShellCommand c;
    c.path("mlt_rd", remote_dir)
        .set("j", JobPaths(model).dir)
        .set("r", run_id)
        .number("mlt_st_gone", kDirGoneStatus)
        .number("mlt_st_foreign", kForeignRunStatus)
        .number("mlt_st_nospace", kNoSpaceStatus);
    if (create_dir) c.add(scripts::job_make_dir);
    c.add(scripts::job_enter_run).add(scripts::job_run_functions);
    return c;
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

RemoteOutput run_checked(Remote& remote, const ShellCommand& command, const std::string& what,
                         const std::string& model, const std::string& run_id,
                         std::string_view input) {
    RemoteOutput out = remote.run(command.text(), input);
    check_status(remote, what, out, model, run_id);
    return out;
}

RemoteOutput run_or_fail(Remote& remote, const ShellCommand& command, const std::string& what,
                         const std::string& hint) {
    RemoteOutput out = remote.run(command.text());
    if (out.exit_status != 0) throw remote_failure(remote, what, out.exit_status, out.err, hint);
    return out;
}

bool said_claimed(const std::string& out) {
    return ("\n" + out).find("\nclaimed\n") != std::string::npos;
}

TaskFiles task_files(const JobPaths& p, Task task) {
    if (task == Task::shutdown) return {p.shutdown_log, p.shutdown_pid, p.shutdown_status};
    return {p.console_log, p.pid, p.exit_status};
}

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
        if (line.rfind("guard=", 0) == 0) result.guard_stop = line.substr(6);
        if (line == "train=1") result.training_started = true;
        if (line == "full=1") result.disk_full = true;
        if (line == "released=1") result.released = true;
        if (line == "gone=1") result.lock_gone = true;
        if (line == "unattended=1") result.shutdown_unattended = true;
        if (line == "notify=1") result.host_notifies = true;
        if (line.rfind("stopped=", 0) == 0)
            result.stopped_with = recorded_status(std::string_view(line).substr(8));
        if (line.rfind("exit=", 0) == 0)
            result.exit_status = recorded_status(std::string_view(line).substr(5));
    }
    return result;
}

}  // namespace mlt::job_detail
