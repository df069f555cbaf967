// The preflight of a multi-node run: before anything starts, every node but rank 0 connects
// to MASTER_ADDR:MASTER_PORT, where a listener on rank 0 answers, all within about 10 s.
#include <spdlog/spdlog.h>

#include <thread>

#include "mlt/train/nodes/nodes.h"
#include "mlt/util/error.h"
#include "mlt/util/reporter.h"
#include "mlt/util/shell.h"
#include "mlt/util/text.h"
#include "remote_scripts.h"

namespace mlt {

namespace {

// How long the listener on rank 0 lives at most, and how long one probe may take.
constexpr int kListenerSeconds = 12;
constexpr int kProbeSeconds = 8;

// Starts the listener on rank 0, detached (it ends by itself), and returns its pid once it
// listens; throws when it cannot (the port is taken).
long start_listener(Remote& rank0, const std::string& addr, int port) {
    const RemoteOutput out =
        rank0.run(shell_assignment("mlt_addr", shell_quote(addr)) +
                  shell_assignment("mlt_port", std::to_string(port)) +
                  shell_assignment("mlt_seconds", std::to_string(kListenerSeconds)) +
                  std::string(scripts::train_preflight_listen));
    if (out.exit_status == 3) return 0;  // no python3 there: no preflight
    if (out.exit_status != 0)
        throw Error(ErrorKind::remote,
                    "preflight: MASTER_PORT " + std::to_string(port) +
                        " cannot be listened on "
                        "on rank 0 (" +
                        rank0.name() + "): " + last_lines(out.err, 1),
                    "free the port there, or set nodes.master_port to a free one");
    return static_cast<long>(
        parse_decimal(trim(out.out).substr(trim(out.out).find('=') + 1), 1, 1 << 30).value_or(0));
}

// Whether node `remote` can open a TCP connection to addr:port (bash's /dev/tcp, else
// python3), within kProbeSeconds.
bool probe(Remote& remote, const std::string& addr, int port) {
    const RemoteOutput out =
        remote.run(shell_assignment("mlt_addr", shell_quote(addr)) +
                   shell_assignment("mlt_port", std::to_string(port)) +
                   shell_assignment("mlt_seconds", std::to_string(kProbeSeconds)) +
                   std::string(scripts::train_preflight_probe));
    return out.exit_status == 0;
}

}  // namespace

void preflight(std::vector<std::unique_ptr<Connection>>& links, const Rendezvous& r) {
    if (links.size() < 2) return;
    const long listener = start_listener(links[0]->remote(), r.master_addr, r.master_port);
    if (listener == 0) {
        reporter().warning("preflight skipped: rank 0 (" + links[0]->name() +
                           ") has no python3 to listen on MASTER_PORT " +
                           std::to_string(r.master_port));
        return;
    }
    std::vector<char> reached(links.size(), 1);
    std::vector<std::thread> probes;
    for (size_t i = 1; i < links.size(); ++i)
        probes.emplace_back([&, i] {
            try {
                reached[i] = probe(links[i]->remote(), r.master_addr, r.master_port) ? 1 : 0;
            } catch (const Error& e) {
                spdlog::debug("preflight probe of node {}: {}", i, e.what());
                reached[i] = 0;
            }
        });
    for (auto& t : probes) t.join();
    links[0]->remote().run(shell_assignment("mlt_pid", std::to_string(listener)) +
                           std::string(scripts::train_preflight_stop));
    for (size_t i = 1; i < links.size(); ++i)
        if (!reached[i])
            throw Error(ErrorKind::connect,
                        "preflight: node " + std::to_string(i) + " (" + links[i]->name() +
                            ") cannot reach rank 0 at " + r.master_addr + ":" +
                            std::to_string(r.master_port) + "; nothing was started",
                        "check the firewall of rank 0 and between the hosts, NAT, or an overlay "
                        "network (the nodes must reach one another directly); nodes.master_addr "
                        "sets the address to use");
}

}  // namespace mlt
