// `mlt ssh ... train MODEL --dry-run` against a real sshd: the plan is printed, secrets
// hidden, and sshd sees no connection at all; bad input is refused exactly as train refuses it.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "harness/expect.h"
#include "harness/files.h"
#include "harness/train_fixture.h"

namespace fs = std::filesystem;

namespace mlt_test {
namespace {

using DryRunTest = TrainTest;

const std::string kEnvSecret = "env-s3cr3t-value";
const std::string kUrlSecret = "T0000/url-s3cr3t-path";

// The lines of `err` that say mlt's error ("mlt: error: ...").
std::vector<std::string> error_lines(const std::string& err) {
    return lines_starting(err, "mlt: error:");
}

TEST_F(DryRunTest, PrintsThePlanAndNeverConnects) {
    const std::string remote_dir = remote() + "/never-made";
    write_shell_model("m", "echo training\n");
    // The sidecar lies in the workspace and names a notify URL: it must stay here.
    write_model_settings("m", "ssh:\n  train_cmd: \"sh {spec}\"\n  remote_dir: \"" + remote_dir +
                                  "\"\n  workspace: \".\"\n  notify: [{url: "
                                  "\"https://hooks.example.com/services/" +
                                  kUrlSecret + "\", format: slack}]\n");
    write_file(project() + "/data.csv", std::string(1024, 'x'), 0644);
    write_file(project() + "/scratch.tmp", "x", 0644);
    write_file(project() + "/.gitignore", "*.tmp\n", 0644);
    write_file(project() + "/.env", "TOKEN=x\n", 0600);
    write_user_settings("  environment:\n    - \"MY_TOKEN=" + kEnvSecret + "\"\n");
    const std::size_t log_offset = sshd().log_size();

    ProcessResult r = mlt({"ssh", "train", "m", "--dry-run", "--max-hours", "2", "--epochs", "3"});

    ASSERT_EQ(r.exit_code, 0) << describe(r);
    for (const std::string& line : std::vector<std::string>{
             "Plan of train m (--dry-run: nothing was connected to, nothing was sent)\n",
             "  127.0.0.1 (from ssh.connection.hostname) -> " + sshd().user() +
                 "@127.0.0.1:" + std::to_string(sshd().port()) + "\n",
             "\nRemote dir\n  " + remote_dir + "\n", "  data.csv    1.0 KiB\n",
             "  scratch.tmp: ignored by .gitignore: *.tmp\n",
             "  .env: looks like a secret: never synced\n",
             "m.ssh.yaml: the model's settings file with a secret in it", "  sh m.py --epochs 3\n",
             "  MY_TOKEN=(hidden)\n", "  max hours: 2 (then stop, collect, exit 5)\n",
             "  https://hooks.example.com/… (slack)\n"})
        EXPECT_TRUE(has_text(r.out, line)) << describe(r);
    for (const std::string& secret : {kEnvSecret, kUrlSecret}) {
        EXPECT_EQ(r.out.find(secret), std::string::npos) << secret << "\n" << describe(r);
        EXPECT_EQ(r.err.find(secret), std::string::npos) << secret << "\n" << describe(r);
    }
    EXPECT_TRUE(sshd().connections_since(log_offset).empty()) << sshd_log();
    EXPECT_EQ(login_count(), 0u) << sshd_log();
    EXPECT_FALSE(fs::exists(remote_dir)) << describe(r);
    EXPECT_FALSE(fs::exists(local_logs("m"))) << describe(r);
    // No local lock either: a dry run may look while a run of the model goes on.
    EXPECT_FALSE(fs::exists(sshd().home() + "/.mltk/ssh/models/m")) << describe(r);
}

// Each bad input: train's exit code and error line, given again with --dry-run; neither
// connects.
TEST_F(DryRunTest, BadInputFailsAsTrainFails) {
    write_shell_model("m", "echo training\n");
    write_model_settings("m", "ssh:\n  train_cmd: \"sh {spec}\"\n");
    struct Case {
        std::string name;
        std::vector<std::string> args;
        std::string settings;  // added to the user settings
    };
    const std::vector<Case> cases{
        {"missing spec", {"ssh", "train", "nosuch"}, ""},
        {"settings error", {"ssh", "train", "m"}, "  reconnect_timeout: soon\n"},
        {"missing key file", {"ssh", "train", "m", "-i", project() + "/no_such_key"}, ""}};
    const std::size_t log_offset = sshd().log_size();
    for (const Case& c : cases) {
        write_user_settings(c.settings);
        ProcessResult train = mlt(c.args);
        std::vector<std::string> args = c.args;
        args.push_back("--dry-run");
        ProcessResult dry = mlt(args);
        EXPECT_NE(train.exit_code, 0) << c.name << "\n" << describe(train);
        EXPECT_EQ(dry.exit_code, train.exit_code) << c.name << "\n" << describe(dry);
        EXPECT_FALSE(error_lines(train.err).empty()) << c.name << "\n" << describe(train);
        EXPECT_EQ(error_lines(dry.err), error_lines(train.err)) << c.name << "\n" << describe(dry);
        EXPECT_EQ(dry.out, "") << c.name << "\n" << describe(dry);
    }
    EXPECT_TRUE(sshd().connections_since(log_offset).empty()) << sshd_log();
}

}  // namespace
}  // namespace mlt_test
