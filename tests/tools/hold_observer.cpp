// Linked into mlt_hold, the test build of mlt (src/main.cpp plus this file), never into mlt
// itself. MLT_TEST_HOLD=<phase words>:<file> pauses the run at the first step of that phase
// (describe(Phase): "starting the job", "collecting the results", ...), and
// MLT_TEST_HOLD=<phase words>#<n>:<file> at the n-th (a failover enters the lock phase a
// second time, on the standby host): mlt creates <file>
// holding its pid and waits (at most 120 s) until the test removes it, so that the test can
// cut the link or kill mlt exactly there. Only the pause is simulated; the faults are real.
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>

#include "mlt/train/run/train_run.h"

namespace {

class HoldObserver : public mlt::RunObserver {
  public:
    // Called from every run's thread (a gang's nodes run side by side): the count and the
    // choice of the one step to hold are taken under a lock, the wait is not.
    void entering(mlt::Phase phase) override {
        const char* spec = std::getenv("MLT_TEST_HOLD");
        if (!spec) return;
        const std::string text = spec;
        const size_t colon = text.find(':');
        if (colon == std::string::npos) return;
        std::string words = text.substr(0, colon);
        int nth = 1;
        if (const size_t hash = words.find('#'); hash != std::string::npos) {
            nth = std::atoi(words.c_str() + hash + 1);
            words.resize(hash);
        }
        if (words != mlt::describe(phase)) return;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            if (held_ || ++entered_ < nth) return;
            held_ = true;
        }
        const std::string file = text.substr(colon + 1);
        std::ofstream(file) << ::getpid() << "\n";
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
        while (std::filesystem::exists(file) && std::chrono::steady_clock::now() < deadline)
            ::poll(nullptr, 0, 10);
    }

  private:
    std::mutex mutex_;
    bool held_ = false;
    int entered_ = 0;  // steps of the phase to hold seen so far
};

HoldObserver observer;

// Installed before main() runs; a plain pointer, so the order of static initialisers does
// not matter.
const bool installed = (mlt::install_run_observer(&observer), true);

}  // namespace
