#pragma once
// Deterministic file contents shared by the unit and integration suites.

#include <cstddef>
#include <cstdint>
#include <string>

namespace mlt::test {

// Bytes that do not compress (xorshift32), different for every seed.
inline std::string noise_bytes(std::size_t size, uint32_t seed) {
    std::string s(size, '\0');
    uint32_t x = 2463534242u ^ (seed * 2654435761u);
    if (x == 0) x = 1;
    for (auto& c : s) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        c = static_cast<char>(x >> 24);
    }
    return s;
}

}  // namespace mlt::test
