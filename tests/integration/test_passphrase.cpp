// Encrypted private keys: the passphrase comes from the terminal or from SSH_ASKPASS.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness/expect.h"
#include "harness/files.h"
#include "harness/openssh.h"
#include "harness/ssh_test.h"

namespace mlt_test {
namespace {

constexpr const char* kPassphrase = "secretpass";
constexpr int kExitUsage = 2;

class PassphraseTest : public SshTest {
  protected:
    void SetUp() override {
        SshTest::SetUp();
        key_ = sshd().dir() + "/encrypted_key";
        make_ssh_key(key_, "ed25519", kPassphrase, "encrypted");
        sshd().authorize_key_file(key_ + ".pub");
        trust_server_in(custom_known_hosts());
    }

    std::vector<std::string> status_args() const {
        return {"ssh",
                "-h",
                host_with_dir(),
                "-i",
                key_,
                "-o",
                "UserKnownHostsFile=" + custom_known_hosts(),
                "status"};
    }

    // An askpass program that records its prompt in askpass_log() and prints `answer`.
    std::string write_askpass(const std::string& answer) {
        const std::string path = sshd().dir() + "/askpass.sh";
        std::string script = "#!/bin/sh\n";
        script += "printf '%s\\n' \"$1\" >> '" + askpass_log() + "'\n";
        script += "printf '%s\\n' '" + answer + "'\n";
        write_file(path, script, 0700);
        return path;
    }
    std::string askpass_log() const { return sshd().dir() + "/askpass.log"; }

    std::string key_;
};

TEST_F(PassphraseTest, PromptsOnTheTerminal) {
    PtyResult r =
        env().run_mlt_in_pty(status_args(), {{"passphrase", std::string(kPassphrase) + "\n",
                                              /*secret=*/true}});
    ASSERT_EQ(r.steps_done, 1u) << "no passphrase prompt\n" << describe(r);
    EXPECT_EQ(r.exit_code, 0) << describe(r) << sshd_log();
    EXPECT_TRUE(has_text(r.output, "Enter passphrase for key '" + key_ + "'"));
    EXPECT_TRUE(contains_icase(r.output, "no job")) << describe(r);
    EXPECT_TRUE(logged_in());
    EXPECT_TRUE(lacks_text(r.output, kPassphrase)) << "the passphrase was echoed";
}

TEST_F(PassphraseTest, AskpassWithoutTerminal) {
    env().set("SSH_ASKPASS", write_askpass(kPassphrase));
    env().set("SSH_ASKPASS_REQUIRE", "force");
    ProcessResult r = env().run_mlt(status_args());
    ASSERT_EQ(r.exit_code, 0) << describe(r) << sshd_log();
    EXPECT_TRUE(contains_icase(r.out, "no job")) << describe(r);
    EXPECT_TRUE(logged_in());
    ASSERT_TRUE(path_exists(askpass_log())) << "SSH_ASKPASS was not run";
    EXPECT_TRUE(contains_icase(read_file(askpass_log()), "passphrase"));
}

TEST_F(PassphraseTest, WrongPassphraseIsKeyErrorBeforeConnecting) {
    env().set("SSH_ASKPASS", write_askpass("not-the-passphrase"));
    env().set("SSH_ASKPASS_REQUIRE", "force");
    const std::size_t log_offset = sshd().log_size();
    ProcessResult r = env().run_mlt(status_args());
    EXPECT_EQ(r.exit_code, kExitUsage) << describe(r);
    EXPECT_TRUE(is_one_error_line(r.err));
    EXPECT_TRUE(has_text(r.err, key_)) << "the error should name the key file";
    EXPECT_TRUE(sshd().connections_since(log_offset).empty()) << sshd_log();
}

TEST_F(PassphraseTest, NoTerminalNoAskpassFailsFastWithoutConnecting) {
    // Nothing can supply the passphrase: a key problem (exit 2) found before any remote
    // action (bad input: exit 2 before anything remote), and no hang waiting for input.
    const std::size_t log_offset = sshd().log_size();
    ProcessResult r = env().run_mlt(status_args());
    EXPECT_EQ(r.exit_code, kExitUsage) << describe(r);
    EXPECT_FALSE(r.timed_out);
    EXPECT_TRUE(is_one_error_line(r.err));
    EXPECT_TRUE(sshd().connections_since(log_offset).empty()) << sshd_log();
}

}  // namespace
}  // namespace mlt_test
