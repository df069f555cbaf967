#include "mlt/util/interrupt.h"

#include <csignal>

#include "mlt/util/error.h"

namespace mlt {

namespace {

volatile std::sig_atomic_t g_interrupts = 0;
int g_acknowledged = 0;  // only touched outside the signal handler

extern "C" void on_interrupt(int) { g_interrupts = g_interrupts + 1; }

}  // namespace

void install_interrupt_handler() {
    struct sigaction sa{};
    sa.sa_handler = on_interrupt;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;  // no SA_RESTART: blocking calls return EINTR and the loops look again
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
    std::signal(SIGPIPE, SIG_IGN);
}

void acknowledge_interrupt() {
    if (g_acknowledged < g_interrupts) ++g_acknowledged;
}

void throw_if_interrupted() {
    if (g_interrupts > g_acknowledged)
        throw Error(ErrorKind::interrupted, exit_code::kInterrupted, "interrupted");
}

}  // namespace mlt
