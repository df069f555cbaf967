// known_hosts read as OpenSSH reads it (src/ssh/known_hosts.h): lines libssh cannot parse are
// skipped instead of ending the search, patterns and hashed names match as ssh matches them.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "mlt/util/sha256.h"
#include "ssh/known_hosts.h"

namespace {

using mlt::ssh_detail::check_known_hosts;
using mlt::ssh_detail::KeyPtr;
using mlt::ssh_detail::known_hosts_field_matches;
using mlt::ssh_detail::KnownHostsCheck;
using mlt::ssh_detail::KnownHostsMatch;

KeyPtr new_key(ssh_keytypes_e type = SSH_KEYTYPE_ED25519) {
    ssh_key raw = nullptr;
    EXPECT_EQ(ssh_pki_generate(type, type == SSH_KEYTYPE_ED25519 ? 0 : 256, &raw), SSH_OK);
    return KeyPtr(raw);
}

// "ssh-ed25519 AAAA..." of `key`.
std::string type_and_blob(const KeyPtr& key) {
    char* b64 = nullptr;
    EXPECT_EQ(ssh_pki_export_pubkey_base64(key.get(), &b64), SSH_OK);
    std::string out = std::string(ssh_key_type_to_char(ssh_key_type(key.get()))) + " " + b64;
    ssh_string_free_char(b64);
    return out;
}

// `|1|salt|hash` of `name` with a fixed salt, as ssh-keygen -H writes it.
std::string hashed(const std::string& name) {
    const std::string salt(20, '\x5a');
    const std::string hash = mlt::hmac_sha1(salt, name);
    const auto b64 = [](const std::string& bytes) {
        // Encoded by the test's own table, not by the code under test.
        static const char* abc = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        std::string s;
        for (size_t i = 0; i < bytes.size(); i += 3) {
            unsigned v = static_cast<unsigned char>(bytes[i]) << 16;
            if (i + 1 < bytes.size()) v |= static_cast<unsigned char>(bytes[i + 1]) << 8;
            if (i + 2 < bytes.size()) v |= static_cast<unsigned char>(bytes[i + 2]);
            s += abc[(v >> 18) & 63];
            s += abc[(v >> 12) & 63];
            s += i + 1 < bytes.size() ? abc[(v >> 6) & 63] : '=';
            s += i + 2 < bytes.size() ? abc[v & 63] : '=';
        }
        return s;
    };
    return "|1|" + b64(salt) + "|" + b64(hash);
}

KnownHostsCheck check(const std::string& text, const std::string& host, const KeyPtr& key) {
    std::istringstream in(text);
    return check_known_hosts(in, host, key.get());
}

TEST(KnownHostsField, PatternsAsOpenSshMatchesThem) {
    EXPECT_TRUE(known_hosts_field_matches("gpu.example.com", "gpu.example.com"));
    EXPECT_TRUE(known_hosts_field_matches("GPU.Example.com", "gpu.example.COM"));
    EXPECT_TRUE(known_hosts_field_matches("a,[h]:2222,b", "[h]:2222"));
    EXPECT_FALSE(known_hosts_field_matches("h", "[h]:2222")) << "another port is another host";
    EXPECT_TRUE(known_hosts_field_matches("*", "[h]:2222"));
    EXPECT_TRUE(known_hosts_field_matches("[10.0.0.*]:22?2", "[10.0.0.7]:2202"));
    EXPECT_FALSE(known_hosts_field_matches("*,!gpu*", "gpu1")) << "a negation vetoes";
    EXPECT_FALSE(known_hosts_field_matches("[h]", "h")) << "brackets are no character class";
}

TEST(KnownHostsField, HashedNames) {
    EXPECT_TRUE(known_hosts_field_matches(hashed("[h]:2222"), "[h]:2222"));
    EXPECT_TRUE(known_hosts_field_matches(hashed("gpu"), "GPU"));
    EXPECT_FALSE(known_hosts_field_matches(hashed("[h]:2222"), "[h]:2223"));
    for (const char* bad : {"|1|", "|1|abc", "|1|AAAA|", "|1|!!!!|!!!!", "|2|AAAA|AAAA"})
        EXPECT_FALSE(known_hosts_field_matches(bad, "h")) << bad;
}

TEST(KnownHostsCheck, TheKeyAnywhereIsKnown) {
    const KeyPtr key = new_key(), old = new_key();
    const std::string text =
        "# comment\n\n  h " + type_and_blob(old) + "\nh " + type_and_blob(key) + " a comment\n";
    const KnownHostsCheck c = check(text, "h", key);
    EXPECT_EQ(c.match, KnownHostsMatch::known);
    EXPECT_EQ(c.line, 4);
    EXPECT_TRUE(c.unreadable.empty());
}

TEST(KnownHostsCheck, AnUnreadableLineNeverEndsTheSearch) {
    const KeyPtr key = new_key(), old = new_key();
    const std::string blob = type_and_blob(old);
    for (const std::string& bad : std::vector<std::string>{
             "h ssh-ed25519", "h", "h ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAA",
             "h ssh-unknown " + blob.substr(blob.find(' ') + 1), "* ssh-ed25519 AAAA",
             "@nonsense h " + blob, hashed("h"), hashed("h") + " ssh-ed25519 AAAAC3Nz"}) {
        SCOPED_TRACE(bad);
        KnownHostsCheck c = check(bad + "\nh " + blob + "\n", "h", key);
        EXPECT_EQ(c.match, KnownHostsMatch::changed);
        EXPECT_EQ(c.line, 2);
        ASSERT_EQ(c.unreadable.size(), 1u);
        EXPECT_EQ(c.unreadable[0].line, 1);
        EXPECT_FALSE(c.unreadable[0].why.empty());

        c = check("h " + type_and_blob(key) + "\n" + bad + "\n", "h", key);
        EXPECT_EQ(c.match, KnownHostsMatch::known);
    }
}

TEST(KnownHostsCheck, LinesOfOtherHostsAreNotReported) {
    const KeyPtr key = new_key();
    const KnownHostsCheck c = check("other ssh-ed25519\n" + hashed("other") + "\n", "h", key);
    EXPECT_EQ(c.match, KnownHostsMatch::unknown);
    EXPECT_TRUE(c.unreadable.empty());
}

TEST(KnownHostsCheck, AnotherTypeIsOtherAndTheSameTypeWins) {
    const KeyPtr key = new_key(), ecdsa = new_key(SSH_KEYTYPE_ECDSA_P256), old = new_key();
    KnownHostsCheck c = check("h " + type_and_blob(ecdsa) + "\n", "h", key);
    EXPECT_EQ(c.match, KnownHostsMatch::other);
    EXPECT_EQ(c.line, 1);
    c = check("h " + type_and_blob(ecdsa) + "\nh " + type_and_blob(old) + "\n", "h", key);
    EXPECT_EQ(c.match, KnownHostsMatch::changed);
    EXPECT_EQ(c.line, 2);
}

TEST(KnownHostsCheck, RevokedAndCertAuthorityLines) {
    const KeyPtr key = new_key();
    KnownHostsCheck c =
        check("@revoked * " + type_and_blob(key) + "\nh " + type_and_blob(key) + "\n", "h", key);
    EXPECT_EQ(c.revoked_line, 1);
    c = check("@cert-authority h " + type_and_blob(key) + "\n", "h", key);
    EXPECT_EQ(c.match, KnownHostsMatch::unknown) << "a CA key is no host key";
    EXPECT_TRUE(c.unreadable.empty());
}

}  // namespace
