#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>

#include "mlt/config/ssh_config.h"
#include "mlt/util/paths.h"

namespace {

class SshConfigLookup : public ::testing::Test {
protected:
    void SetUp() override {
        char tmpl[] = "/tmp/mlt-sshcfg-XXXXXX";
        int fd = ::mkstemp(tmpl);
        ASSERT_GE(fd, 0);
        ::close(fd);
        path_ = tmpl;
        mlt::write_file_atomic(path_,
                               "# comment\n"
                               "Host gpu-* !gpu-lax\n"
                               "    StrictHostKeyChecking yes\n"
                               "Host gpu-lax\n"
                               "  stricthostkeychecking=no\n"
                               "Match host other\n"
                               "  StrictHostKeyChecking no\n"
                               "Host \"quoted box\" box2\n"
                               "  StrictHostKeyChecking \"accept-new\"\n"
                               "Host *\n"
                               "  StrictHostKeyChecking no\n",
                               0600);
    }
    void TearDown() override { std::remove(path_.c_str()); }
    std::string path_;
};

TEST_F(SshConfigLookup, FirstMatchingHostWins) {
    EXPECT_EQ(mlt::ssh_config_lookup(path_, "gpu-1", "StrictHostKeyChecking"), "yes");
    EXPECT_EQ(mlt::ssh_config_lookup(path_, "GPU-2", "StrictHostKeyChecking"), "yes");
    EXPECT_EQ(mlt::ssh_config_lookup(path_, "gpu-lax", "StrictHostKeyChecking"), "no");
    EXPECT_EQ(mlt::ssh_config_lookup(path_, "box2", "StrictHostKeyChecking"), "accept-new");
    EXPECT_EQ(mlt::ssh_config_lookup(path_, "quoted box", "StrictHostKeyChecking"), "accept-new");
    EXPECT_EQ(mlt::ssh_config_lookup(path_, "other", "StrictHostKeyChecking"), "no");  // Host *
}

TEST_F(SshConfigLookup, MissingFileOrKeyword) {
    EXPECT_EQ(mlt::ssh_config_lookup("/nonexistent/cfg", "h", "StrictHostKeyChecking"), std::nullopt);
    EXPECT_EQ(mlt::ssh_config_lookup(path_, "gpu-1", "ProxyJump"), std::nullopt);
}

}  // namespace
