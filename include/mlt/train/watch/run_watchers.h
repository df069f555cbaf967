#pragma once
// RunWatchers: what watches a run's job while it is followed: the host's samples (GPU use).
// The rules (watch.stop_when, the idle GPUs, silence) are the host's guard's (guard.sh).

#include <cstdint>
#include <string>

#include "mlt/train/watch/gpu_watch.h"
#include "mlt/train/watch/run_notices.h"

namespace mlt {

struct RunWatchers {
    // watch.every: the host's samples while the job is followed.
    GpuWatch gpu;
    // The remote time of the last sample taken (a relay may bring it twice).
    long long last_sample = 0;
    // The notifications this mlt sends, and whether the host's guard sends the host's events.
    RunNotices notices;
    bool host_notifies = false;
};

}  // namespace mlt
