// The command line of `mlt ssh ... train` as MLTK's click parser takes it, end to end: what
// reaches the remote training command, in which order, under which model name.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness/expect.h"
#include "harness/files.h"
#include "harness/net.h"
#include "harness/train_fixture.h"

namespace mlt_test {
namespace {

using Words = std::vector<std::string>;

// A stand-in training: prints each argument it got, then what mlt told it; writes an archive.
const char* const kEchoModel =
    "for a in \"$@\"; do printf 'arg[%s]\\n' \"$a\"; done\n"
    "printf 'model[%s] clean[%s] verbose[%s]\\n' \"$MLT_MODEL\" \"$MLT_CLEAN\" \"$MLT_VERBOSE\"\n"
    "printf 'logdir[%s] archive[%s]\\n' \"$MLT_LOG_DIR\" \"$MLT_ARCHIVE\"\n"
    "echo archive > \"$MLT_ARCHIVE\"\n";
// As `mltk train {model} ARGS...`: the model name first, then the train ARGS.
const char* const kEchoSidecar = "ssh:\n  train_cmd: \"sh {spec} {model}\"\n";

class TrainArgsTest : public TrainTest {
  protected:
    void SetUp() override {
        TrainTest::SetUp();
        write_shell_model("echo", kEchoModel);
        write_model_settings("echo", kEchoSidecar);
    }

    // The arguments the training printed in the console log of `model`, in order.
    Words args_seen(const std::string& model) const {
        Words args;
        for (const auto& line : lines_starting(read_or_empty(local_console(model)), "arg["))
            args.push_back(line.substr(4, line.size() - 5));
        return args;
    }
    // The `model[...] clean[...] verbose[...]` line of the console log of `model`.
    std::string env_seen(const std::string& model) const {
        const auto lines = lines_starting(read_or_empty(local_console(model)), "model[");
        return lines.size() == 1 ? lines.front() : "(" + std::to_string(lines.size()) + " lines)";
    }
};

TEST_F(TrainArgsTest, ArgsReachTheTrainingInTheirOrder) {
    write_user_settings();
    ProcessResult r = mlt({"ssh", "train", "echo", "--epochs", "3", "data.csv", "--clean",
                           "--weights", "best", "-v", "--", "-v", "--clean"});
    ASSERT_EQ(r.exit_code, 0) << describe(r) << job_state("echo");
    EXPECT_EQ(args_seen("echo"),
              (Words{"echo", "--epochs", "3", "data.csv", "--weights", "best", "-v", "--clean"}))
        << describe(r);
    EXPECT_EQ(env_seen("echo"), "model[echo] clean[1] verbose[1]");
    // The echoed command is the one that runs: with the ARGS.
    EXPECT_TRUE(has_text(r.out,
                         "mlt: training: sh echo.py echo --epochs 3 data.csv --weights "
                         "best -v --clean\n"))
        << describe(r);
}

TEST_F(TrainArgsTest, TrainOptionsBeforeTheCommandAsMltk) {
    write_user_settings();
    ProcessResult r = mlt({"ssh", "--clean", "-v", "train", "echo", "--epochs", "1"});
    ASSERT_EQ(r.exit_code, 0) << describe(r) << job_state("echo");
    EXPECT_EQ(args_seen("echo"), (Words{"echo", "--epochs", "1"})) << describe(r);
    EXPECT_EQ(env_seen("echo"), "model[echo] clean[1] verbose[1]");

    // The --no- form after MODEL wins over the flag before train.
    r = mlt({"ssh", "--clean", "train", "echo", "--no-clean"});
    ASSERT_EQ(r.exit_code, 0) << describe(r) << job_state("echo");
    EXPECT_EQ(env_seen("echo"), "model[echo] clean[] verbose[]");
}

TEST_F(TrainArgsTest, ConnectionOptionsAfterTheModelAreMltsOwn) {
    // Nothing about the connection in the settings; the -h port is closed: only -p works.
    env().write_settings(base_settings(false));
    ClosedPort closed;
    const std::string config = env().ssh_dir() + "/empty_config";
    write_file(config, "", 0600);
    const std::string host =
        sshd().user() + "@127.0.0.1:" + std::to_string(closed.port()) + "/" + sshd().remote_dir();
    ProcessResult r = mlt({"ssh", "train", "echo", "-h", host, "--epochs", "2", "-p",
                           std::to_string(sshd().port()), "-i", sshd().client_key_path(),
                           "--weights", "w", "-o", "ConnectTimeout=30", "-F", config});
    ASSERT_EQ(r.exit_code, 0) << describe(r) << job_state("echo");
    EXPECT_TRUE(logged_in());
    EXPECT_EQ(args_seen("echo"), (Words{"echo", "--epochs", "2", "--weights", "w"})) << describe(r);
}

// MLT_* are mlt's: the settings' environment cannot move the log dir mlt pulls (it once
// pulled the remote's /etc/ssh) or the archive; one warning names the key and the file.
TEST_F(TrainArgsTest, EnvironmentCannotReplaceMltsOwnVariables) {
    // Stand-ins for /etc/ssh and a file to overwrite, inside the test's own directory.
    const std::string foreign = sshd().dir() + "/foreign";
    make_dir(foreign, 0755);
    write_file(foreign + "/sshd_config", "not the logs\n");
    write_user_settings();
    write_model_settings("echo", std::string(kEchoSidecar) + "  environment: {MLT_LOG_DIR: \"" +
                                     foreign + "\", MLT_MODEL: other, MLT_ARCHIVE: \"" + foreign +
                                     "/archive\", KEPT: yes}\n");
    ProcessResult r = mlt({"ssh", "train", "echo"});
    ASSERT_EQ(r.exit_code, 0) << describe(r) << job_state("echo");
    EXPECT_EQ(env_seen("echo"), "model[echo] clean[] verbose[]");
    const auto seen = lines_starting(read_or_empty(local_console("echo")), "logdir[");
    ASSERT_EQ(seen.size(), 1u) << read_or_empty(local_console("echo"));
    EXPECT_EQ(seen.front(), "logdir[" + remote_logs_root() + "/echo] archive[echo.mltk.zip]");
    EXPECT_FALSE(path_exists(local_logs("echo") + "/sshd_config")) << "pulled the foreign dir";
    EXPECT_FALSE(path_exists(foreign + "/archive"));
    const auto warnings = lines_starting(r.err, "mlt: warning: " + project() + "/echo.ssh.yaml:");
    ASSERT_EQ(warnings.size(), 3u) << describe(r);
    for (const char* key : {"MLT_LOG_DIR", "MLT_MODEL", "MLT_ARCHIVE"})
        EXPECT_EQ(count_occurrences(r.err, "sets " + std::string(key) + ", one of mlt's own"), 1u)
            << describe(r);
}

TEST_F(TrainArgsTest, TestFlagTrainsTheTestModel) {
    write_user_settings();
    ProcessResult r = mlt({"ssh", "train", "echo", "--test", "--epochs", "1"});
    ASSERT_EQ(r.exit_code, 0) << describe(r) << job_state("echo-test");
    // `mltk train echo-test --test ...`, as MLTK's ssh command runs it.
    EXPECT_EQ(args_seen("echo-test"), (Words{"echo-test", "--test", "--epochs", "1"}))
        << describe(r);
    EXPECT_EQ(env_seen("echo-test"), "model[echo-test] clean[] verbose[]");
    EXPECT_EQ(read_or_empty(local_archive("echo-test")), "archive\n") << describe(r);
    EXPECT_TRUE(path_exists(job_dir("echo-test")));
    EXPECT_FALSE(path_exists(local_logs("echo"))) << "logs under the spec's name";
    EXPECT_FALSE(path_exists(local_archive("echo")));
    EXPECT_FALSE(path_exists(job_dir("echo")));

    // NAME-test with --test is still NAME-test.
    r = mlt({"ssh", "train", "echo-test", "--test"});
    ASSERT_EQ(r.exit_code, 0) << describe(r) << job_state("echo-test");
    EXPECT_EQ(args_seen("echo-test"), (Words{"echo-test", "--test"})) << describe(r);
    EXPECT_FALSE(path_exists(job_dir("echo-test-test")));
    EXPECT_FALSE(path_exists(local_logs("echo-test-test")));
}

}  // namespace
}  // namespace mlt_test
