#pragma once
// Every deadline of the harness stretches by MLT_TEST_TIME_FACTOR, as ctest's own per-test
// limits do (tests/CMakeLists.txt passes the same value to both; the sanitizer build, which
// runs 2-3 times slower, sets 3). Poll intervals do not stretch.

#include <chrono>
#include <cstdlib>

namespace mlt_test {

// MLT_TEST_TIME_FACTOR as a whole number from 1 to 100; 1 when unset or not such a number.
inline int time_factor() {
    const char* text = std::getenv("MLT_TEST_TIME_FACTOR");
    if (text == nullptr) return 1;
    char* end = nullptr;
    const long n = std::strtol(text, &end, 10);
    return (end != text && *end == '\0' && n >= 1 && n <= 100) ? static_cast<int>(n) : 1;
}

// `d` times time_factor().
template <class Duration>
Duration scaled(Duration d) {
    return d * time_factor();
}

}  // namespace mlt_test
