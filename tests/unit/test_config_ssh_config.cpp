#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "mlt/config/ssh_config.h"
#include "mlt/util/error.h"
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
    EXPECT_EQ(mlt::ssh_config_lookup("/nonexistent/cfg", "h", "StrictHostKeyChecking"),
              std::nullopt);
    EXPECT_EQ(mlt::ssh_config_lookup(path_, "gpu-1", "ProxyJump"), std::nullopt);
}

// A temporary $HOME with .ssh/, for configs that include other files.
class SshConfigRead : public ::testing::Test {
  protected:
    void SetUp() override {
        std::string tmpl = (std::filesystem::temp_directory_path() / "mlt-sshcfg-XXXXXX").string();
        ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
        home_ = tmpl;
        std::filesystem::create_directories(home_ + "/.ssh/conf.d");
        if (const char* h = std::getenv("HOME")) old_home_ = h;
        ::setenv("HOME", home_.c_str(), 1);
    }
    void TearDown() override {
        if (old_home_)
            ::setenv("HOME", old_home_->c_str(), 1);
        else
            ::unsetenv("HOME");
        std::filesystem::remove_all(home_);
    }
    std::string write(const std::string& relative, const std::string& text) {
        const std::string path = home_ + "/" + relative;
        mlt::write_file_atomic(path, text, 0600);
        return path;
    }
    std::string home_;
    std::optional<std::string> old_home_;
};

TEST_F(SshConfigRead, AliasEntryAsOpenSshReadsIt) {
    const std::string path = write(".ssh/config",
                                   "Host vast_ai\n"
                                   "    HostName ssh4.vast.ai\n"
                                   "    Port = 35023\n"
                                   "    IdentityFile ~/.ssh/id_vast\n"
                                   "    ProxyCommand sh -c \"nc %h %p\"   \n"
                                   "Host *\n"
                                   "    Port 22\n"
                                   "    User root\n"
                                   "    IdentityFile ~/.ssh/id_other\n");
    const mlt::SshConfigEntry e = mlt::read_ssh_config(path, "vast_ai");
    EXPECT_EQ(e.host(), "vast_ai");
    EXPECT_EQ(e.hostname(), "ssh4.vast.ai");
    EXPECT_EQ(e.value("port"), "35023");          // the first value wins, any case
    EXPECT_EQ(e.value("User"), "root");           // from Host *
    ASSERT_EQ(e.all("IdentityFile").size(), 2u);  // every IdentityFile is kept, in order
    EXPECT_EQ(e.all("IdentityFile")[0].args.front(), "~/.ssh/id_vast");
    const mlt::SshConfigValue* proxy = e.first("ProxyCommand");
    ASSERT_NE(proxy, nullptr);
    EXPECT_EQ(proxy->raw, "sh -c \"nc %h %p\"");  // as written, quotes kept
    EXPECT_EQ(proxy->line, 5);
    EXPECT_EQ(proxy->where(), path + ":5");
    EXPECT_EQ(e.first("Ciphers"), nullptr);

    // Host patterns are matched against the name as typed, not against its HostName.
    EXPECT_EQ(mlt::read_ssh_config(path, "ssh4.vast.ai").value("Port"), "22");
}

TEST_F(SshConfigRead, HostNameTokensAndDefault) {
    const std::string path = write(".ssh/config",
                                   "Host *.corp\n    HostName %h.example.com\n"
                                   "Host pct\n    HostName 100%%.example\n");
    EXPECT_EQ(mlt::read_ssh_config(path, "gpu.corp").hostname(), "gpu.corp.example.com");
    EXPECT_EQ(mlt::read_ssh_config(path, "pct").hostname(), "100%.example");
    EXPECT_EQ(mlt::read_ssh_config(path, "plain").hostname(), "plain");
    EXPECT_EQ(mlt::read_ssh_config(home_ + "/missing", "plain").hostname(), "plain");
}

TEST_F(SshConfigRead, IncludeIsFollowedWhereItApplies) {
    write(".ssh/conf.d/10-gpu.conf", "Host gpu_box\n    HostName 10.0.0.5\n    User ubuntu\n");
    write(".ssh/conf.d/20-rest.conf", "Host *\n    User nobody\n");
    write(".ssh/inactive.conf", "HostName 10.9.9.9\n");
    write(".ssh/extra.conf", "Host nothing_here\n    Port 1\n");
    const std::string path = write(".ssh/config",
                                   "Include conf.d/*.conf\n"
                                   "Host other\n"
                                   "    Include ~/.ssh/inactive.conf\n"
                                   "Host gpu_box\n"
                                   "    Include extra.conf\n"
                                   "    Port 2222\n");
    const mlt::SshConfigEntry e = mlt::read_ssh_config(path, "gpu_box");
    EXPECT_EQ(e.hostname(), "10.0.0.5");
    EXPECT_EQ(e.value("User"), "ubuntu");  // 10- before 20-: globs are sorted
    // A Host line inside an included file does not end the block that includes it.
    EXPECT_EQ(e.value("Port"), "2222");
    EXPECT_EQ(e.first("HostName")->file, home_ + "/.ssh/conf.d/10-gpu.conf");
    EXPECT_EQ(mlt::read_ssh_config(path, "other").hostname(), "10.9.9.9");
}

TEST_F(SshConfigRead, MatchBlocksAreSkipped) {
    const std::string path =
        write(".ssh/config", "Match host gpu\n    User matched\nHost gpu\n    User hosted\n");
    EXPECT_EQ(mlt::read_ssh_config(path, "gpu").value("User"), "hosted");
}

TEST_F(SshConfigRead, SelfIncludeIsAnError) {
    const std::string path = write(".ssh/config", "Include config\n");
    try {
        mlt::read_ssh_config(path, "h");
        ADD_FAILURE() << "no error";
    } catch (const mlt::Error& e) {
        EXPECT_EQ(e.code(), mlt::exit_code::kUsage);
        EXPECT_NE(std::string(e.what()).find(path + ":1"), std::string::npos) << e.what();
    }
}

}  // namespace
