// `doctor`'s judgement: doctor.sh's facts read, and every fact of the host and the link made a
// line that says ok, warn or FAIL and what to do.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "mlt/commands/doctor.h"
#include "mlt/util/error.h"
#include "mlt/util/text.h"

namespace mlt {

namespace {

// A login shell that costs more than this per command is worth a warning: every remote
// command of a run pays it (a train runs dozens, a transfer of ranges one per 16 of them).
constexpr double kSlowStartup = 0.3;
// Free space in the remote dir under this is a warning (a venv with torch alone takes about
// 5 GiB), under kFullKib or kFullShare of the disk a failure.
constexpr uint64_t kLowKib = 10ull * 1024 * 1024;
constexpr uint64_t kFullKib = 100ull * 1024;
constexpr double kFullShare = 0.01;
// A clock further off than this makes the times of status and the logs misleading.
constexpr double kClockSkewS = 5;
// Throughput under this either way is worth a warning (bytes/s).
constexpr double kSlowRate = 1e6;

DoctorCheck ok(std::string what, std::string found) {
    return {CheckLevel::ok, std::move(what), std::move(found), {}};
}
DoctorCheck warn(std::string what, std::string found, std::string fix) {
    return {CheckLevel::warn, std::move(what), std::move(found), std::move(fix)};
}
DoctorCheck fail(std::string what, std::string found, std::string fix) {
    return {CheckLevel::fail, std::move(what), std::move(found), std::move(fix)};
}

// "0.52 s" with two decimals (number_text would round 0.004 to 0).
std::string seconds_text(double s) {
    char text[32];
    std::snprintf(text, sizeof text, s < 0.1 ? "%.3f s" : "%.2f s", s);
    return text;
}

// `path` with the remote home shown as `~`.
std::string tilde(const std::string& path, const std::string& home) {
    if (home.size() > 1 && path.rfind(home + "/", 0) == 0) return "~" + path.substr(home.size());
    return path;
}

std::string tool_path(const HostFacts& host, const std::string& name) {
    for (const auto& [tool, path] : host.tools)
        if (tool == name) return path;
    return {};
}

// The tools every train runs, and the package that brings each (Debian/Ubuntu names).
struct Required {
    const char* name;
    const char* use;
    const char* package;
};
constexpr Required kRequired[] = {
    {"sh", "runs every remote command of mlt", "dash (or bash)"},
    {"tar", "packs and unpacks the uploads and downloads", "tar"},
    {"sha256sum", "checks every file moved", "coreutils"},
    {"awk", "reads the job's state and the GPU samples", "mawk (or gawk)"},
    {"setsid", "starts the job apart from the connection", "util-linux"},
};

DoctorCheck required_tool(const HostFacts& host, const Required& tool) {
    const std::string path = tool_path(host, tool.name);
    if (!path.empty()) return ok(tool.name, path);
    return fail(
        tool.name,
        std::string("not found in the PATH of the remote commands; train needs it: ") + tool.use,
        std::string("install ") + tool.package +
            " on the host (apt-get install, or the distribution's equivalent), or put it on "
            "the PATH that ~/.bashrc sets");
}

// flock is used where the host has it (wrapper.sh, nap_on_job.sh): without it a train still
// runs, and its log follow checks the job every second instead of waking when it ends.
DoctorCheck flock_check(const HostFacts& host) {
    const std::string path = tool_path(host, "flock");
    if (!path.empty()) return ok("flock", path);
    return warn("flock",
                "not found (train runs without it; the log follow then checks every second "
                "instead of waking when the job ends)",
                "install util-linux on the host");
}

DoctorCheck python_check(const HostFacts& host, const DoctorNeeds& needs) {
    std::string path = tool_path(host, "python3");
    if (path.empty() && !host.login_python.empty())
        path = host.login_python + " (on a login shell's PATH only, where the training runs)";
    const char* why = "create_venv is on (train_cmd is MLTK's, or the setting): train makes a venv";
    if (path.empty()) {
        if (!needs.venv)
            return warn("python3", "not found", "only a train_cmd that runs Python needs it");
        return fail("python3", std::string("not found; ") + why,
                    "install python3 and python3-venv on the host, or set create_venv: false");
    }
    const std::string found = path + (host.python_version.empty() ? "" : " " + host.python_version);
    if (host.python_status == 0) return ok("python3", found + ", venv module present");
    if (!needs.venv) return ok("python3", found + ", no venv module (create_venv is off)");
    return fail("python3",
                found + ", but `python3 -m venv` cannot work (no venv or ensurepip); " + why,
                "install python3-venv (Debian/Ubuntu; python3.X-venv for the host's X), or set "
                "create_venv: false");
}

DoctorCheck fetcher_check(const HostFacts& host) {
    std::string found;
    for (const char* name : {"curl", "wget"})
        if (const std::string path = tool_path(host, name); !path.empty())
            found += (found.empty() ? "" : ", ") + path;
    if (!found.empty()) return ok("curl or wget", found);
    return warn("curl or wget",
                "neither found (nice to have: only notifications sent from the host need one)",
                "install curl if you use notify targets");
}

// "NVIDIA H200 (140.4 GiB)" for a "name, MiB, driver" row; empty when it is none.
std::string gpu_words(const std::vector<std::string>& row) {
    if (row.size() < 3) return {};
    const auto mib = parse_decimal(trim(row[1]), 0, 1ll << 40);
    return trim(row[0]) +
           (mib ? " (" + format_bytes(static_cast<uint64_t>(*mib) * 1024 * 1024) + ")" : "");
}

DoctorCheck gpu_check(const HostFacts& host) {
    if (!host.gpu_status)
        return warn("GPU", "no GPU found (no nvidia-smi)",
                    "fine for a CPU training; for an NVIDIA GPU, install its driver");
    const std::string first = host.gpu_rows.empty() ? std::string() : host.gpu_rows.front();
    if (*host.gpu_status != 0 || host.gpu_rows.empty() || split(first, ',').size() < 3)
        return warn("GPU",
                    "nvidia-smi failed (exit " + std::to_string(*host.gpu_status) + ")" +
                        (first.empty() ? "" : ": " + printable(first, 200)),
                    "the driver is not loaded or does not match the kernel: run nvidia-smi on the "
                    "host, reboot or reinstall the driver");
    std::string driver = trim(split(first, ',')[2]);
    std::string gpus;
    for (size_t i = 0; i < host.gpu_rows.size(); ++i)
        gpus +=
            (i ? ", " : "") + std::to_string(i) + ": " + gpu_words(split(host.gpu_rows[i], ','));
    return ok("GPU", "driver " + driver + ", CUDA " + (host.cuda.empty() ? "?" : host.cuda) + "; " +
                         std::to_string(host.gpu_rows.size()) + " GPU" +
                         (host.gpu_rows.size() == 1 ? "" : "s") + ": " + gpus);
}

DoctorCheck disk_check(const HostFacts& host, const DoctorNeeds& needs) {
    std::string where = host.disk_dir_absolute.empty() ? needs.remote_dir : host.disk_dir_absolute;
    if (!host.disk_dir.empty() && host.disk_dir != needs.remote_dir)
        where += " (the remote dir " + needs.remote_dir + " does not exist yet; train makes it)";
    const std::string fix_full =
        "free space there, or give another remote dir (-h HOST/DIR, ssh.remote_dir)";
    const bool known = host.disk_free_kib && host.disk_total_kib;
    const uint64_t free_kib = known ? *host.disk_free_kib : 0;
    const std::string space = known ? format_bytes(free_kib * 1024) + " free of " +
                                          format_bytes(*host.disk_total_kib * 1024)
                                    : std::string();
    if (host.writable == false)
        return fail("disk",
                    where + ": cannot write there (read-only, no permission, or full)" +
                        (known ? "; " + space : std::string()),
                    fix_full);
    if (!known)
        return warn("disk", where + ": free space unknown (no df)", "check it by hand: df -h DIR");
    const std::string found = where + ": " + space;
    if (free_kib < kFullKib ||
        static_cast<double>(free_kib) < kFullShare * static_cast<double>(*host.disk_total_kib))
        return fail("disk", found + " (full)", fix_full);
    if (free_kib < kLowKib)
        return warn(
            "disk", found,
            "a venv with torch takes about 5 GiB, the data and checkpoints more: " + fix_full);
    return ok("disk", found);
}

DoctorCheck host_key_check(const LoginFacts& login) {
    const std::string key = login.key_type + " " + login.fingerprint;
    const std::string& file = login.known_hosts;
    if (login.host_key == "known") return ok("host key", "known (" + key + ", in " + file + ")");
    if (login.host_key == "recorded")
        return ok("host key", "learned now (" + key + "), recorded in " + file);
    if (login.host_key == "unverified")
        return warn("host key", "not verified and not recorded (" + key + ")",
                    "connect once with -o StrictHostKeyChecking=accept-new to record it");
    return warn("host key", "CHANGED and accepted anyway (" + key + "; StrictHostKeyChecking no)",
                "if the host was replaced, remove its old line from " + file +
                    " (ssh-keygen -R); otherwise someone may be in the middle");
}

// What a remote command costs before it runs: the exec of `true` less a round trip for the
// channel's open and one for the exec.
double startup_s(const LinkFacts& link) {
    return std::max(0.0, link.command_s - 2 * std::max(0.0, link.round_trip_s));
}

DoctorCheck shell_check(const LinkFacts& link, const HostFacts& host) {
    const std::string shell = host.shell.empty() ? std::string("the login shell") : host.shell;
    if (link.command_s < 0) return warn("login shell", shell + ": not timed", "");
    const double startup = startup_s(link);
    std::string files;
    // "~/.bashrc", "~/.bashrc or /etc/bash.bashrc", "A, B or C".
    for (size_t i = 0; i < host.startup_files.size(); ++i)
        files += (i == 0                               ? ""
                  : i + 1 == host.startup_files.size() ? " or "
                                                       : ", ") +
                 tilde(host.startup_files[i], host.home);
    const std::string found = shell + ", " + seconds_text(startup) + " per command before it runs";
    if (startup <= kSlowStartup)
        return ok("login shell", found + (files.empty() ? "" : " (startup files: " + files + ")"));
    if (files.empty())
        return warn("login shell", found + "; it reads no startup file that mlt knows of",
                    "every remote command pays it: look at what sshd runs at login (PAM, "
                    "motd, ForceCommand)");
    return warn(
        "login shell", found + ", in " + files + " (over " + seconds_text(kSlowStartup) + ")",
        "every remote command pays it: move slow setup (conda, pyenv, nvm) out of " + files +
            ", or behind `case $- in *i*)`, to ~/.profile, which only the training's "
            "login shell reads");
}

// Whether a big transfer's channels beside the control shell's log in, and what that costs.
DoctorCheck listener_check(const LinkFacts& link) {
    if (link.listener)
        return ok("channels",
                  "a listener on the host (python3) runs a big transfer's channels "
                  "without a login");
    if (link.command_s < 0) return ok("channels", "each of a big transfer's channels logs in");
    const double startup = startup_s(link);
    const std::string found =
        "each of a big transfer's channels logs in (" + seconds_text(startup) + ")";
    if (startup <= kSlowStartup) return ok("channels", found);
    return warn("channels", found + ": no python3 on the host, or sshd forwards no unix sockets",
                "install python3 on the host, or let sshd forward (AllowStreamLocalForwarding "
                "yes): mlt then runs them without a login");
}

DoctorCheck clock_check(const LinkFacts& link) {
    if (!link.clock_offset_s) return warn("clock", "the host's time could not be read", "");
    const double off = *link.clock_offset_s;
    char text[64];
    std::snprintf(text, sizeof text, "the host's clock is %.1f s %s this machine's", std::fabs(off),
                  off >= 0 ? "ahead of" : "behind");
    if (std::fabs(off) <= kClockSkewS) return ok("clock", text);
    return warn("clock", text,
                "the times of status and of the logs are off by that much: sync the clocks "
                "(NTP: timedatectl set-ntp true)");
}

// What transfers of ranges use: transfer.connections, or what auto does over this link.
std::string transfer_words(const LinkFacts& link, const DoctorNeeds& needs) {
    if (!link.second_connection) return "transfers use this one connection";
    if (needs.transfer_connections > 0)
        return "transfers use up to " + std::to_string(needs.transfer_connections) +
               " connections (transfer.connections)";
    if (needs.near_link)
        return "transfers use up to " + std::to_string(needs.auto_connections) + " connection" +
               (needs.auto_connections == 1 ? "" : "s") +
               " (transfer.connections auto over a near link: one per two local cores)";
    return "transfers start with " + std::to_string(needs.auto_connections) +
           " and grow to up to " + std::to_string(needs.auto_most) +
           " while the rate gains (transfer.connections auto)";
}

DoctorCheck connections_check(const LinkFacts& link, const DoctorNeeds& needs) {
    const std::string found =
        std::to_string(link.channels) + " channels of " + std::to_string(link.channels_tried) +
        " tried on one connection; " +
        (link.second_connection
             ? "a second connection accepted; "
             : "a second connection refused (" + printable(link.second_refusal, 200) + "); ") +
        transfer_words(link, needs);
    if (!link.second_connection)
        return warn("connections", found,
                    "the host or its provider allows one connection at a time (sshd's "
                    "MaxStartups, a firewall): big transfers will be slower");
    if (link.channels < link.channels_tried)
        return warn("connections", found,
                    "sshd allows fewer channels than its default 10 (MaxSessions): transfers run "
                    "fewer commands side by side; raise MaxSessions in the host's sshd_config");
    return ok("connections", found);
}

// "16 MiB up in 0.12 s (139.8 MB/s)".
std::string rate_words(uint64_t bytes, double s, const char* way) {
    char text[96];
    std::snprintf(text, sizeof text, "%s %s in %s (%.1f MB/s)", format_bytes(bytes).c_str(), way,
                  seconds_text(s).c_str(), static_cast<double>(bytes) / std::max(s, 1e-3) / 1e6);
    return text;
}

DoctorCheck throughput_check(const LinkFacts& link) {
    if (link.probe_bytes == 0) return ok("throughput", "not measured");
    if (link.up_s < 0 || link.down_s < 0 || link.down_bytes != link.probe_bytes)
        return warn("throughput",
                    "a probe failed (received " + format_bytes(link.down_bytes) + " of " +
                        format_bytes(link.probe_bytes) + ")",
                    "run with -v for details");
    const std::string found = rate_words(link.probe_bytes, link.up_s, "up") + ", " +
                              rate_words(link.probe_bytes, link.down_s, "down");
    const double slowest =
        static_cast<double>(link.probe_bytes) / std::max({link.up_s, link.down_s, 1e-3});
    if (slowest < kSlowRate)
        return warn("throughput", found, "uploads and downloads of big files will take long");
    return ok("throughput", found);
}

}  // namespace

std::vector<DoctorCheck> judge_login(const LinkFacts& link, const HostFacts& host) {
    return {host_key_check(link.login), ok("login", link.login.auth), shell_check(link, host),
            listener_check(link)};
}

std::vector<DoctorCheck> judge_link(const LinkFacts& link, const DoctorNeeds& needs) {
    char rtt[64];
    std::snprintf(rtt, sizeof rtt,
                  link.round_trip_s < 0.01 ? "%.2f ms (%s link)" : "%.0f ms (%s link)",
                  link.round_trip_s * 1e3, needs.near_link ? "a near" : "a far");
    return {clock_check(link), ok("round trip", link.round_trip_s < 0 ? "not measured" : rtt),
            connections_check(link, needs), throughput_check(link)};
}

HostFacts parse_doctor_facts(std::string_view out) {
    HostFacts h;
    for (const std::string& line : split(out, '\n')) {
        std::vector<std::string> f = split(line, '\t');
        const std::string& key = f[0];
        const auto arg = [&f](size_t i) { return i < f.size() ? f[i] : std::string(); };
        const auto number = [&arg](size_t i) -> std::optional<uint64_t> {
            const auto n = parse_decimal(arg(i), 0, 1ll << 60);
            return n ? std::optional<uint64_t>(static_cast<uint64_t>(*n)) : std::nullopt;
        };
        if (key == "home")
            h.home = arg(1);
        else if (key == "shell")
            h.shell = arg(1);
        else if (key == "startup" && !arg(1).empty())
            h.startup_files.push_back(arg(1));
        else if (key == "tool" && !arg(1).empty())
            h.tools.emplace_back(arg(1), arg(2));
        else if (key == "login_python")
            h.login_python = arg(1);
        else if (key == "python" && number(1)) {
            h.python_status = static_cast<int>(*number(1));
            h.python_version = arg(2);
        } else if (key == "gpu_status" && number(1))
            h.gpu_status = static_cast<int>(*number(1));
        else if (key == "gpu")
            h.gpu_rows.push_back(arg(1));
        else if (key == "cuda")
            h.cuda = arg(1);
        else if (key == "disk_dir") {
            h.disk_dir = arg(1);
            h.disk_dir_absolute = arg(2);
        } else if (key == "disk" && number(1) && number(2)) {
            h.disk_total_kib = number(1);
            h.disk_free_kib = number(2);
        } else if (key == "writable")
            h.writable = arg(1) == "yes";
    }
    return h;
}

std::vector<DoctorCheck> judge_host(const HostFacts& host, const DoctorNeeds& needs) {
    std::vector<DoctorCheck> checks;
    for (const Required& tool : kRequired) checks.push_back(required_tool(host, tool));
    checks.push_back(flock_check(host));
    checks.push_back(python_check(host, needs));
    checks.push_back(fetcher_check(host));
    checks.push_back(gpu_check(host));
    checks.push_back(disk_check(host, needs));
    return checks;
}

std::string format_check(const DoctorCheck& check) {
    const char* level = check.level == CheckLevel::ok     ? "ok  "
                        : check.level == CheckLevel::warn ? "warn"
                                                          : "FAIL";
    std::string line = std::string(level) + "  " + check.what + ": " + check.found;
    if (check.level != CheckLevel::ok && !check.fix.empty()) line += "; " + check.fix;
    // What the host said (paths, versions, GPU names) reaches the terminal only escaped.
    return printable(line, 2000);
}

std::string doctor_summary(const std::vector<DoctorCheck>& checks, const std::string& host) {
    size_t failed = 0, warned = 0;
    for (const DoctorCheck& check : checks) {
        failed += check.level == CheckLevel::fail ? 1 : 0;
        warned += check.level == CheckLevel::warn ? 1 : 0;
    }
    if (failed > 0)
        return "doctor: " + std::to_string(failed) + " check" + (failed == 1 ? "" : "s") +
               " FAILED: a train on " + host + " would fail (exit 1)";
    return "doctor: " + host + " has what a train needs" +
           (warned > 0 ? " (" + std::to_string(warned) + " warning" + (warned == 1 ? ")" : "s)")
                       : std::string());
}

int doctor_exit_code(const std::vector<DoctorCheck>& checks) {
    const bool failed = std::any_of(checks.begin(), checks.end(), [](const DoctorCheck& c) {
        return c.level == CheckLevel::fail;
    });
    return failed ? exit_code::kRemote : exit_code::kOk;
}

}  // namespace mlt
