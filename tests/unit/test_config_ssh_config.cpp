#include <gtest/gtest.h>
#include <pwd.h>
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

// `Match` as OpenSSH's match_cfg_line: host sees the HostName found so far, originalhost the
// alias, user the command line's user, else the User so far; every criterion must hold.
TEST_F(SshConfigRead, MatchIsEvaluatedAsSshDoes) {
    const std::string path = write(".ssh/config",
                                   "Host gpu\n"
                                   "    HostName gpu.example.com\n"
                                   "Match host *.example.com !originalhost other\n"
                                   "    Port 2200\n"
                                   "Match originalhost gpu user alice\n"
                                   "    IdentityFile ~/.ssh/id_alice\n"
                                   "Match originalhost gpu !user alice\n"
                                   "    IdentityFile ~/.ssh/id_other\n"
                                   "Match host gpu\n"
                                   "    Compression yes\n"
                                   "Match all\n"
                                   "    User bob\n");
    const mlt::SshConfigEntry e = mlt::read_ssh_config(path, "gpu", "alice");
    EXPECT_EQ(e.value("Port"), "2200");
    EXPECT_EQ(e.value("IdentityFile"), "~/.ssh/id_alice");
    EXPECT_EQ(e.value("Compression"), std::nullopt) << "host is the HostName, not the alias";
    EXPECT_EQ(e.value("User"), "bob");
    EXPECT_TRUE(e.warnings().empty());

    // Without a user from the command line, `user` sees the local user.
    const passwd* me = ::getpwuid(::getuid());
    ASSERT_NE(me, nullptr);
    EXPECT_EQ(mlt::read_ssh_config(path, "gpu").value("IdentityFile"),
              std::string(me->pw_name) == "alice" ? "~/.ssh/id_alice" : "~/.ssh/id_other");
    const std::string local =
        write(".ssh/local", "Match localuser " + std::string(me->pw_name) + "\n    Port 2203\n");
    EXPECT_EQ(mlt::read_ssh_config(local, "gpu", "someone_else").value("Port"), "2203");
    // `Match host` on a name given as it is.
    EXPECT_EQ(mlt::read_ssh_config(path, "other").value("Port"), std::nullopt);
    EXPECT_EQ(mlt::read_ssh_config(path, "a.example.com").value("Port"), "2200");
}

TEST_F(SshConfigRead, MatchUserSeesTheUserFoundSoFar) {
    const std::string path = write(".ssh/config",
                                   "Host gpu\n    User carol\n"
                                   "Match user carol\n    Port 2201\n");
    EXPECT_EQ(mlt::read_ssh_config(path, "gpu").value("Port"), "2201");
    EXPECT_EQ(mlt::read_ssh_config(path, "gpu", "dave").value("Port"), std::nullopt);
}

// `Match final` asks for a second reading in which `final` (and `canonical`) hold; the
// values of the first reading still come first.
TEST_F(SshConfigRead, MatchFinalReadsTheFileAgain) {
    const std::string path = write(".ssh/config",
                                   "Match final host real.example.com\n"
                                   "    Port 2202\n"
                                   "Match canonical\n"
                                   "    User canon\n"
                                   "Host gpu\n"
                                   "    HostName real.example.com\n"
                                   "    IdentityFile ~/.ssh/id_gpu\n"
                                   "Match !final\n"
                                   "    User first\n");
    const mlt::SshConfigEntry e = mlt::read_ssh_config(path, "gpu");
    EXPECT_EQ(e.value("Port"), "2202");
    EXPECT_EQ(e.value("User"), "first");
    EXPECT_EQ(e.all("IdentityFile").size(), 1u) << "a line read twice counts once";
    EXPECT_EQ(mlt::read_ssh_config(path, "gpu_nofinal").value("Port"), std::nullopt);
}

// `Match exec` and the network criteria are not evaluated: the block is skipped, with one
// warning naming the line, also when negated.
TEST_F(SshConfigRead, UnevaluatedMatchIsSkippedWithAWarning) {
    const std::string path = write(".ssh/config",
                                   "Match exec \"true\"\n    Port 1\n"
                                   "Match !exec \"false\"\n    Port 2\n"
                                   "Match localport 22\n    Port 3\n"
                                   "Match final\n");
    const mlt::SshConfigEntry e = mlt::read_ssh_config(path, "gpu");
    EXPECT_EQ(e.value("Port"), std::nullopt);
    ASSERT_EQ(e.warnings().size(), 3u);  // once each, though the file is read twice
    EXPECT_NE(e.warnings()[0].find("Match exec at " + path + ":1"), std::string::npos)
        << e.warnings()[0];
    EXPECT_NE(e.warnings()[2].find("localport"), std::string::npos) << e.warnings()[2];
}

TEST_F(SshConfigRead, BadMatchLinesAreConfigErrors) {
    for (const char* line : {"Match\n", "Match host\n", "Match hots gpu\n"}) {
        const std::string path = write(".ssh/config", std::string("# x\n") + line);
        try {
            mlt::read_ssh_config(path, "gpu");
            ADD_FAILURE() << "no error for " << line;
        } catch (const mlt::Error& e) {
            EXPECT_EQ(e.code(), mlt::exit_code::kUsage);
            EXPECT_NE(std::string(e.what()).find(path + ":2"), std::string::npos) << e.what();
        }
    }
}

// An Include inside a Match block is read only when the block applies.
TEST_F(SshConfigRead, IncludeInsideMatchIsConditional) {
    write(".ssh/conf.d/a.conf", "User included\n");
    const std::string path =
        write(".ssh/config", "Match originalhost gpu\n    Include conf.d/*.conf\n");
    EXPECT_EQ(mlt::read_ssh_config(path, "gpu").value("User"), "included");
    EXPECT_EQ(mlt::read_ssh_config(path, "cpu").value("User"), std::nullopt);
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
