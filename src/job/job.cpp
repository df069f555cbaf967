#include "mlt/job/job.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <ctime>

#include "alive.h"
#include "mlt/job/status.h"
#include "mlt/util/error.h"
#include "mlt/util/shell.h"

namespace mlt {

namespace {

// Every job command starts in the remote dir; a missing dir is created only by start_job.
std::string in_dir(const std::string& remote_dir, const std::string& command) {
    return "cd " + shell_quote_path(remote_dir) + " && " + command;
}

}  // namespace

JobPaths::JobPaths(const std::string& model) : dir(".mlt/" + model) {
    lock = dir + "/lock";
    run_sh = dir + "/run.sh";
    pid = dir + "/pid";
    cmd = dir + "/cmd";
    console_log = dir + "/console.log";
    exit_status = dir + "/exit_status";
    sha256 = dir + "/sha256";
}

std::string export_environment(const std::vector<std::pair<std::string, std::string>>& env) {
    std::string o;
    for (const auto& [k, v] : env) o += "export " + k + "=" + shell_double_quote(v) + "\n";
    return o;
}

std::string fill_placeholders(const std::string& command,
                              const std::vector<std::pair<std::string, std::string>>& values) {
    std::string out;
    for (size_t i = 0; i < command.size();) {
        bool replaced = false;
        if (command[i] == '{') {
            for (const auto& [key, value] : values) {
                const std::string token = "{" + key + "}";
                if (command.compare(i, token.size(), token) == 0) {
                    out += shell_quote_path(value);
                    i += token.size();
                    replaced = true;
                    break;
                }
            }
        }
        if (!replaced) out += command[i++];
    }
    return out;
}

std::string make_wrapper_script(const WrapperSpec& s) {
    const JobPaths p(s.model);
    std::string o;
    o += "#!/bin/sh\n# mlt job wrapper for " + s.model + " (generated; docs/remote-protocol.md)\n";
    // setsid made this shell a process-group leader: its pid is the group id to signal.
    o += "echo $$ > " + shell_quote(p.pid) + ".tmp && mv -f " + shell_quote(p.pid) + ".tmp " +
         shell_quote(p.pid) + "\n";
    o += "mlt_finish() {\n"
         "  mlt_status=$1\n"
         "  if [ -f \"$MLT_ARCHIVE\" ]; then\n"
         "    sha256sum \"$MLT_ARCHIVE\" 2>/dev/null | cut -d' ' -f1 > " +
         shell_quote(p.sha256) +
         "\n"
         "  fi\n"
         "  echo \"mlt: job finished with exit status $mlt_status\"\n"
         "  printf '%s\\n' \"$mlt_status\" > " +
         shell_quote(p.exit_status) + ".tmp && mv -f " + shell_quote(p.exit_status) + ".tmp " +
         shell_quote(p.exit_status) +
         "\n"
         "  exit \"$mlt_status\"\n"
         "}\n";
    // A TERM to the group reaches the training command too; the shell waits for it, then
    // records its status instead of dying without a word.
    o += "trap 'mlt_stopped=1' TERM INT HUP\n";
    o += "export MLT_MODEL=" + shell_quote(s.model) + "\n";
    o += "export MLT_SPEC=" + shell_quote(s.spec_file) + "\n";
    o += "export MLT_LOG_DIR=" + shell_quote_path(s.log_dir) + "\n";
    o += "export MLT_ARCHIVE=" + shell_quote(s.archive) + "\n";
    if (s.clean) o += "export MLT_CLEAN=1\n";
    if (s.verbose) o += "export MLT_VERBOSE=1\n";
    for (const auto& [k, v] : s.fixed_environment) o += "export " + k + "=" + shell_quote(v) + "\n";
    o += export_environment(s.environment);
    o += "mkdir -p \"$MLT_LOG_DIR\" || mlt_finish 1\n";
    if (s.create_venv) {
        o += "if [ ! -f .venv/bin/activate ]; then\n"
             "  echo 'mlt: creating .venv'\n"
             "  python3 -m venv .venv || mlt_finish $?\n";
        if (!s.venv_packages.empty())
            o += "  .venv/bin/pip install " + shell_join(s.venv_packages) + " || mlt_finish $?\n";
        o += "fi\n. .venv/bin/activate || mlt_finish $?\n";
    }
    for (const auto& cmd : s.startup_cmds) {
        o += "echo " + shell_quote("mlt: startup: " + cmd) + "\n";
        o += "{ " + cmd + "\n} || mlt_finish $?\n";
    }
    o += "echo " + shell_quote("mlt: training: " + s.train_cmd) + "\n";
    // A subshell, so that an `exit` in train_cmd ends the training, not the wrapper. Startup
    // commands run in the wrapper's shell so that `cd`, `export` and `source` carry over.
    o += "(\n" + s.train_cmd;
    for (const auto& a : s.train_args) o += " " + shell_quote(a);
    o += "\n)\nmlt_finish $?\n";
    return o;
}

bool acquire_lock(Remote& remote, const std::string& remote_dir, const std::string& model,
                  const std::string& owner) {
    const JobPaths p(model);
    const std::string content =
        "owner=" + owner + "\nstarted=" + std::to_string(std::time(nullptr)) + "\n";
    // noclobber makes the redirection an O_EXCL create: exactly one contender wins.
    const std::string cmd =
        "mkdir -p " + shell_quote_path(remote_dir) + " && " +
        in_dir(remote_dir, "mkdir -p " + shell_quote(p.dir) + " && { (set -C; printf %s " +
                               shell_quote(content) + " > " + shell_quote(p.lock) +
                               ") 2>/dev/null && echo acquired || echo held; }");
    RemoteOutput out = remote.run(cmd);
    if (out.exit_status != 0)
        throw remote_failure(remote, "taking the job lock", out.exit_status, out.err);
    return out.out.find("acquired") != std::string::npos;
}

void release_lock(Remote& remote, const std::string& remote_dir, const std::string& model) {
    RemoteOutput out = remote.run(in_dir(remote_dir, "rm -f " + shell_quote(JobPaths(model).lock)));
    if (out.exit_status != 0)
        throw remote_failure(remote, "releasing the job lock", out.exit_status, out.err);
}

long start_job(Remote& remote, const std::string& remote_dir, const std::string& model,
               const std::string& script, const std::string& command_text) {
    const JobPaths p(model);
    // One round trip: write the wrapper, clear old state, launch detached, wait for the pid.
    // The wait is a bounded remote loop (10 s), not a fixed sleep.
    const std::string cmd = in_dir(
        remote_dir, "cat > " + shell_quote(p.run_sh) + ".tmp && mv -f " + shell_quote(p.run_sh) +
                        ".tmp " + shell_quote(p.run_sh) + " && rm -f " + shell_quote(p.pid) + " " +
                        shell_quote(p.exit_status) + " " + shell_quote(p.sha256) +
                        " && printf '%s\\n' " + shell_quote(command_text) + " > " +
                        shell_quote(p.cmd) + " && : > " + shell_quote(p.console_log) +
                        " && command -v setsid >/dev/null || { echo 'setsid not found "
                        "(util-linux)' >&2; exit 127; }"
                        " && (setsid sh " +
                        shell_quote(p.run_sh) + " >> " + shell_quote(p.console_log) +
                        " 2>&1 < /dev/null &) && i=0 && while [ ! -s " + shell_quote(p.pid) +
                        " ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done && cat " +
                        shell_quote(p.pid));
    RemoteOutput out = remote.run(cmd, script);
    long pgid = 0;
    try {
        pgid = out.out.empty() ? 0 : std::stol(out.out);
    } catch (const std::exception&) {
        pgid = 0;  // reported below
    }
    if (out.exit_status != 0 || pgid <= 0)
        throw remote_failure(remote, "starting the job", out.exit_status, out.err);
    return pgid;
}

bool stop_job(Remote& remote, const std::string& remote_dir, const std::string& model,
              int grace_s) {
    const JobPaths p(model);
    const std::string pid = shell_quote(p.pid);
    const std::string es = shell_quote(p.exit_status);
    // TERM the whole group, wait (bounded) for it to go, then KILL. A wrapper killed by
    // KILL cannot record its status, so the stopper does.
    const std::string cmd =
        in_dir(remote_dir,
               std::string(job_detail::kAliveFunction) + "g=$(cat " + pid +
                   " 2>/dev/null); [ -n \"$g\" ] && mlt_alive \"$g\" || { echo none; exit 0; }; "
                   "kill -s TERM -- \"-$g\" 2>/dev/null; i=0; while mlt_alive \"$g\" && [ $i -lt " +
                   std::to_string(grace_s * 10) +
                   " ]; do sleep 0.1; i=$((i+1)); done; "
                   "if mlt_alive \"$g\"; then kill -s KILL -- \"-$g\" 2>/dev/null; s=137; i=0; "
                   "while mlt_alive \"$g\" && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done; "
                   "else s=143; fi; [ -f " +
                   es + " ] || { printf '%s\\n' $s > " + es + ".tmp && mv -f " + es + ".tmp " + es +
                   "; }; echo stopped");
    RemoteOutput out = remote.run(cmd);
    if (out.exit_status != 0)
        throw remote_failure(remote, "stopping the job", out.exit_status, out.err);
    return out.out.find("stopped") != std::string::npos;
}

void discard_job(Remote& remote, const std::string& remote_dir, const std::string& model) {
    RemoteOutput out = remote.run(in_dir(remote_dir, "rm -rf " + shell_quote(JobPaths(model).dir)));
    if (out.exit_status != 0)
        throw remote_failure(remote, "discarding the old job", out.exit_status, out.err);
}

uint64_t read_console(Remote& remote, const std::string& remote_dir, const std::string& model,
                      uint64_t offset, bool follow, const OutputSink& sink) {
    const JobPaths p(model);
    const std::string from = "+" + std::to_string(offset + 1);
    std::string cmd;
    if (follow) {
        // tail -f streams the log while a watcher waits for the job's end: `exit_status`
        // written, or no live process left in the group. (tail's own --pid stays as a
        // backstop; it would wait on a zombie, and containers often reap late.) What tail
        // had not printed when it is stopped comes with the catch-up read below.
        cmd = in_dir(remote_dir,
                     std::string(job_detail::kAliveFunction) + "g=$(cat " + shell_quote(p.pid) +
                         " 2>/dev/null); if [ -n \"$g\" ]; then tail -c " + from +
                         " -f -s 0.2 --pid=\"$g\" " + shell_quote(p.console_log) +
                         " & t=$!; while [ ! -e " + shell_quote(p.exit_status) +
                         " ] && mlt_alive \"$g\"; do sleep 0.2; done; kill $t 2>/dev/null; "
                         "wait $t 2>/dev/null; fi; true");
    } else {
        cmd = in_dir(remote_dir, "tail -c " + from + " " + shell_quote(p.console_log));
    }
    uint64_t received = 0;
    std::string err;
    int status = remote.stream(
        cmd, {},
        [&](std::string_view data) {
            received += data.size();
            sink(data);
        },
        [&](std::string_view data) { err.append(data); });
    if (status != 0) throw remote_failure(remote, "reading the console log", status, err);
    if (follow) return read_console(remote, remote_dir, model, offset + received, false, sink);
    return offset + received;
}

std::pair<int, std::string> read_job_result(Remote& remote, const std::string& remote_dir,
                                            const std::string& model) {
    const JobPaths p(model);
    RemoteOutput out = remote.run(
        in_dir(remote_dir, "cat " + shell_quote(p.exit_status) + " 2>/dev/null; echo; cat " +
                               shell_quote(p.sha256) + " 2>/dev/null; true"));
    if (out.exit_status != 0)
        throw remote_failure(remote, "reading the job result", out.exit_status, out.err);
    auto nl = out.out.find('\n');
    std::string status_text = out.out.substr(0, nl);
    std::string rest = nl == std::string::npos ? "" : out.out.substr(nl + 1);
    // exit_status ends with its own newline, then our echo: skip empty lines.
    while (!rest.empty() && rest[0] == '\n') rest.erase(0, 1);
    std::string sha = rest.substr(0, rest.find('\n'));
    int status = -1;
    try {
        if (!status_text.empty()) status = std::stoi(status_text);
    } catch (const std::exception&) {
        status = -1;  // half-written: treated as no status
    }
    return {status, sha};
}

}  // namespace mlt
