#pragma once
// RunWatchers: what watches a run's job while it is followed: the watch.stop_when rules over
// its console log and the host's samples (GPU use).

#include <cstdint>
#include <string>

#include "mlt/train/watch/gpu_watch.h"
#include "mlt/train/watch/stop_rules.h"

namespace mlt {

struct RunWatchers {
    explicit RunWatchers(const std::vector<StopRule>& stop_when) : rules(stop_when) {}
    // watch.stop_when over the console log; primed from the local copy at the first follow.
    StopRules rules;
    enum class Primed { no, yes } primed = Primed::no;
    // watch.every: the host's samples while the job is followed.
    GpuWatch gpu;
    // The remote time of the last sample taken (a relay may bring it twice).
    long long last_sample = 0;

    // Primes the rules from the local copy `local_console` of the console log up to
    // `offset`: what this machine followed before (a --resume, a new mlt after a kill).
    void prime(const std::string& local_console, uint64_t offset);
};

}  // namespace mlt
