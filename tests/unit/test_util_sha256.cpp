#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "mlt/util/sha256.h"

namespace {

std::string sha(const std::string& s) {
    mlt::Sha256 h;
    h.update(s);
    return h.hex_digest();
}

TEST(Sha256, KnownVectors) {
    EXPECT_EQ(sha(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    EXPECT_EQ(sha("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    EXPECT_EQ(sha("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
              "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    EXPECT_EQ(sha(std::string(1000000, 'a')),
              "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, ChunkingDoesNotMatter) {
    std::string data;
    for (int i = 0; i < 1000; ++i) data += static_cast<char>(i * 7);
    mlt::Sha256 h;
    for (size_t i = 0; i < data.size(); i += 13) h.update(data.substr(i, 13));
    EXPECT_EQ(h.hex_digest(), sha(data));
}

TEST(Hmac, Rfc2202Sha1Vectors) {
    const std::string hex = [] {
        std::string out;
        for (unsigned char c : mlt::hmac_sha1("Jefe", "what do ya want for nothing?")) {
            static const char* digits = "0123456789abcdef";
            out += digits[c >> 4];
            out += digits[c & 15];
        }
        return out;
    }();
    EXPECT_EQ(hex, "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79");
}

TEST(Base64Decode, ValidAndInvalid) {
    EXPECT_EQ(mlt::base64_decode("aGVsbG8="), std::optional<std::string>("hello"));
    EXPECT_EQ(mlt::base64_decode("aGVsbG8h"), std::optional<std::string>("hello!"));
    EXPECT_EQ(mlt::base64_decode("aGk="), std::optional<std::string>("hi"));
    EXPECT_EQ(mlt::base64_decode("aA=="), std::optional<std::string>("h"));
    for (const char* bad : {"", "aGk", "aG=k", "a===", "aGVs bG8=", "aGVs\nbG8="})
        EXPECT_EQ(mlt::base64_decode(bad), std::nullopt) << bad;
}

}  // namespace
