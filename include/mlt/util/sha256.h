#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace mlt {

// Incremental SHA-256 (FIPS 180-4), for checking downloaded files against a remote
// `sha256sum` without another library.
class Sha256 {
public:
    Sha256();
    void update(const void* data, size_t size);
    void update(std::string_view data) { update(data.data(), data.size()); }
    // Finishes and returns the digest as 64 lowercase hex characters; call once.
    std::string hex_digest();

private:
    void block(const uint8_t* p);
    uint32_t h_[8];
    uint8_t buffer_[64];
    size_t buffered_ = 0;
    uint64_t length_ = 0;
};

// The hex SHA-256 of a local file. Throws mlt::Error (io) when it cannot be read.
std::string sha256_file(const std::string& path);

}  // namespace mlt
