// What reaches the training and what comes back: the console log (stdout and stderr),
// environment values, upload_files and download_files.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "harness/expect.h"
#include "harness/files.h"
#include "harness/train_fixture.h"

namespace mlt_test {
namespace {

using TrainFilesTest = TrainTest;

const char* const kShellSidecar = "ssh:\n  train_cmd: \"sh {spec}\"\n";

TEST_F(TrainFilesTest, StderrOfTheTrainingIsInTheConsoleLog) {
    write_shell_model("noisy",
                      "echo 'out line 1'\n"
                      "echo 'err line 1' >&2\n"
                      "echo 'out line 2'\n"
                      "echo 'err line 2' >&2\n");
    write_model_settings("noisy", kShellSidecar);
    write_user_settings();
    ProcessResult r = mlt({"ssh", "train", "noisy"});
    ASSERT_EQ(r.exit_code, 0) << describe(r) << job_state("noisy");
    const std::string expected = "out line 1\nerr line 1\nout line 2\nerr line 2\n";
    // In the order written, in the local copy and on mlt's stdout, each exactly once.
    const std::string console = read_or_empty(local_console("noisy"));
    EXPECT_TRUE(has_text(console, expected));
    EXPECT_EQ(count_occurrences(console, "err line"), 2u) << console;
    EXPECT_TRUE(has_text(r.out, expected)) << describe(r);
    EXPECT_EQ(count_occurrences(r.out, "err line"), 2u) << describe(r);
    // The local copy is the remote console log, byte for byte.
    EXPECT_EQ(console, read_or_empty(job_file("noisy", "console.log")));
}

TEST_F(TrainFilesTest, EnvironmentValuesArriveExactlyAndExpandHome) {
    const std::string remote_home = sshd().remote_home();  // HOME of the server's sessions
    write_shell_model("envtest",
                      "printf '[%s]\\n' \"$SPACES\" \"$QUOTES\" \"$AT_HOME\" \"$FROM_MODEL\" "
                      "\"$OVERRIDDEN\"\n");
    // The model's sidecar uses the mapping form; it wins per variable over the user list.
    write_model_settings(
        "envtest", std::string(kShellSidecar) +
                       "  environment:\n"
                       "    FROM_MODEL: \"model value\"\n"
                       "    OVERRIDDEN: \"from the model\"\n"
                       "  startup_cmds: [\"printf 'startup [%s]\\\\n' \\\"$QUOTES\\\"\"]\n"
                       "  shutdown_cmds: [\"printf '[%s]' \\\"$QUOTES\\\" > shutdown-env.txt\"]\n");
    write_user_settings(
        "  environment:\n"
        "    - \"SPACES=two  words\tand a tab \"\n"
        "    - 'QUOTES=say \"hi\" and ''bye'' ; echo injected'\n"
        "    - \"AT_HOME=$HOME/data dir\"\n"
        "    - \"OVERRIDDEN=from the user\"\n");
    ProcessResult r = mlt({"ssh", "train", "envtest"});
    ASSERT_EQ(r.exit_code, 0) << describe(r) << job_state("envtest");
    const std::string quotes = "say \"hi\" and 'bye' ; echo injected";
    const std::string expected = "[two  words\tand a tab ]\n[" + quotes + "]\n[" + remote_home +
                                 "/data dir]\n[model value]\n[from the model]\n";
    const std::string console = read_or_empty(local_console("envtest"));
    EXPECT_TRUE(has_text(console, expected)) << describe(r);
    EXPECT_EQ(count_lines(console, "injected"), 0u) << "a value was run as a command";
    // startup_cmds and shutdown_cmds see the same environment.
    EXPECT_TRUE(has_text(console, "startup [" + quotes + "]"));
    EXPECT_EQ(read_or_empty(remote() + "/shutdown-env.txt"), "[" + quotes + "]") << describe(r);
}

// A byte string with every byte value, to catch any text-mode or encoding mangling.
std::string all_bytes() {
    std::string bytes;
    for (int round = 0; round < 4; ++round) {
        for (int b = 0; b < 256; ++b) bytes.push_back(static_cast<char>(b));
    }
    return bytes;
}

TEST_F(TrainFilesTest, UploadAndDownloadGlobsAndAbsolutePairs) {
    const std::string local_in = sshd().dir() + "/outside/input.bin";
    const std::string remote_in = sshd().dir() + "/remote-abs/deep/input.bin";
    const std::string remote_out = sshd().dir() + "/remote-out/result.bin";
    const std::string local_out = sshd().dir() + "/local-out/deep/result.bin";
    make_dir(sshd().dir() + "/outside", 0755);
    make_dir(sshd().dir() + "/remote-out", 0755);
    write_file(local_in, all_bytes());
    make_dir(project() + "/data", 0755);
    make_dir(project() + "/data/sub", 0755);
    write_file(project() + "/data/a.csv", "a,1\n");
    write_file(project() + "/data/b.csv", "b,2\n");
    write_file(project() + "/data/notes.txt", "not a csv\n");
    write_file(project() + "/data/sub/c.csv", "one level too deep for data/*.csv\n");

    // The model checks what arrived and leaves results for the downloads.
    write_shell_model("files",
                      "set -e\n"
                      "mkdir -p results\n"
                      "(cd data && find . -type f | sort) > results/uploaded.txt\n"
                      "cp '" +
                          remote_in + "' '" + remote_out +
                          "'\n"
                          "echo one > results/r1.txt\n"
                          "echo two > results/r2.txt\n"
                          "echo skipped > results/skip.log\n");
    write_model_settings("files", std::string(kShellSidecar) +
                                      "  upload_files:\n"
                                      "    - \"data/*.csv\"\n"
                                      "    - \"" +
                                      local_in + "|" + remote_in +
                                      "\"\n"
                                      "  download_files:\n"
                                      "    - \"" +
                                      remote_out + "|" + local_out +
                                      "\"\n"
                                      "    - \"results/*.txt\"\n");
    write_user_settings();
    ProcessResult r = mlt({"ssh", "train", "files"});
    ASSERT_EQ(r.exit_code, 0) << describe(r) << job_state("files");

    // Uploads: the glob's matches (only), relative to the remote dir; the pair, absolute.
    EXPECT_EQ(read_or_empty(remote() + "/data/a.csv"), "a,1\n");
    EXPECT_EQ(read_or_empty(remote() + "/data/b.csv"), "b,2\n");
    EXPECT_FALSE(path_exists(remote() + "/data/notes.txt"));
    EXPECT_FALSE(path_exists(remote() + "/data/sub/c.csv"));
    EXPECT_EQ(read_or_empty(remote() + "/results/uploaded.txt"), "./a.csv\n./b.csv\n");
    EXPECT_TRUE(read_or_empty(remote_in) == all_bytes()) << "remote copy of the pair differs";

    // Downloads: the pair to its absolute local path; the glob relative to the spec dir.
    ASSERT_TRUE(path_exists(local_out)) << describe(r);
    EXPECT_TRUE(read_or_empty(local_out) == all_bytes()) << "local copy of the pair differs";
    EXPECT_EQ(read_or_empty(project() + "/results/r1.txt"), "one\n");
    EXPECT_EQ(read_or_empty(project() + "/results/r2.txt"), "two\n");
    EXPECT_EQ(read_or_empty(project() + "/results/uploaded.txt"), "./a.csv\n./b.csv\n");
    EXPECT_FALSE(path_exists(project() + "/results/skip.log"));
    EXPECT_FALSE(path_exists(local_out + ".tmp")) << "a temp file was left behind";
}

// upload_files globs follow the workspace's rules: no secrets, no links out of the spec dir,
// named once; an entry that names a file sends it.
TEST_F(TrainFilesTest, UploadGlobsSkipSecretsAndOutsideLinksButNamedFilesGo) {
    make_dir(sshd().dir() + "/outside", 0755);
    write_file(sshd().dir() + "/outside/secret.txt", "outside\n");
    for (const char* name : {"id_rsa", "key.pem", ".env", "ok.txt"})
        write_file(project() + "/" + name, std::string(name) + "\n");
    ASSERT_EQ(::symlink((sshd().dir() + "/outside/secret.txt").c_str(),
                        (project() + "/out_link").c_str()),
              0);
    ASSERT_EQ(::symlink("ok.txt", (project() + "/in_link").c_str()), 0);
    write_shell_model("files", "echo trained\n");
    write_model_settings(
        "files", std::string(kShellSidecar) + "  upload_files: ['*', 'id_rsa|keys/id_rsa']\n");
    write_user_settings();
    ProcessResult r = mlt({"ssh", "train", "files"});
    ASSERT_EQ(r.exit_code, 0) << describe(r) << job_state("files");

    EXPECT_EQ(read_or_empty(remote() + "/ok.txt"), "ok.txt\n");
    EXPECT_EQ(read_or_empty(remote() + "/in_link"), "ok.txt\n");
    EXPECT_TRUE(path_exists(remote() + "/files.py"));
    for (const char* name : {"id_rsa", "key.pem", ".env", "out_link"})
        EXPECT_FALSE(path_exists(remote() + "/" + name)) << name << " was sent";
    EXPECT_EQ(read_or_empty(remote() + "/keys/id_rsa"), "id_rsa\n");

    const auto skipped = lines_starting(r.err, "mlt: warning: upload_files: not sending");
    ASSERT_EQ(skipped.size(), 1u) << describe(r);
    for (const char* name : {".env", "id_rsa", "key.pem", "out_link"})
        EXPECT_TRUE(has_text(skipped.front(), name)) << skipped.front();
    EXPECT_FALSE(has_text(skipped.front(), "ok.txt")) << skipped.front();
    EXPECT_EQ(count_occurrences(r.err, "not sending"), 1u) << describe(r);
}

// The model's sidecar settings may hold the connection password: a glob never sends them
// (the warning names them); without a secret in them they go as any file.
TEST_F(TrainFilesTest, AGlobNeverSendsASidecarThatHoldsAPassword) {
    write_file(project() + "/ok.txt", "ok\n");
    write_shell_model("files", "echo trained\n");
    const std::string connection =
        "  connection: {hostname: 127.0.0.1, port: " + std::to_string(sshd().port()) +
        ", username: " + sshd().user() + ", key_filename: \"" + sshd().client_key_path() +
        "\", password: hunter2}\n";
    write_model_settings("files",
                         std::string(kShellSidecar) + "  upload_files: ['**']\n" + connection);
    write_user_settings();
    ProcessResult r = mlt({"ssh", "train", "files"});
    ASSERT_EQ(r.exit_code, 0) << describe(r) << job_state("files");
    EXPECT_EQ(read_or_empty(remote() + "/ok.txt"), "ok\n");
    EXPECT_FALSE(path_exists(remote() + "/files.ssh.yaml")) << "the password was sent";
    const auto skipped = lines_starting(r.err, "mlt: warning: upload_files: not sending");
    ASSERT_EQ(skipped.size(), 1u) << describe(r);
    EXPECT_TRUE(has_text(skipped.front(), "files.ssh.yaml")) << skipped.front();

    write_model_settings("files", std::string(kShellSidecar) + "  upload_files: ['**']\n");
    r = mlt({"ssh", "train", "files"});
    ASSERT_EQ(r.exit_code, 0) << describe(r) << job_state("files");
    EXPECT_TRUE(path_exists(remote() + "/files.ssh.yaml")) << describe(r);
}

// MLTK's path expansion: `$VAR` in remote_dir and in a download's remote side expand on the
// remote (its HOME), in an upload's local side and a download's local side here (the test's
// HOME); an upload glob may climb above the spec dir, to the same place above the remote dir.
TEST_F(TrainFilesTest, VariablesAndParentGlobsAsInMltk) {
    const std::string remote_home = sshd().remote_home();  // HOME of the server's sessions
    const std::string local_home = env().home();
    ASSERT_NE(remote_home, local_home);
    make_dir(remote() + "/ws", 0755);
    const std::string rel =
        std::filesystem::relative(remote() + "/ws", remote_home).generic_string();
    make_dir(sshd().dir() + "/shared", 0755);
    write_file(sshd().dir() + "/shared/common.py", "COMMON = 1\n");
    write_file(local_home + "/in.txt", "from the local home\n");
    write_shell_model("vars", "set -e\npwd > where.txt\necho out > out.txt\n");
    write_model_settings("vars",
                         std::string(kShellSidecar) + "  remote_dir: \"$HOME/" + rel +
                             "\"\n"
                             "  upload_files: [\"${HOME}/in.txt|in.txt\", \"../shared/*.py\"]\n"
                             "  download_files: [\"$HOME/" +
                             rel + "/out.txt|${HOME}/out-here.txt\"]\n");
    write_user_settings();
    ProcessResult r = mlt({"ssh", "train", "vars"});
    ASSERT_EQ(r.exit_code, 0) << describe(r) << job_state("vars");
    EXPECT_EQ(read_or_empty(remote() + "/ws/where.txt"), remote() + "/ws\n");
    EXPECT_EQ(read_or_empty(remote() + "/ws/in.txt"), "from the local home\n");
    EXPECT_EQ(read_or_empty(remote() + "/shared/common.py"), "COMMON = 1\n");
    EXPECT_EQ(read_or_empty(local_home + "/out-here.txt"), "out\n") << describe(r);
}

}  // namespace
}  // namespace mlt_test
