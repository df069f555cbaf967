// `mlt ssh ... doctor [MODEL]`: connects to each node as train would, measures the link
// (channels, a second connection, the login shell's cost, the clock, throughput) and runs
// doctor.sh there, then prints a line per check (doctor_checks.cpp judges them).
#include "mlt/commands/doctor.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "mlt/commands/model_settings.h"
#include "mlt/ssh/remote.h"
#include "mlt/transfer/link_pool.h"
#include "mlt/transfer/ranges.h"
#include "mlt/util/error.h"
#include "mlt/util/shell.h"
#include "mlt/util/text.h"
#include "remote_scripts.h"

namespace mlt {

namespace {

using Steady = std::chrono::steady_clock;

// sshd's default MaxSessions: what one connection may open when nobody lowered it.
constexpr int kChannelsTried = 10;
// The throughput probe, each way.
constexpr uint64_t kProbeBytes = 16ull * 1024 * 1024;

double since(Steady::time_point start) {
    return std::chrono::duration<double>(Steady::now() - start).count();
}

void drop(std::string_view) {}

// The seconds an exec of `true` takes on a channel of its own: the round trips of its open
// and exec, and the login shell's start (sshd runs every command through it).
double time_true(Session& session) {
    const auto start = Steady::now();
    const ExecResult r = session.exec("true", {}, drop, drop);
    if (r.exit_status != 0) spdlog::debug("doctor: `true` exited {}", r.exit_status);
    return since(start);
}

// The host's clock less this machine's, from `date` in the control shell (already started),
// taken at the middle of the round trip; BusyBox's date may not know %N (whole seconds then).
std::optional<double> clock_offset(Remote& remote) {
    const double before =
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    const auto start = Steady::now();
    const RemoteOutput out = remote.run("date +%s.%N");
    const double took = since(start);
    const std::string text = trim(out.out);
    std::optional<double> now = parse_real(text, 0, 1e12);
    if (!now) now = parse_real(text.substr(0, text.find('.')), 0, 1e12);
    if (out.exit_status != 0 || !now) {
        spdlog::debug("doctor: the host's date said '{}'", printable(text, 80));
        return std::nullopt;
    }
    return *now - (before + took / 2);
}

// The seconds `bytes` of zeros take up into `cat > /dev/null`; -1 when the command failed.
double upload_seconds(Session& session, uint64_t bytes) {
    uint64_t left = bytes;
    const InputSource zeros = [&left](char* buffer, size_t capacity) {
        const size_t n = static_cast<size_t>(std::min<uint64_t>(capacity, left));
        std::memset(buffer, 0, n);
        left -= n;
        return n;
    };
    const auto start = Steady::now();
    const ExecResult r = session.exec("cat > /dev/null", zeros, drop, drop);
    return r.exit_status == 0 && left == 0 ? since(start) : -1;
}

// The seconds `bytes` of zeros take down from `head -c`, what came in `got`; -1 when the
// command failed.
double download_seconds(Session& session, uint64_t bytes, uint64_t& got) {
    got = 0;
    const auto start = Steady::now();
    const ExecResult r = session.exec(
        "head -c " + std::to_string(bytes) + " /dev/zero", {},
        [&got](std::string_view data) { got += data.size(); }, drop);
    return r.exit_status == 0 ? since(start) : -1;
}

// What takes a connection of its own: channels, a second connection, the login shell's cost.
LinkFacts measure_connection(Connector& connector, Session& session) {
    LinkFacts link;
    link.login = session.login_facts();
    // First, while no channel is open: what one connection may open.
    link.channels_tried = kChannelsTried;
    link.channels = session.count_channels(kChannelsTried);
    try {
        Session second = connector.open();
        link.second_connection = true;
    } catch (const Error& e) {
        if (is_signal(e.kind())) throw;
        link.second_refusal = e.what();
    }
    // The quicker of two: a load spike on either side makes one slow, not both.
    link.command_s = std::min(time_true(session), time_true(session));
    return link;
}

void measure_throughput(Session& session, LinkFacts& link) {
    link.probe_bytes = kProbeBytes;
    const double up = upload_seconds(session, kProbeBytes);
    const double down = download_seconds(session, kProbeBytes, link.down_bytes);
    // Less what a command costs without bytes (channel, login shell).
    link.up_s = up < 0 ? -1 : std::max(up - link.command_s, 1e-3);
    link.down_s = down < 0 ? -1 : std::max(down - link.command_s, 1e-3);
}

DoctorNeeds needs_of(const SshSettings& settings, const Target& target, double round_trip_s) {
    DoctorNeeds needs;
    needs.remote_dir = target.remote_dir;
    needs.venv = effective_create_venv(settings);
    needs.transfer_connections = settings.transfer_connections;
    needs.near_link = is_near_round_trip(round_trip_s);
    needs.auto_connections = auto_start_connections(needs.near_link);
    needs.auto_most = kAutoConnections;
    return needs;
}

// The checks of one node, printed; its exit code.
int doctor_target(const Target& target, const SshSettings& settings) {
    Connector connector(target.connect);
    Session session = connector.open();
    std::printf("doctor: %s, remote dir %s\n", session.display_name().c_str(),
                target.remote_dir.c_str());
    std::fflush(stdout);
    LinkFacts link = measure_connection(connector, session);
    SessionRemote remote(session);
    const RemoteOutput out =
        remote.run(shell_assignment("mlt_dir", shell_quote_path(target.remote_dir)) +
                   std::string(scripts::commands_doctor));
    spdlog::debug("doctor.sh on {} said:\n{}", remote.name(), printable_lines(out.out));
    if (out.exit_status != 0)
        throw remote_failure(remote, "the checks of doctor", out.exit_status, out.err);
    const HostFacts host = parse_doctor_facts(out.out);
    link.clock_offset_s = clock_offset(remote);
    measure_throughput(session, link);  // on exec channels, as command_s was timed
    link.listener = session.listen_for_channels();
    link.round_trip_s = session.round_trip_s();
    const DoctorNeeds needs = needs_of(settings, target, link.round_trip_s);

    std::vector<DoctorCheck> checks = judge_login(link, host);
    const std::vector<DoctorCheck> of_host = judge_host(host, needs);
    const std::vector<DoctorCheck> of_link = judge_link(link, needs);
    checks.insert(checks.end(), of_host.begin(), of_host.end());
    checks.insert(checks.end(), of_link.begin(), of_link.end());
    for (const DoctorCheck& check : checks) std::printf("%s\n", format_check(check).c_str());
    std::printf("%s\n", doctor_summary(checks, remote.name()).c_str());
    std::fflush(stdout);
    return doctor_exit_code(checks);
}

}  // namespace

int run_doctor(const SshCommandLine& cli, const std::string& model) {
    const ModelSettings m = resolve_model_settings(cli, model, false, true);
    int code = exit_code::kOk;
    for (const Target& target : m.targets) code = std::max(code, doctor_target(target, m.settings));
    return code;
}

}  // namespace mlt
