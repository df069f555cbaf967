// mlt_fault_relay: the integration tests' FaultRelay as a program, for the bench scripts.
//
//   mlt_fault_relay --target PORT [--listen PORT]
//
// Prints "ready <port>" once it listens on 127.0.0.1, then reads one command per line on
// stdin and answers each with one line, "ok ..." or "error <why>":
//   cut | stall | resume | rate BYTES_PER_S | cut-after up|down BYTES |
//   stall-after up|down BYTES | wait-fired MILLISECONDS | stats | quit
// `stats` answers "ok up <bytes> down <bytes> connections <n> open <n>". EOF on stdin,
// SIGTERM or SIGINT end it (exit 0); bad arguments exit 2, a relay that cannot listen 1.
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <sstream>
#include <string>

#include "harness/fault_relay.h"
#include "stop_signals.h"

namespace {

using mlt_test::Direction;
using mlt_test::FaultRelay;

// A decimal number that fills `text` entirely.
bool parse_number(const std::string& text, uint64_t* value) {
    if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) return false;
    errno = 0;
    *value = std::strtoull(text.c_str(), nullptr, 10);
    return errno == 0;
}

bool parse_direction(const std::string& text, Direction* d) {
    if (text != "up" && text != "down") return false;
    *d = text == "up" ? Direction::up : Direction::down;
    return true;
}

// Carries out one command line; the answer without newline. Sets `quit` for "quit".
std::string run_command(FaultRelay& relay, const std::string& line, bool* quit) {
    std::istringstream in(line);
    std::string name, arg1, arg2, extra;
    in >> name >> arg1 >> arg2 >> extra;
    if (!extra.empty()) return "error too many arguments";
    const std::size_t args = arg1.empty() ? 0 : arg2.empty() ? 1 : 2;
    uint64_t n = 0;
    Direction d = Direction::up;
    if ((name == "cut" || name == "stall" || name == "resume" || name == "stats" ||
         name == "quit") &&
        args != 0) {
        return "error " + name + " takes no argument";
    }
    if (name == "cut") {
        relay.cut();
    } else if (name == "stall") {
        relay.stall();
    } else if (name == "resume") {
        relay.resume();
    } else if (name == "quit") {
        *quit = true;
    } else if (name == "stats") {
        return "ok up " + std::to_string(relay.bytes(Direction::up)) + " down " +
               std::to_string(relay.bytes(Direction::down)) + " connections " +
               std::to_string(relay.connections_accepted()) + " open " +
               std::to_string(relay.open_connections());
    } else if (name == "rate" || name == "wait-fired") {
        if (args != 1 || !parse_number(arg1, &n)) return "error usage: " + name + " N";
        if (name == "rate") {
            relay.set_rate(n);
        } else if (!relay.wait_fired(std::chrono::milliseconds(n))) {
            return "error not fired";
        }
    } else if (name == "cut-after" || name == "stall-after") {
        if (args != 2 || !parse_direction(arg1, &d) || !parse_number(arg2, &n)) {
            return "error usage: " + name + " up|down N";
        }
        if (name == "cut-after") {
            relay.cut_after(d, n);
        } else {
            relay.stall_after(d, n);
        }
    } else {
        return "error unknown command: " + name;
    }
    std::string done = "ok " + name;
    if (args >= 1) done += " " + arg1;
    if (args == 2) done += " " + arg2;
    return done;
}

int usage() {
    std::cerr << "usage: mlt_fault_relay --target PORT [--listen PORT]\n";
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    uint64_t target = 0, listen_port = 0;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        uint64_t* into = arg == "--target" ? &target : arg == "--listen" ? &listen_port : nullptr;
        if (into == nullptr || i + 1 >= argc || !parse_number(argv[++i], into) || *into > 65535) {
            return usage();
        }
    }
    if (target == 0) return usage();

    // Blocked before the relay thread starts (which inherits the mask), taken by signalfd:
    // a SIGTERM ends the command loop and the relay's destructor resets the connections.
    const int signal_fd = mlt_test::stop_signal_fd();
    if (signal_fd < 0) {
        std::cerr << "mlt_fault_relay: signalfd failed\n";
        return 1;
    }

    try {
        FaultRelay relay(static_cast<int>(target), static_cast<int>(listen_port));
        std::cout << "ready " << relay.port() << std::endl;
        std::string pending;
        bool quit = false;
        while (!quit) {
            pollfd pfds[2] = {{STDIN_FILENO, POLLIN, 0}, {signal_fd, POLLIN, 0}};
            if (poll(pfds, 2, -1) < 0) {
                if (errno == EINTR) continue;
                break;
            }
            if (pfds[1].revents != 0) break;
            char buf[4096];
            const ssize_t n = read(STDIN_FILENO, buf, sizeof buf);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            pending.append(buf, static_cast<std::size_t>(n));
            std::size_t newline;
            while (!quit && (newline = pending.find('\n')) != std::string::npos) {
                const std::string line = pending.substr(0, newline);
                pending.erase(0, newline + 1);
                if (line.find_first_not_of(" \t\r") == std::string::npos) continue;  // blank
                std::cout << run_command(relay, line, &quit) << std::endl;
            }
        }
    } catch (const std::exception& e) {
        std::cerr << "mlt_fault_relay: " << e.what() << "\n";
        return 1;
    }
    close(signal_fd);
    return 0;
}
