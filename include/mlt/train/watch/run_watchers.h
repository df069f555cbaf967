#pragma once
// RunWatchers: what watches a run's job while it is followed: the host's samples (GPU use).
// The rules (watch.stop_when, the idle GPUs, silence) are the host's guard's (guard.sh).

#include <cstdint>
#include <string>

#include "mlt/train/watch/gpu_watch.h"

namespace mlt {

struct RunWatchers {
    // watch.every: the host's samples while the job is followed.
    GpuWatch gpu;
    // The remote time of the last sample taken (a relay may bring it twice).
    long long last_sample = 0;
};

}  // namespace mlt
