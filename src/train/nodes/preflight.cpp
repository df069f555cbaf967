// The preflight of a multi-node run: before anything starts, every node but rank 0 connects
// to MASTER_ADDR:MASTER_PORT, where a listener on rank 0 answers, all within about 10 s.
#include <spdlog/spdlog.h>

#include <thread>

#include "mlt/train/nodes/nodes.h"
#include "mlt/util/error.h"
#include "mlt/util/reporter.h"
#include "mlt/util/shell.h"
#include "mlt/util/text.h"

namespace mlt {

namespace {

// How long the listener on rank 0 lives at most, and how long one probe may take.
constexpr int kListenerSeconds = 12;
constexpr int kProbeSeconds = 8;

// Starts the listener on rank 0, detached (it ends by itself), and returns its pid once it
// listens; throws when it cannot (the port is taken).
long start_listener(Remote& rank0, const std::string& addr, int port) {
    // On MASTER_ADDR, as the job will listen; on every address when that is not one of rank
    // 0's own (a NAT's public address).
    const std::string script =
        "import errno,socket,sys,time\n"
        "s=socket.socket()\ns.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)\n"
        "try:\n  s.bind((sys.argv[1], " +
        std::to_string(port) +
        "))\nexcept OSError as e:\n  if e.errno!=errno.EADDRNOTAVAIL: raise\n  s.bind(('', " +
        std::to_string(port) +
        "))\ns.listen(16)\nprint('mlt-listening',flush=True)\ns.settimeout(0.5)\n"
        "end=time.time()+" +
        std::to_string(kListenerSeconds) +
        "\nwhile time.time()<end:\n"
        "  try:\n    c,_=s.accept(); c.close()\n  except socket.timeout:\n    pass\n";
    const RemoteOutput out = rank0.run(
        "command -v python3 >/dev/null || { echo 'no python3' >&2; exit 3; }\n"
        "f=$(mktemp) || exit 1\n"
        "setsid python3 -c " +
        shell_quote(script) + " " + shell_quote(addr) +
        " > \"$f\" 2>&1 < /dev/null &\n"
        "p=$!; i=0\n"
        "while ! grep -q mlt-listening \"$f\" && kill -0 $p 2>/dev/null && [ $i -lt 100 ]; do "
        "sleep 0.05; "
        "i=$((i+1)); done\n"
        "if grep -q mlt-listening \"$f\"; then rm -f \"$f\"; echo \"pid=$p\"; exit 0; fi\n"
        "cat \"$f\" >&2; rm -f \"$f\"; kill $p 2>/dev/null; exit 4\n");
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
    const std::string where = shell_quote(addr) + " " + std::to_string(port);
    const RemoteOutput out =
        remote.run("set -- " + where + "\n" + "if command -v bash >/dev/null; then timeout " +
                   std::to_string(kProbeSeconds) +
                   " bash -c 'exec 3<>/dev/tcp/$0/$1' \"$1\" \"$2\" 2>/dev/null\n"
                   "else timeout " +
                   std::to_string(kProbeSeconds) +
                   " python3 -c 'import socket,sys; socket.create_connection((sys.argv[1], "
                   "int(sys.argv[2])), 5)' \"$1\" \"$2\" 2>/dev/null; fi\n");
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
    links[0]->remote().run("kill " + std::to_string(listener) + " 2>/dev/null; true");
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
