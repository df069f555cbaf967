// `mlt ssh-keygen`: OpenSSH-compatible key pairs, safe against overwriting.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "harness/expect.h"
#include "harness/files.h"
#include "harness/mlt_env.h"
#include "harness/openssh.h"
#include "harness/temp_dir.h"
#include "harness/test_sshd.h"

namespace mlt_test {
namespace {

constexpr int kExitUsage = 2;

class KeygenTest : public ::testing::Test {
  protected:
    KeygenTest() : env_(dir_.file("home")) {}

    // Checks a generated pair: modes, comment, stdout, and that OpenSSH derives the same
    // public key from the private file.
    void expect_valid_pair(const ProcessResult& r, const std::string& key,
                           const std::string& comment, const std::string& type, int bits) {
        ASSERT_EQ(r.exit_code, 0) << describe(r);
        ASSERT_TRUE(path_exists(key)) << describe(r);
        ASSERT_TRUE(path_exists(key + ".pub")) << describe(r);
        EXPECT_EQ(file_mode(key), 0600);
        const std::string pub = trim(read_file(key + ".pub"));
        EXPECT_EQ(split_lines(pub).size(), 1u) << pub;
        const std::vector<std::string> fields = split_fields(pub);
        ASSERT_GE(fields.size(), 3u) << pub;
        EXPECT_EQ(fields.back(), comment) << pub;
        EXPECT_EQ(trim(r.out), pub) << "stdout should be the public key line\n" << describe(r);
        EXPECT_EQ(key_type_and_blob(public_key_of(key)), key_type_and_blob(pub));
        KeyInfo info = key_info(key + ".pub");
        EXPECT_EQ(info.type, type);
        EXPECT_EQ(info.bits, bits);
    }

    TempDir dir_{"mlt-keygen-"};
    MltEnv env_;
};

TEST_F(KeygenTest, Ed25519IsTheDefault) {
    const std::string out_dir = dir_.file("keys");
    make_dir(out_dir);
    ProcessResult r = env_.run_mlt({"ssh-keygen", "mykey", "-o", out_dir});
    expect_valid_pair(r, out_dir + "/id_mykey", "mykey", "ED25519", 256);
}

TEST_F(KeygenTest, RsaIs3072BitsByDefault) {
    const std::string out_dir = dir_.file("keys");
    ProcessResult r = env_.run_mlt({"ssh-keygen", "rsakey", "-t", "rsa", "-o", out_dir});
    expect_valid_pair(r, out_dir + "/id_rsakey", "rsakey", "RSA", 3072);
}

TEST_F(KeygenTest, RsaLengthOption) {
    const std::string out_dir = dir_.file("keys");
    ProcessResult r = env_.run_mlt({"ssh-keygen", "big", "-t", "rsa", "-l", "4096", "-o", out_dir});
    expect_valid_pair(r, out_dir + "/id_big", "big", "RSA", 4096);
}

TEST_F(KeygenTest, MltkLongOptions) {
    // `mltk ssh-keygen utest --output DIR`, with MLTK's other long forms.
    const std::string out_dir = dir_.file("keys");
    ProcessResult r = env_.run_mlt(
        {"ssh-keygen", "utest", "--type", "rsa", "--length", "2048", "--output", out_dir});
    expect_valid_pair(r, out_dir + "/id_utest", "utest", "RSA", 2048);
    r = env_.run_mlt({"ssh-keygen", "--output=" + out_dir, "--type=ED25519", "edkey"});
    expect_valid_pair(r, out_dir + "/id_edkey", "edkey", "ED25519", 256);
}

TEST_F(KeygenTest, CommentOption) {
    const std::string out_dir = dir_.file("keys");
    ProcessResult r = env_.run_mlt({"ssh-keygen", "named", "-C", "me@laptop", "-o", out_dir});
    expect_valid_pair(r, out_dir + "/id_named", "me@laptop", "ED25519", 256);
}

TEST_F(KeygenTest, CreatesMissingDirectoryPrivate) {
    const std::string out_dir = dir_.file("fresh");
    ASSERT_FALSE(path_exists(out_dir));
    ProcessResult r = env_.run_mlt({"ssh-keygen", "k", "-o", out_dir});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_EQ(file_mode(out_dir), 0700);
    EXPECT_TRUE(path_exists(out_dir + "/id_k"));
}

TEST_F(KeygenTest, DefaultDirectoryIsHomeSsh) {
    ProcessResult r = env_.run_mlt({"ssh-keygen", "homekey"});
    expect_valid_pair(r, env_.ssh_dir() + "/id_homekey", "homekey", "ED25519", 256);
}

TEST_F(KeygenTest, RefusesToOverwrite) {
    const std::string out_dir = dir_.file("keys");
    ASSERT_EQ(env_.run_mlt({"ssh-keygen", "dup", "-o", out_dir}).exit_code, 0);
    const std::string key = read_file(out_dir + "/id_dup");
    const std::string pub = read_file(out_dir + "/id_dup.pub");
    ProcessResult r = env_.run_mlt({"ssh-keygen", "dup", "-o", out_dir});
    EXPECT_EQ(r.exit_code, kExitUsage) << describe(r);
    EXPECT_TRUE(is_one_error_line(r.err));
    EXPECT_TRUE(has_text(r.err, out_dir + "/id_dup"));
    EXPECT_EQ(read_file(out_dir + "/id_dup"), key);
    EXPECT_EQ(read_file(out_dir + "/id_dup.pub"), pub);
}

TEST_F(KeygenTest, RefusesWhenOnlyThePublicHalfExists) {
    const std::string out_dir = dir_.file("keys");
    make_dir(out_dir);
    write_file(out_dir + "/id_half.pub", "precious\n");
    ProcessResult r = env_.run_mlt({"ssh-keygen", "half", "-o", out_dir});
    EXPECT_EQ(r.exit_code, kExitUsage) << describe(r);
    EXPECT_EQ(read_file(out_dir + "/id_half.pub"), "precious\n");
    EXPECT_FALSE(path_exists(out_dir + "/id_half"));
}

TEST_F(KeygenTest, ForceOverwrites) {
    const std::string out_dir = dir_.file("keys");
    ASSERT_EQ(env_.run_mlt({"ssh-keygen", "dup", "-o", out_dir}).exit_code, 0);
    const std::string old_pub = read_file(out_dir + "/id_dup.pub");
    ProcessResult r = env_.run_mlt({"ssh-keygen", "dup", "-o", out_dir, "--force"});
    expect_valid_pair(r, out_dir + "/id_dup", "dup", "ED25519", 256);
    EXPECT_NE(read_file(out_dir + "/id_dup.pub"), old_pub);
}

TEST_F(KeygenTest, UnknownTypeIsUsageError) {
    const std::string out_dir = dir_.file("keys");
    ProcessResult r = env_.run_mlt({"ssh-keygen", "bad", "-t", "dsa", "-o", out_dir});
    EXPECT_EQ(r.exit_code, kExitUsage) << describe(r);
    EXPECT_TRUE(is_one_error_line(r.err));
    EXPECT_FALSE(path_exists(out_dir + "/id_bad"));
}

class KeygenLoginTest : public ::testing::TestWithParam<std::string> {};

TEST_P(KeygenLoginTest, OpenSshLogsInWithGeneratedKey) {
    TestSshd sshd;
    MltEnv env(sshd.home());
    const std::string out_dir = sshd.dir() + "/generated";
    ProcessResult r = env.run_mlt({"ssh-keygen", "login", "-t", GetParam(), "-o", out_dir});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    sshd.authorize_key_file(out_dir + "/id_login.pub");
    ProcessResult ssh =
        env.run(sshd.openssh_argv(out_dir + "/id_login", sshd.dir() + "/known_hosts", "echo in"));
    EXPECT_EQ(ssh.exit_code, 0) << describe(ssh) << "\nsshd log:\n" << sshd.log_text();
    EXPECT_EQ(trim(ssh.out), "in");
}

INSTANTIATE_TEST_SUITE_P(Types, KeygenLoginTest, ::testing::Values("ed25519", "rsa"));

}  // namespace
}  // namespace mlt_test
