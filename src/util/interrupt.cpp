// Signals for mlt: Ctrl+C, SIGTERM, SIGHUP counted (lock-free), checked, deferred, scoped stops.
#include "mlt/util/interrupt.h"

#include <pthread.h>

#include <atomic>
#include <csignal>
#include <string>

#include "mlt/util/error.h"

namespace mlt {

namespace {

// Written by the signal handlers, read by every thread of a run (a node's, the pulls'): a
// volatile sig_atomic_t is safe only within one thread, a lock-free atomic in a handler too.
std::atomic<int> g_interrupts{0};
std::atomic<int> g_leave{0};
static_assert(std::atomic<int>::is_always_lock_free, "the signal handlers need a lock-free int");
// Only touched outside the signal handlers; read by the live pull's thread too.
std::atomic<int> g_acknowledged{0};
// Per thread: a deferral of the run's thread does not hold back another thread's wait.
thread_local int g_deferred = 0;
thread_local const std::atomic<bool>* g_stop = nullptr;  // StopScope

extern "C" void on_interrupt(int) {
    g_interrupts.fetch_add(1);
}
extern "C" void on_leave(int sig) {
    g_leave.store(sig);
}

}  // namespace

void install_interrupt_handler() {
    struct sigaction sa {};
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;  // no SA_RESTART: blocking calls return EINTR and the loops look again
    sa.sa_handler = on_interrupt;
    sigaction(SIGINT, &sa, nullptr);
    sa.sa_handler = on_leave;
    sigaction(SIGTERM, &sa, nullptr);
    sigaction(SIGHUP, &sa, nullptr);
}

void acknowledge_interrupt() {
    if (g_acknowledged.load() < g_interrupts.load()) ++g_acknowledged;
}

bool interrupt_pending() {
    return g_interrupts.load() > g_acknowledged.load();
}

int leave_signal() {
    return g_leave.load();
}

bool interrupts_deferred() {
    return g_deferred > 0;
}

void throw_if_interrupted() {
    if (g_stop && g_stop->load()) throw Error(ErrorKind::interrupted, "stopped");
    if (g_deferred > 0) return;
    if (const int sig = g_leave.load())
        throw sig == SIGHUP ? Error(ErrorKind::hangup, "SIGHUP")
                            : Error(ErrorKind::terminated, "SIGTERM");
    if (interrupt_pending()) throw Error(ErrorKind::interrupted, "interrupted");
}

const std::atomic<bool>* current_stop() {
    return g_stop;
}

StopScope::StopScope(const std::atomic<bool>& stop) : outer_(g_stop) {
    g_stop = &stop;
}
StopScope::~StopScope() {
    g_stop = outer_;
}

InterruptDeferral::InterruptDeferral() {
    ++g_deferred;
}
InterruptDeferral::~InterruptDeferral() {
    --g_deferred;
}

std::thread thread_without_signals(std::function<void()> body) {
    // The new thread inherits the mask in effect where it is created.
    sigset_t block, old;
    sigemptyset(&block);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&block, sig);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    std::thread thread(std::move(body));
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    return thread;
}

}  // namespace mlt
