#pragma once
// RunAccount: a run's time and cost, on the wall clock.

#include <string>

#include "mlt/train/cost/run_ledger.h"

namespace mlt {

struct RunAccount {
    RunLedger ledger;         // the attempts so far, their hosts, times and prices
    double wall_offset = 0;   // epoch seconds minus the run clock's now()
    std::string started_iso;  // when this run took the lock (the history records it)
};

}  // namespace mlt
