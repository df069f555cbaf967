#pragma once

#include <cstdint>
#include <string>

namespace mlt {

// What this process asked of its hosts' sshd: connections made, session channels opened,
// and remote commands started. Each command runs the remote user's login shell, which reads
// its startup files first (~/.bashrc for bash): a heavy profile is paid once per command, so
// these counts, with the profile's cost, say what a run spends before any command runs.
struct SshCounts {
    uint64_t connections = 0;
    uint64_t channels = 0;
    uint64_t commands = 0;
};

// The counts so far (all threads, all hosts).
SshCounts ssh_counts();
// "2 connections, 5 channels, 5 remote commands", for the -v line at the end of a command.
std::string describe(const SshCounts& counts);

namespace ssh_detail {
void count_connection();
void count_channels(uint64_t n);
void count_commands(uint64_t n);
}  // namespace ssh_detail

}  // namespace mlt
