// Linked into mlt_hold, the test build of mlt (src/main.cpp plus this file), never into mlt
// itself. MLT_TEST_HOLD=<phase words>:<file> pauses the run at the first step of that phase
// (describe(Phase): "starting the job", "collecting the results", ...): mlt creates <file>
// holding its pid and waits (at most 120 s) until the test removes it, so that the test can
// cut the link or kill mlt exactly there. Only the pause is simulated; the faults are real.
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "mlt/train/train_run.h"

namespace {

class HoldObserver : public mlt::RunObserver {
  public:
    void entering(mlt::Phase phase) override {
        const char* spec = std::getenv("MLT_TEST_HOLD");
        if (held_ || !spec) return;
        const std::string text = spec;
        const size_t colon = text.find(':');
        if (colon == std::string::npos || text.substr(0, colon) != mlt::describe(phase)) return;
        held_ = true;
        const std::string file = text.substr(colon + 1);
        std::ofstream(file) << ::getpid() << "\n";
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
        while (std::filesystem::exists(file) && std::chrono::steady_clock::now() < deadline)
            ::poll(nullptr, 0, 10);
    }

  private:
    bool held_ = false;
};

HoldObserver observer;

// Installed before main() runs; a plain pointer, so the order of static initialisers does
// not matter.
const bool installed = (mlt::install_run_observer(&observer), true);

}  // namespace
