#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "mlt/ssh/keygen.h"
#include "mlt/util/error.h"
#include "mlt/util/paths.h"

namespace fs = std::filesystem;

namespace {

class KeygenTest : public ::testing::Test {
  protected:
    void SetUp() override {
        char tmpl[] = "/tmp/mlt-keygen-XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
    }
    void TearDown() override { fs::remove_all(dir_); }
    static unsigned mode_of(const std::string& p) {
        struct stat st {};
        EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
        return st.st_mode & 0777;
    }
    std::string dir_;
};

TEST_F(KeygenTest, Ed25519WritesPrivate0600AndPublicWithName) {
    mlt::KeygenRequest r;
    r.name = "box";
    r.directory = dir_ + "/keys";  // created 0700
    auto result = mlt::generate_key(r);
    EXPECT_EQ(result.private_path, dir_ + "/keys/id_box");
    EXPECT_EQ(mode_of(dir_ + "/keys"), 0700u);
    EXPECT_EQ(mode_of(result.private_path), 0600u);
    EXPECT_EQ(mode_of(result.public_path), 0644u);
    EXPECT_EQ(result.public_line.rfind("ssh-ed25519 ", 0), 0u) << result.public_line;
    EXPECT_EQ(result.public_line.substr(result.public_line.size() - 4), " box");
    EXPECT_EQ(mlt::read_file(result.public_path), result.public_line + "\n");
    EXPECT_NE(mlt::read_file(result.private_path).find("BEGIN OPENSSH PRIVATE KEY"),
              std::string::npos);
}

TEST_F(KeygenTest, StrictUmaskDoesNotNarrowThePublicKey) {
    mode_t old = ::umask(077);
    mlt::KeygenRequest r;
    r.name = "u";
    r.directory = dir_;
    auto result = mlt::generate_key(r);
    ::umask(old);
    EXPECT_EQ(mode_of(result.public_path), 0644u);
    EXPECT_EQ(mode_of(result.private_path), 0600u);
}

TEST_F(KeygenTest, RsaWithComment) {
    mlt::KeygenRequest r;
    r.name = "r";
    r.type = mlt::KeyType::rsa;
    r.directory = dir_;
    r.comment = "me@laptop";
    auto result = mlt::generate_key(r);
    EXPECT_EQ(result.public_line.rfind("ssh-rsa ", 0), 0u);
    EXPECT_EQ(result.public_line.substr(result.public_line.size() - 10), " me@laptop");
    EXPECT_EQ(mode_of(result.private_path), 0600u);
}

TEST_F(KeygenTest, RefusesToOverwriteAndLeavesTheFileAlone) {
    mlt::KeygenRequest r;
    r.name = "k";
    r.directory = dir_;
    mlt::generate_key(r);
    const std::string before = mlt::read_file(dir_ + "/id_k");
    try {
        mlt::generate_key(r);
        FAIL() << "expected an error";
    } catch (const mlt::Error& e) {
        EXPECT_EQ(e.code(), mlt::exit_code::kUsage);
        EXPECT_NE(std::string(e.what()).find("already exists"), std::string::npos);
        EXPECT_NE(e.hint().find("--force"), std::string::npos);
    }
    EXPECT_EQ(mlt::read_file(dir_ + "/id_k"), before);
    r.force = true;
    mlt::generate_key(r);
    EXPECT_NE(mlt::read_file(dir_ + "/id_k"), before);
}

TEST_F(KeygenTest, RefusesWhenOnlyThePublicHalfExists) {
    mlt::write_file_atomic(dir_ + "/id_p.pub", "ssh-ed25519 AAAA x\n", 0644);
    mlt::KeygenRequest r;
    r.name = "p";
    r.directory = dir_;
    EXPECT_THROW(mlt::generate_key(r), mlt::Error);
    EXPECT_FALSE(fs::exists(dir_ + "/id_p"));
}

TEST_F(KeygenTest, BadRequestsAreUsageErrors) {
    auto expect_usage = [&](mlt::KeygenRequest r) {
        r.directory = dir_;
        try {
            mlt::generate_key(r);
            ADD_FAILURE() << "no error for " << r.name;
        } catch (const mlt::Error& e) {
            EXPECT_EQ(e.code(), mlt::exit_code::kUsage);
        }
    };
    mlt::KeygenRequest r;
    r.name = "../evil";
    expect_usage(r);
    r.name = "";
    expect_usage(r);
    r.name = ".hidden";
    expect_usage(r);
    r.name = "a\x1b[2Jb";  // a control character in a file name
    expect_usage(r);
    r.name = "a b";
    expect_usage(r);
    r.name = "ok";
    r.bits = 4096;  // ed25519 has no size
    expect_usage(r);
    r.type = mlt::KeyType::rsa;
    r.bits = 1024;  // too weak
    expect_usage(r);
    EXPECT_TRUE(fs::is_empty(dir_));
}

// id_<name>.pub and its temporary name must fit the 255 bytes of a file name: a longer name is
// refused as such before anything is written, not by a failing write.
TEST_F(KeygenTest, OverlongNameIsRefusedUpFront) {
    mlt::KeygenRequest r;
    r.directory = dir_;
    r.name = std::string(101, 'k');
    try {
        mlt::generate_key(r);
        ADD_FAILURE() << "no error";
    } catch (const mlt::Error& e) {
        EXPECT_EQ(e.kind(), mlt::ErrorKind::usage) << e.what();
        EXPECT_NE(std::string(e.what()).find("key name of 101 bytes is too long"),
                  std::string::npos)
            << e.what();
    }
    EXPECT_TRUE(fs::is_empty(dir_));
    r.name = std::string(100, 'k');
    mlt::generate_key(r);
    EXPECT_TRUE(fs::exists(dir_ + "/id_" + r.name + ".pub"));
}

TEST_F(KeygenTest, DefaultDirectoryIsHomeSsh) {
    const char* old = std::getenv("HOME");
    std::string saved = old ? old : "";
    ::setenv("HOME", dir_.c_str(), 1);
    mlt::KeygenRequest r;
    r.name = "home";
    auto result = mlt::generate_key(r);
    if (old) ::setenv("HOME", saved.c_str(), 1);
    EXPECT_EQ(result.private_path, dir_ + "/.ssh/id_home");
    EXPECT_EQ(mode_of(dir_ + "/.ssh"), 0700u);
}

}  // namespace
