// render_dry_run: the plan of a train as plain text, secrets hidden.
#include "mlt/commands/dry_run.h"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <sstream>

#include "mlt/provider/run_rental.h"
#include "mlt/util/shell.h"
#include "mlt/util/text.h"

namespace fs = std::filesystem;

namespace mlt {

namespace {

// One section: its heading on a line of its own, each line under it indented.
class Section {
  public:
    Section(std::ostringstream& out, const std::string& heading) : out_(out) {
        out_ << "\n" << heading << "\n";
    }
    void line(const std::string& text) { out_ << "  " << text << "\n"; }
    // `items`, one line each, or `none` when there are none.
    void lines(const std::vector<std::string>& items, const std::string& none) {
        if (items.empty()) line(none);
        for (const auto& item : items) line(item);
    }

  private:
    std::ostringstream& out_;
};

// The word the settings and OpenSSH write for `checking`.
const char* checking_name(HostKeyChecking checking) {
    if (checking == HostKeyChecking::yes) return "yes";
    return checking == HostKeyChecking::no ? "no" : "accept-new";
}

// " (rank N)" after a heading of a node's own when there are several.
std::string rank_suffix(const DryRun& run, size_t rank) {
    return run.nodes.size() > 1 ? " (rank " + std::to_string(rank) + ")" : std::string();
}

std::string on_off(bool on) {
    return on ? "yes" : "no";
}

void host_section(std::ostringstream& out, const DryRunNode& n, const std::string& suffix) {
    Section s(out, "Host" + suffix);
    const Destination& d = n.destination;
    const ConnectSpec& c = n.target.connect;
    s.line((is_rented(c) ? c.host_origin : c.host + " (" + c.host_origin + ")") + " -> " +
           d.display);
    s.line("key: " + (d.identity.empty()
                          ? std::string("the default keys (~/.ssh/id_*) and ssh-agent")
                          : d.identity + (d.encrypted ? " (encrypted: its passphrase is asked "
                                                        "when the run starts)"
                                                      : "")));
    s.line(std::string("host key checking: ") + checking_name(d.checking) + ", known hosts " +
           d.known_hosts);
    s.line("proxy: " + (d.proxy.empty() ? std::string("none (a direct connection)") : d.proxy));
    s.line("connect timeout: " + std::to_string(d.connect_timeout_s) + " s");
    for (const auto& w : d.config_warnings) s.line("ssh config: " + w);
}

void remote_section(std::ostringstream& out, const DryRunNode& n, const std::string& suffix) {
    Section s(out, "Remote dir" + suffix);
    const TrainPlan& p = n.plan;
    s.line(p.remote_dir);
    s.line("log dir: " + (p.remote_log_dir.empty()
                              ? std::string("where the remote training puts it (remote_log_dir "
                                            "unset)")
                              : p.remote_log_dir));
    s.line("archive: " + p.archive);
}

// "path  size" lines under each remote base, the total in the heading.
void uploads_section(std::ostringstream& out, const DryRunNode& n, const std::string& suffix) {
    const TrainPlan& p = n.plan;
    std::vector<std::pair<std::string, std::string>> rows;
    uint64_t total = 0;
    for (const auto& [base, items] : p.uploads) {
        for (const auto& item : items) {
            std::error_code ec;
            const uintmax_t size = fs::file_size(item.local_path, ec);
            if (!ec) total += size;
            rows.emplace_back(
                base == p.remote_dir ? item.remote_path : base + "/" + item.remote_path,
                ec ? std::string("?") : format_bytes(size));
        }
    }
    Section s(out, "Uploads" + suffix + ": " + std::to_string(rows.size()) + " file(s), " +
                       format_bytes(total) + " (paths relative to the remote dir)");
    if (!p.spec_here)
        s.line("none: --resume picks up the run the remote holds");
    else if (p.resume)
        s.line("--resume: these go up only if the run must upload again");
    if (!n.workspace.empty()) s.line("workspace: " + n.workspace);
    size_t width = 0;
    for (const auto& row : rows) width = std::max(width, row.first.size());
    width = std::min<size_t>(width, 60);
    for (const auto& [path, size] : rows)
        s.line(path + std::string(path.size() < width ? width - path.size() : 0, ' ') + "  " +
               size);
}

void left_out_section(std::ostringstream& out, const DryRunNode& n, const std::string& suffix) {
    Section s(out, "Left out" + suffix);
    std::vector<std::string> lines;
    for (const auto& f : n.left_out) lines.push_back(f.path + ": " + f.reason);
    s.lines(lines, "nothing");
}

void commands_sections(std::ostringstream& out, const TrainPlan& p) {
    const WrapperSpec& w = p.wrapper;
    Section(out, "Startup commands").lines(w.startup_cmds, "none");
    Section train(out, "Train command");
    if (!p.spec_here) {
        train.line("the one of the run the remote holds (--resume)");
    } else {
        std::string command = w.train_cmd;
        for (const auto& a : w.train_args) command += " " + shell_quote(a);
        train.line(command);
        if (w.mltk_train) train.line("(train_cmd is MLTK's trainer)");
        if (w.create_venv) {
            train.line("in a new venv with: " + shell_join(w.venv_packages));
            if (!w.venv_fallback_packages.empty())
                train.line("  or, when those fail: " + shell_join(w.venv_fallback_packages));
        }
    }
    Section(out, "Shutdown commands").lines(p.shutdown_cmds, "none");
}

// Names only: a value may hold a token, and the plan may be pasted anywhere.
void environment_section(std::ostringstream& out, const TrainPlan& p) {
    std::vector<std::string> lines;
    for (const auto& [name, value] : p.environment)
        lines.push_back(name + "=" + (value.empty() ? "(empty)" : "(hidden)"));
    Section(out, "Environment").lines(lines, "nothing set by the settings");
}

void limits_section(std::ostringstream& out, const TrainPlan& p) {
    Section s(out, "Limits");
    s.line("price: " + (p.price_per_hour > 0 ? format_usd(p.price_per_hour) + " per hour"
                                             : std::string("not known (price_per_hour, --price)")));
    s.line("max hours: " + (p.budget.max_hours > 0
                                ? number_text(p.budget.max_hours) + " (then stop, collect, exit 5)"
                                : std::string("none")));
    s.line("max cost: " + (p.budget.max_cost > 0
                               ? format_usd(p.budget.max_cost) + " (then stop, collect, exit 5)"
                               : std::string("none")));
}

std::string minutes_rule(double minutes, bool stop) {
    if (minutes <= 0) return "off";
    return number_text(minutes) + " min, then " + (stop ? "stop the job" : "a warning");
}

void rules_section(std::ostringstream& out, const TrainPlan& p) {
    Section s(out, "Rules");
    for (const StopRule& r : p.stop_when) {
        if (!r.plateau)
            s.line("stop_when: a console line matching /" + r.regex + "/ stops the job");
        else
            s.line("stop_when: plateau of /" + r.regex + "/ (" + (r.maximize ? "max" : "min") +
                   ", patience " + std::to_string(r.patience) + ") stops the job");
    }
    if (p.stop_when.empty()) s.line("stop_when: none");
    s.line("samples of the host: " + (p.watch_every_s > 0
                                          ? "every " + std::to_string(p.watch_every_s) + " s"
                                          : std::string("off")));
    s.line("idle GPU: " + minutes_rule(p.idle_gpu_minutes, p.stop_idle));
    s.line("silent console: " + minutes_rule(p.silent_minutes, p.stop_silent));
    s.line("unattended shutdown: " +
           (p.unattended_shutdown_minutes > 0
                ? number_text(p.unattended_shutdown_minutes) + " min after an end nobody collected"
                : std::string("off")));
}

// "ck/*.pt: the newest 2 and the best 1 (min) stay on both ends, whole after 10 s".
std::string checkpoints_text(const CheckpointSettings& c) {
    if (!c.on()) return "none (nothing deleted)";
    std::string t = c.pattern + ": ";
    if (!c.deletes()) {
        t += "nothing deleted";
    } else {
        t += "the newest " + std::to_string(c.keep_last);
        if (c.best_n > 0 && !c.best_metric.empty())
            t += " and the best " + std::to_string(c.best_n) + " (" + (c.best_max ? "max" : "min") +
                 ")";
        t += " stay on both ends";
    }
    return t + ", whole after " + std::to_string(c.settle_seconds) + " s" +
           (c.marker.empty() ? "" : " or with " + c.marker);
}

void sync_section(std::ostringstream& out, const TrainPlan& p) {
    Section s(out, "Sync");
    s.line("log dir pulled: " + (p.sync_every_s > 0 ? "every " + std::to_string(p.sync_every_s) +
                                                          " s while training, and at the end"
                                                    : std::string("at the end")));
    s.line("checkpoints: " + checkpoints_text(p.checkpoints));
    s.line("download_files: " +
           (p.download_files.empty() ? std::string("none") : shell_join(p.download_files)));
    s.line("results here: " + (p.local_archive.empty() ? p.spec_dir : p.local_archive) + ", " +
           p.local_logs);
    s.line("compression: " + p.compression + ", connections: " +
           (p.transfer_connections > 0 ? std::to_string(p.transfer_connections)
                                       : std::string("auto")));
}

// The first word of a local command: the rest may carry a token.
std::string command_name(const std::string& command) {
    const std::string t = trim(command);
    const size_t blank = t.find_first_of(" \t");
    return blank == std::string::npos ? t : t.substr(0, blank) + " ... (arguments not shown)";
}

void failover_section(std::ostringstream& out, const DryRun& run) {
    const TrainPlan& p = run.nodes.front().plan;
    Section s(out, "Failover");
    s.line("link lost: reconnect for " + std::to_string(p.reconnect_timeout_s) + " s");
    const bool gang = run.nodes.size() > 1;
    const std::string what = gang ? "every node restarts together" : "restart it in place";
    s.line(p.max_restarts == 0 ? std::string("job lost: the run ends (max_restarts 0)")
                               : "job lost: " + what + " up to " + std::to_string(p.max_restarts) +
                                     " time(s) (max_restarts)");
    for (const FailureRule& r : p.on_failure)
        s.line(std::string("on failure: '") + printable(r.regex, 120) + "' -> " +
               failure_action_name(r.then) + (r.builtin ? " (default)" : ""));
    if (!p.failover) s.line("host lost: the run ends (--no-failover)");
    if (gang && p.failover && (!run.fallback_hosts.empty() || !trim(run.provision_cmd).empty()))
        s.line("host lost: a standby host takes its rank, every node starts again together");
    for (const StandbyHost& h : run.fallback_hosts)
        s.line("fallback host: " + h.text +
               (h.price_per_hour ? " (" + format_usd(*h.price_per_hour) + " per hour)" : "") +
               (h.master_addr.empty() ? "" : " (master_addr " + h.master_addr + ")"));
    if (p.failover && !trim(run.provision_cmd).empty())
        s.line("provision_cmd: " + command_name(run.provision_cmd));
    if (p.failover && run.fallback_hosts.empty() && trim(run.provision_cmd).empty())
        s.line(gang ? "host lost: the gang stops (no fallback_hosts, no provision_cmd)"
                    : "host lost: the run ends (no fallback_hosts, no provision_cmd)");
}

void notify_section(std::ostringstream& out, const TrainPlan& p) {
    Section s(out, "Notifications");
    for (const NotifyTarget& t : p.notify)
        s.line(masked_url(t.url) + " (" + notify_format_name(t.format) + ")");
    if (!p.notify_cmd.empty()) s.line("notify_cmd: " + command_name(p.notify_cmd));
    if (p.notify.empty() && p.notify_cmd.empty())
        s.line("none");
    else if (!p.notify.empty())
        s.line(std::string("sent by: ") + (p.notify_from == NotifyFrom::host
                                               ? "the host's guard (notify_from: host)"
                                               : "this mlt only (notify_from: laptop)"));
}

void run_section(std::ostringstream& out, const DryRun& run) {
    const TrainPlan& p = run.nodes.front().plan;
    Section s(out, "Run");
    s.line("--clean " + on_off(p.clean) + ", --force " + on_off(p.force) + ", --resume " +
           on_off(p.resume) + ", --no-wait " + on_off(p.no_wait) + ", --restore " +
           on_off(p.restore));
    if (run.nodes.size() > 1)
        s.line(std::to_string(run.nodes.size()) + " nodes; MASTER_ADDR " +
               (run.master_addr.empty() ? std::string("rank 0's address") : run.master_addr) +
               ", MASTER_PORT " +
               (run.master_port > 0 ? std::to_string(run.master_port)
                                    : std::string("a free port on rank 0")));
    s.line("resume: " + p.resume_line);
    s.line("stop: " + p.stop_line);
}

}  // namespace

std::string render_dry_run(const DryRun& run) {
    std::ostringstream out;
    const TrainPlan& first = run.nodes.front().plan;
    out << "Plan of train " << first.model
        << " (--dry-run: nothing was connected to, nothing was sent)\n";
    for (size_t rank = 0; rank < run.nodes.size(); ++rank) {
        const std::string suffix = rank_suffix(run, rank);
        host_section(out, run.nodes[rank], suffix);
        remote_section(out, run.nodes[rank], suffix);
        uploads_section(out, run.nodes[rank], suffix);
        left_out_section(out, run.nodes[rank], suffix);
    }
    commands_sections(out, first);
    environment_section(out, first);
    limits_section(out, first);
    rules_section(out, first);
    sync_section(out, first);
    failover_section(out, run);
    notify_section(out, first);
    run_section(out, run);
    return out.str();
}

}  // namespace mlt
