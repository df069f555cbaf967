// SHA-256 through OpenSSL's libcrypto, which libssh already links (libssh-dev depends on
// libssl-dev): with the CPU's SHA extensions it hashes at GB/s, where a portable C version
// managed 160 MB/s and so capped every archive download on a fast link.

#include "mlt/util/sha256.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>

#include "mlt/util/error.h"

namespace mlt {

void Sha256::CtxDeleter::operator()(evp_md_ctx_st* ctx) const {
    EVP_MD_CTX_free(ctx);
}

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
    if (!ctx_ || EVP_DigestInit_ex(ctx_.get(), EVP_sha256(), nullptr) != 1) throw std::bad_alloc();
}

void Sha256::update(const void* data, size_t size) {
    if (size > 0) EVP_DigestUpdate(ctx_.get(), data, size);
}

std::string Sha256::hex_digest() {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    EVP_DigestFinal_ex(ctx_.get(), digest, &len);
    static const char* hex = "0123456789abcdef";
    std::string out;
    out.reserve(2 * len);
    for (unsigned int i = 0; i < len; ++i) {
        out += hex[digest[i] >> 4];
        out += hex[digest[i] & 15];
    }
    return out;
}

std::string sha256_file(const std::string& path) {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) throw io_error("cannot read " + path + ": " + std::strerror(errno));
    Sha256 hash;
    char buf[64 * 1024];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) hash.update(buf, n);
    const bool failed = std::ferror(f);
    std::fclose(f);
    if (failed) throw io_error("cannot read " + path);
    return hash.hex_digest();
}

std::string hmac_sha1(std::string_view key, std::string_view data) {
    unsigned char out[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    if (!HMAC(EVP_sha1(), key.data(), static_cast<int>(key.size()),
              reinterpret_cast<const unsigned char*>(data.data()), data.size(), out, &len))
        throw std::bad_alloc();
    return std::string(reinterpret_cast<const char*>(out), len);
}

std::optional<std::string> base64_decode(std::string_view text) {
    if (text.empty() || text.size() % 4 != 0 || text.size() > (1u << 20)) return std::nullopt;
    for (char c : text) {
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '+' && c != '/' && c != '=')
            return std::nullopt;
    }
    const size_t pad = text.back() == '=' ? (text[text.size() - 2] == '=' ? 2 : 1) : 0;
    if (text.find('=') < text.size() - pad) return std::nullopt;  // '=' only at the end
    std::string out(text.size() / 4 * 3, '\0');
    const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                  reinterpret_cast<const unsigned char*>(text.data()),
                                  static_cast<int>(text.size()));
    if (n < 0 || static_cast<size_t>(n) < pad) return std::nullopt;
    out.resize(static_cast<size_t>(n) - pad);
    return out;
}

}  // namespace mlt
