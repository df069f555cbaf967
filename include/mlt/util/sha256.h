#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

struct evp_md_ctx_st;  // OpenSSL's EVP_MD_CTX

namespace mlt {

// Incremental SHA-256 (libcrypto), for checking downloaded files against a remote
// `sha256sum`.
class Sha256 {
  public:
    Sha256();
    void update(const void* data, size_t size);
    void update(std::string_view data) { update(data.data(), data.size()); }
    // Finishes and returns the digest as 64 lowercase hex characters; call once.
    std::string hex_digest();

  private:
    struct CtxDeleter {
        void operator()(evp_md_ctx_st* ctx) const;
    };
    std::unique_ptr<evp_md_ctx_st, CtxDeleter> ctx_;
};

// The hex SHA-256 of a local file. Throws mlt::Error (io) when it cannot be read.
std::string sha256_file(const std::string& path);

// HMAC-SHA1 of `data` under `key` (libcrypto), the 20 raw bytes: what OpenSSH's hashed
// known_hosts names hold.
std::string hmac_sha1(std::string_view key, std::string_view data);

// The bytes of standard base64 `text` (padding required where due, no blanks); nullopt when
// it is not valid base64.
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace mlt
