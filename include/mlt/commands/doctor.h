#pragma once
// `mlt ssh ... doctor`: whether a host has what a `train` needs, one line per check, with what
// to do about each problem.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mlt/commands/targets.h"
#include "mlt/ssh/session.h"

namespace mlt {

// How a check came out: fine, worth knowing (train still works), or train would fail.
enum class CheckLevel { ok, warn, fail };

// One line of the report.
struct DoctorCheck {
    CheckLevel level = CheckLevel::ok;
    std::string what;   // "flock", "disk", ...
    std::string found;  // what the check found
    std::string fix;    // what to do (warn and fail only; may be empty)
};

// What the remote side of the checks (src/commands/sh/doctor.sh) reported.
struct HostFacts {
    std::string home;                        // $HOME
    std::string shell;                       // the login shell
    std::vector<std::string> startup_files;  // those it reads for every command, that exist
    std::vector<std::pair<std::string, std::string>> tools;  // name, path ("": not found)
    std::string login_python;          // python3 on a login shell's PATH only (else "")
    std::optional<int> python_status;  // python3's `import venv, ensurepip`: 0 when both load
    std::string python_version;
    std::optional<int> gpu_status;      // nvidia-smi's exit status, when it is there
    std::vector<std::string> gpu_rows;  // its "name, memory MiB, driver" lines (or its error)
    std::string cuda;                   // the driver's CUDA version
    std::string disk_dir;               // the remote dir, or the dir above it that exists
    std::string disk_dir_absolute;
    std::optional<uint64_t> disk_total_kib, disk_free_kib;
    std::optional<bool> writable;
};

// Reads doctor.sh's output ("KEY<TAB>VALUE..." lines); unknown keys and broken lines are
// skipped.
HostFacts parse_doctor_facts(std::string_view out);

// What doctor measured over the link.
struct LinkFacts {
    LoginFacts login;
    double round_trip_s = -1;              // the quickest answer (-1: none)
    double command_s = -1;                 // an exec of `true` on a channel, round trips included
    std::optional<double> clock_offset_s;  // the host's clock less this machine's
    int channels = 0;                      // the channels one connection opened
    int channels_tried = 0;
    bool second_connection = false;
    std::string second_refusal;  // why a second connection failed
    uint64_t probe_bytes = 0;
    double up_s = -1, down_s = -1;  // the probes' times less command_s (-1: failed)
    uint64_t down_bytes = 0;        // what the download probe received
    // A transfer's extra channels run without a login: the channel listener (python3)
    // started and sshd forwards to it (Session::listen_for_channels).
    bool listener = false;
};

// What a train of these settings needs of the host, and how it would use the link.
struct DoctorNeeds {
    std::string remote_dir;        // as the settings or -h HOST/DIR give it
    bool venv = true;              // create_venv in effect: python3 and its venv are needed
    int transfer_connections = 0;  // transfer.connections (0: auto)
    size_t auto_connections = 0;   // what auto starts with over this link
    size_t auto_most = 0;          // what auto grows to over a far link
    bool near_link = false;        // the link is near (auto does not grow)
};

// The checks of what the host reported.
std::vector<DoctorCheck> judge_host(const HostFacts& host, const DoctorNeeds& needs);

// The checks of how the session got in: host key, authentication, the login shell's cost.
std::vector<DoctorCheck> judge_login(const LinkFacts& link, const HostFacts& host);

// The checks of the link: clock, round trip, channels and connections, throughput.
std::vector<DoctorCheck> judge_link(const LinkFacts& link, const DoctorNeeds& needs);

// "ok    WHAT: FOUND" / "warn  WHAT: FOUND; FIX" / "FAIL  WHAT: FOUND; FIX".
std::string format_check(const DoctorCheck& check);

// The last line: "doctor: N checks FAILED: a train on HOST would fail (exit 1)", or "doctor:
// HOST has what a train needs (N warnings)".
std::string doctor_summary(const std::vector<DoctorCheck>& checks, const std::string& host);

// 0 when no check failed, else 1 (a host that lacks what train needs: exit_code::kRemote).
int doctor_exit_code(const std::vector<DoctorCheck>& checks);

// `mlt ssh ... doctor [MODEL]`: connects to every node of MODEL's settings (or of the user
// settings and the command line) and prints the checks; returns doctor_exit_code of all of
// them. Throws mlt::Error as status does when a node cannot be reached (255), its host key
// is refused (4) or the settings are bad (2).
int run_doctor(const SshCommandLine& cli, const std::string& model);

}  // namespace mlt
