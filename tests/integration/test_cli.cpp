// The command line itself: version, help, usage errors, settings errors.
#include <gtest/gtest.h>

#include <cctype>
#include <string>
#include <vector>

#include "harness/expect.h"
#include "harness/files.h"
#include "harness/mlt_env.h"
#include "harness/net.h"
#include "harness/temp_dir.h"

namespace mlt_test {
namespace {

constexpr int kExitUsage = 2;

class CliTest : public ::testing::Test {
  protected:
    CliTest() : env_(dir_.file("home")) {}

    // A -h value for a port where nothing listens: reaching the network would give 255.
    std::string unreachable_host() const {
        return "127.0.0.1:" + std::to_string(closed_port_.port()) + "/" + dir_.file("remote");
    }

    TempDir dir_{"mlt-cli-"};
    MltEnv env_;
    ClosedPort closed_port_;
};

TEST_F(CliTest, VersionPrintsNameAndVersion) {
    ProcessResult r = env_.run_mlt({"--version"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    const std::string line = trim(r.out);
    ASSERT_EQ(line.rfind("mlt ", 0), 0u) << describe(r);
    ASSERT_GT(line.size(), 4u);
    EXPECT_TRUE(std::isdigit(static_cast<unsigned char>(line[4]))) << describe(r);
    EXPECT_EQ(split_lines(line).size(), 1u) << describe(r);
}

TEST_F(CliTest, HelpListsCommands) {
    ProcessResult r = env_.run_mlt({"--help"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(has_text(r.out, "ssh-keygen"));
    EXPECT_TRUE(has_text(r.out, "jobs"));
    // "ssh" on its own, not only as part of "ssh-keygen".
    bool plain_ssh = false;
    for (std::size_t at = r.out.find("ssh"); at != std::string::npos;
         at = r.out.find("ssh", at + 1)) {
        plain_ssh = plain_ssh || r.out.compare(at, 7, "ssh-key") != 0;
    }
    EXPECT_TRUE(plain_ssh) << describe(r);
}

TEST_F(CliTest, SshHelpListsStatus) {
    ProcessResult r = env_.run_mlt({"ssh", "--help"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(has_text(r.out, "status"));
}

// Where the settings come from and where the results land, as MLTK's help says.
TEST_F(CliTest, SshAndTrainHelpNameTheSettingsFileAndTheResults) {
    for (const auto& args : {std::vector<std::string>{"ssh", "--help"},
                             std::vector<std::string>{"ssh", "train", "--help"}}) {
        ProcessResult r = env_.run_mlt(args);
        ASSERT_EQ(r.exit_code, 0) << describe(r);
        EXPECT_TRUE(has_text(r.out, "~/.mltk/user_settings.yaml")) << r.out;
        EXPECT_TRUE(has_text(r.out, "MODEL.ssh.yaml")) << r.out;
        EXPECT_TRUE(has_text(r.out, "MODEL.mltk.zip beside the spec")) << r.out;
        EXPECT_TRUE(has_text(r.out, "models/MODEL/")) << r.out;
    }
}

TEST_F(CliTest, UnknownOptionIsUsageError) {
    ProcessResult r = env_.run_mlt({"--no-such-option"});
    EXPECT_EQ(r.exit_code, kExitUsage) << describe(r);
    EXPECT_TRUE(is_one_error_line(r.err));
    EXPECT_TRUE(has_text(r.err, "--no-such-option")) << "the error should name the option";
}

TEST_F(CliTest, UnknownSubcommandIsUsageError) {
    ProcessResult r = env_.run_mlt({"frobnicate"});
    EXPECT_EQ(r.exit_code, kExitUsage) << describe(r);
    EXPECT_TRUE(is_one_error_line(r.err));
    EXPECT_TRUE(has_text(r.err, "frobnicate")) << "the error should name the command";
}

TEST_F(CliTest, UnknownSshOptionIsUsageError) {
    ProcessResult r = env_.run_mlt({"ssh", "--bogus", "-h", unreachable_host(), "status"});
    EXPECT_EQ(r.exit_code, kExitUsage) << describe(r);
    EXPECT_TRUE(is_one_error_line(r.err));
    EXPECT_TRUE(has_text(r.err, "--bogus")) << "the error should name the option";
}

TEST_F(CliTest, UnknownSshCommandIsUsageErrorBeforeConnecting) {
    ProcessResult r = env_.run_mlt({"ssh", "-h", unreachable_host(), "frobnicate"});
    EXPECT_EQ(r.exit_code, kExitUsage) << describe(r);
    EXPECT_TRUE(is_one_error_line(r.err));
    EXPECT_TRUE(has_text(r.err, "frobnicate")) << "the error should name the command";
}

TEST_F(CliTest, BadPortIsUsageError) {
    ProcessResult r = env_.run_mlt({"ssh", "-h", "127.0.0.1:99999", "status"});
    EXPECT_EQ(r.exit_code, kExitUsage) << describe(r);
    EXPECT_TRUE(is_one_error_line(r.err));
    EXPECT_TRUE(has_text(r.err, "99999"));

    r = env_.run_mlt({"ssh", "-h", "127.0.0.1", "-p", "notaport", "status"});
    EXPECT_EQ(r.exit_code, kExitUsage) << describe(r);
    EXPECT_TRUE(is_one_error_line(r.err));
}

TEST_F(CliTest, NoHostAnywhereIsUsageError) {
    ProcessResult r = env_.run_mlt({"ssh", "status"});
    EXPECT_EQ(r.exit_code, kExitUsage) << describe(r);
    EXPECT_TRUE(is_one_error_line(r.err));
}

TEST_F(CliTest, MalformedSettingsNameFileAndLine) {
    env_.write_settings("ssh:\n  remote_dir: /x\n  connection: [unclosed\n");
    ProcessResult r = env_.run_mlt({"ssh", "-h", unreachable_host(), "status"});
    EXPECT_EQ(r.exit_code, kExitUsage) << describe(r);
    EXPECT_TRUE(is_one_error_line(r.err));
    EXPECT_TRUE(has_text(r.err, env_.settings_path()));
}

TEST_F(CliTest, WrongSettingTypeIsUsageError) {
    env_.write_settings("ssh:\n  connection:\n    port: not-a-number\n");
    ProcessResult r = env_.run_mlt({"ssh", "-h", unreachable_host(), "status"});
    EXPECT_EQ(r.exit_code, kExitUsage) << describe(r);
    EXPECT_TRUE(is_one_error_line(r.err));
    // "file, line and column" (docs/settings.md): the bad value is on line 3.
    const std::size_t at = r.err.find(env_.settings_path());
    ASSERT_NE(at, std::string::npos) << describe(r);
    EXPECT_TRUE(has_text(r.err.substr(at), "3")) << "no line number";
}

}  // namespace
}  // namespace mlt_test
