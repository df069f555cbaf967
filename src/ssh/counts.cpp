// The process-wide counts of connections, channels and remote commands (counts.h).
#include "mlt/ssh/counts.h"

#include <atomic>

namespace mlt {

namespace {

std::atomic<uint64_t> g_connections{0};
std::atomic<uint64_t> g_channels{0};
std::atomic<uint64_t> g_commands{0};

std::string counted(uint64_t n, const char* one, const char* many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
}

}  // namespace

SshCounts ssh_counts() {
    return {g_connections.load(), g_channels.load(), g_commands.load()};
}

std::string describe(const SshCounts& c) {
    return counted(c.connections, "connection", "connections") + ", " +
           counted(c.channels, "channel", "channels") + ", " +
           counted(c.commands, "remote command", "remote commands");
}

namespace ssh_detail {
void count_connection() {
    ++g_connections;
}
void count_channels(uint64_t n) {
    g_channels += n;
}
void count_commands(uint64_t n) {
    g_commands += n;
}
}  // namespace ssh_detail

}  // namespace mlt
