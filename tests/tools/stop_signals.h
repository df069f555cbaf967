#pragma once

#include <signal.h>
#include <sys/signalfd.h>

namespace mlt_test {

// Blocks SIGTERM and SIGINT in the calling thread (threads started later inherit the mask,
// so none of them takes the signal) and returns a signalfd that becomes readable when one
// arrives: the tools' main loops poll it to end cleanly. -1 when signalfd fails.
inline int stop_signal_fd() {
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGTERM);
    sigaddset(&signals, SIGINT);
    sigprocmask(SIG_BLOCK, &signals, nullptr);
    return signalfd(-1, &signals, SFD_CLOEXEC);
}

}  // namespace mlt_test
