#pragma once
// The one way a unit test waits for something another process or thread does: poll a
// condition with a bound, never sleep a fixed time and hope.

#include <chrono>
#include <thread>

namespace mlt::test {

// Polls `condition` every 10 ms until it holds: true then, false once `timeout` has passed
// (after a last look). The bound is only there so a broken test ends: pick it far above
// what the wait takes on a loaded machine, and assert the state, not the time.
template <typename Condition>
bool wait_until(Condition condition, std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!condition()) {
        if (std::chrono::steady_clock::now() >= deadline) return condition();
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return true;
}

}  // namespace mlt::test
