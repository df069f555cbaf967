// `mlt ssh ... train` end to end with the example model: how the host, the model and the
// settings are found, and what a finished (or failed) run leaves behind.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>

#include "harness/expect.h"
#include "harness/files.h"
#include "harness/process.h"
#include "harness/train_fixture.h"

namespace mlt_test {
namespace {

constexpr int kEpochs = 8;  // the example model's default

// The example's sidecar as the tests use it: the system python (the remote login shell may
// find another one first), the summary download, and a shutdown command leaving a trace.
const char* const kExampleSidecar =
    "ssh:\n"
    "  train_cmd: \"/usr/bin/python3 {spec}\"\n"
    "  download_files: [results/summary.txt]\n"
    "  shutdown_cmds: [\"echo shutdown >> shutdown.log\"]\n";

class TrainBasicTest : public TrainTest {
  protected:
    // Everything a successful first run `r` of the example model `model` leaves behind.
    void expect_collected_success(const std::string& model, const ProcessResult& r) const;
};

void TrainBasicTest::expect_collected_success(const std::string& model,
                                              const ProcessResult& r) const {
    SCOPED_TRACE("model " + model);
    // The archive next to the spec, complete and matching the remote sha256.
    const std::string archive = project() + "/" + model + ".mltk.zip";
    ASSERT_TRUE(path_exists(archive)) << describe(r);
    EXPECT_TRUE(valid_zip(archive));
    EXPECT_TRUE(has_text(zip_listing(archive), model + ".weights.json"));
    EXPECT_EQ(sha256_of(archive), trim(read_or_empty(remote() + "/.mlt/" + model + "/sha256")));

    // The remote log dir collected into the local log dir.
    const std::string logs = env().home() + "/.mltk/models/" + model;
    for (int i = 1; i <= kEpochs; ++i) {
        char name[64];
        std::snprintf(name, sizeof name, "/checkpoints/checkpoint-%04d.json", i);
        EXPECT_TRUE(path_exists(logs + name)) << logs + name << "\n" << describe(r);
    }
    EXPECT_TRUE(has_text(read_or_empty(logs + "/history.json"), "\"epoch\": 8"));

    // The console log: streamed to stdout and kept locally, every epoch exactly once.
    const std::string console = read_or_empty(logs + "/mltk_ssh_train_" + model + ".log");
    EXPECT_TRUE(each_epoch_once(console, kEpochs));
    EXPECT_TRUE(has_text(console, "training finished"));
    EXPECT_TRUE(each_epoch_once(r.out, kEpochs));
    EXPECT_TRUE(has_text(console, "model " + model + ":")) << "MLT_MODEL not seen by the training";

    // download_files, shutdown_cmds (once), lock released, history.
    EXPECT_TRUE(has_text(read_or_empty(project() + "/results/summary.txt"), "model: " + model));
    EXPECT_EQ(read_or_empty(remote() + "/shutdown.log"), "shutdown\n");
    EXPECT_FALSE(path_exists(remote() + "/.mlt/" + model + "/lock")) << job_state(model);
    EXPECT_EQ(job_exit_status(model), 0) << job_state(model);
    auto runs = history();
    ASSERT_EQ(runs.size(), 1u) << read_or_empty(history_path());
    EXPECT_EQ(runs.back()["model"], model);
    EXPECT_EQ(runs.back()["status"], "success") << read_or_empty(history_path());
    EXPECT_EQ(runs.back()["exit_status"], "0") << read_or_empty(history_path());
    EXPECT_TRUE(wait_no_remote_processes());
}

TEST_F(TrainBasicTest, SettingsOnlyRunTrainsTheExample) {
    copy_example();
    write_model_settings("logistic_model", kExampleSidecar);
    write_user_settings("  host_key_checking: yes\n");
    ProcessResult r = mlt({"ssh", "train", "logistic_model", "--", "--sleep", "0.05"});
    ASSERT_EQ(r.exit_code, 0) << describe(r) << job_state("logistic_model");
    EXPECT_TRUE(logged_in());
    expect_collected_success("logistic_model", r);
    // The spec went to the remote dir of the settings.
    EXPECT_EQ(read_or_empty(remote() + "/logistic_model.py"),
              read_file(project() + "/logistic_model.py"));
    EXPECT_TRUE(
        path_exists(remote_logs_root() + "/logistic_model/checkpoints/checkpoint-0008.json"))
        << "remote_log_dir of the settings not used";
}

TEST_F(TrainBasicTest, EverythingOnTheCommandLine) {
    // No user settings at all; the model's sidecar only says how to train, not where.
    copy_example();
    write_model_settings("logistic_model", std::string(kExampleSidecar) + "  remote_log_dir: \"" +
                                               remote_logs_root() + "/{model}\"\n");
    ASSERT_FALSE(path_exists(env().settings_path()));
    ProcessResult r = mlt({"ssh", "-h", host_with_dir(), "-i", sshd().client_key_path(), "train",
                           "logistic_model", "--", "--sleep", "0.05"});
    ASSERT_EQ(r.exit_code, 0) << describe(r) << job_state("logistic_model");
    expect_collected_success("logistic_model", r);
    EXPECT_TRUE(path_exists(remote() + "/logistic_model.py")) << "remote dir of -h not used";
}

TEST_F(TrainBasicTest, TestSuffixTrainsTheSpecUnderTheTestName) {
    copy_example();
    write_model_settings("logistic_model", kExampleSidecar);
    write_user_settings();
    ProcessResult r = mlt({"ssh", "train", "logistic_model-test", "--", "--sleep", "0.05"});
    ASSERT_EQ(r.exit_code, 0) << describe(r) << job_state("logistic_model-test");
    expect_collected_success("logistic_model-test", r);
    EXPECT_FALSE(path_exists(local_archive("logistic_model")));
    EXPECT_FALSE(path_exists(local_logs("logistic_model")));
    EXPECT_FALSE(path_exists(job_dir("logistic_model"))) << "job state under the spec's name";
    // The spec keeps its own file name on the remote.
    EXPECT_TRUE(path_exists(remote() + "/logistic_model.py"));
}

TEST_F(TrainBasicTest, SshConfigAlias) {
    copy_example();
    write_model_settings("logistic_model", kExampleSidecar);
    trust_server_in(custom_known_hosts());
    write_file(env().ssh_dir() + "/config",
               ssh_config_entry("trainbox", sshd().port(), custom_known_hosts()), 0600);
    // Only the remote dirs come from the settings: host, port, user and key from the alias.
    env().write_settings(base_settings(/*connection=*/false));
    ProcessResult r =
        mlt({"ssh", "-h", "trainbox", "train", "logistic_model", "--", "--sleep", "0.05"});
    ASSERT_EQ(r.exit_code, 0) << describe(r) << sshd_log();
    EXPECT_TRUE(logged_in());
    expect_collected_success("logistic_model", r);
}

TEST_F(TrainBasicTest, FailingTrainingExitsWithItsStatusAndStillCollects) {
    copy_example();
    write_model_settings("logistic_model", kExampleSidecar);
    write_user_settings();
    ProcessResult r =
        mlt({"ssh", "train", "logistic_model", "--", "--fail-at-epoch", "2", "--sleep", "0.05"});
    // 3 is one of mlt's own codes (a job-state conflict): mlt exits 1 and says the status.
    EXPECT_EQ(r.exit_code, 1) << describe(r);
    EXPECT_TRUE(has_text(r.out, "the training exited 3, mlt exits 1")) << describe(r);
    EXPECT_EQ(job_exit_status("logistic_model"), 3) << job_state("logistic_model");
    // Logs of the epochs done are collected, including the failure on stderr.
    const std::string logs = local_logs("logistic_model");
    EXPECT_TRUE(path_exists(logs + "/checkpoints/checkpoint-0001.json")) << describe(r);
    EXPECT_TRUE(path_exists(logs + "/checkpoints/checkpoint-0002.json")) << describe(r);
    EXPECT_FALSE(path_exists(logs + "/checkpoints/checkpoint-0003.json"));
    const std::string console = read_or_empty(local_console("logistic_model"));
    EXPECT_TRUE(has_text(console, "epoch 2/8 "));
    EXPECT_TRUE(has_text(console, "simulated failure after epoch 2"));
    EXPECT_TRUE(lacks_text(console, "epoch 3/8"));
    // No archive was made; shutdown still ran once; the lock is released.
    EXPECT_FALSE(path_exists(local_archive("logistic_model")));
    EXPECT_EQ(read_or_empty(remote() + "/shutdown.log"), "shutdown\n") << describe(r);
    EXPECT_FALSE(path_exists(job_file("logistic_model", "lock"))) << job_state("logistic_model");
    auto runs = history();
    ASSERT_EQ(runs.size(), 1u) << read_or_empty(history_path());
    EXPECT_EQ(runs.back()["status"], "failed") << read_or_empty(history_path());
    EXPECT_EQ(runs.back()["exit_status"], "3") << read_or_empty(history_path());

    // The next run is not refused (the failed job was collected) and resumes at epoch 3.
    r = mlt({"ssh", "train", "logistic_model", "--", "--sleep", "0.05"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(has_text(r.out, "resuming from checkpoint-0002.json"));
    EXPECT_TRUE(lacks_text(r.out, "epoch 1/8"));
    EXPECT_TRUE(has_text(r.out, "epoch 8/8"));
    EXPECT_TRUE(valid_zip(local_archive("logistic_model")));
}

// An environment value the remote shell refuses (`${X:?}`) ends the job's setup: the wrapper
// still records the status, mlt says the training did not start and why, shutdown runs and
// the lock goes.
TEST_F(TrainBasicTest, ASetupFailureSaysTheTrainingDidNotStart) {
    copy_example();
    write_model_settings("logistic_model",
                         "ssh:\n"
                         "  train_cmd: \"/usr/bin/python3 {spec}\"\n"
                         "  environment: [\"NEEDED=${MLT_TEST_UNSET_VAR:?is not set here}\"]\n"
                         "  shutdown_cmds: [\"echo shutdown >> shutdown.log\"]\n");
    write_user_settings();
    ProcessResult r = mlt({"ssh", "train", "logistic_model", "--", "--epochs", "2"});
    EXPECT_NE(r.exit_code, 0) << describe(r);
    EXPECT_EQ(job_exit_status("logistic_model"), r.exit_code) << job_state("logistic_model");
    const std::string console = read_or_empty(local_console("logistic_model"));
    EXPECT_TRUE(has_text(console, "is not set here")) << console;
    EXPECT_TRUE(has_text(console, "environment NEEDED: its value could not be expanded"))
        << console;
    EXPECT_TRUE(has_text(console, "the training did not start")) << console;
    EXPECT_TRUE(lacks_text(console, "epoch 1/")) << console;
    EXPECT_TRUE(has_text(r.out, "did not start training: its setup")) << describe(r);
    EXPECT_EQ(read_or_empty(remote() + "/shutdown.log"), "shutdown\n") << describe(r);
    EXPECT_FALSE(path_exists(job_file("logistic_model", "lock"))) << job_state("logistic_model");
}

// A training killed by a signal (as the out-of-memory killer does) is named as such.
TEST_F(TrainBasicTest, ATrainingKilledByASignalSaysWhich) {
    copy_example();
    write_model_settings("logistic_model",
                         "ssh:\n"
                         "  train_cmd: \"sh -c 'echo before; kill -9 $$'\"\n");
    write_user_settings();
    ProcessResult r = mlt({"ssh", "train", "logistic_model"});
    EXPECT_EQ(r.exit_code, 137) << describe(r);
    EXPECT_TRUE(has_text(r.out, "exit status 137 (killed by SIGKILL")) << describe(r);
    EXPECT_TRUE(has_text(read_or_empty(local_console("logistic_model")), "before"));
    EXPECT_FALSE(path_exists(job_file("logistic_model", "lock"))) << job_state("logistic_model");
    // `status` names the signal as well.
    r = mlt({"ssh", "status", "logistic_model"});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(has_text(r.out, "137 (SIGKILL)")) << describe(r);
}

TEST_F(TrainBasicTest, ACollectionFailureStillRunsShutdownAndKeepsTheJobForResume) {
    copy_example();
    // The download's local side cannot be written: its parent is a file.
    write_file(project() + "/blocked", "a file, not a directory\n");
    write_model_settings("logistic_model",
                         "ssh:\n"
                         "  train_cmd: \"/usr/bin/python3 {spec}\"\n"
                         "  download_files: [\"written.txt|blocked/got.txt\"]\n"
                         "  shutdown_cmds: [\"echo shutdown >> shutdown.log\"]\n");
    write_user_settings();
    write_file(remote() + "/written.txt", "late\n");
    ProcessResult r =
        mlt({"ssh", "train", "logistic_model", "--", "--epochs", "2", "--sleep", "0"});
    EXPECT_EQ(r.exit_code, 1) << describe(r);
    EXPECT_TRUE(has_text(r.err, "blocked")) << describe(r);
    EXPECT_TRUE(has_text(r.err, "--resume")) << describe(r);
    EXPECT_EQ(read_or_empty(remote() + "/shutdown.log"), "shutdown\n") << describe(r);
    // Not collected completely: the lock stays, and --resume tries again.
    EXPECT_TRUE(path_exists(job_file("logistic_model", "lock"))) << job_state("logistic_model");
    ::unlink((project() + "/blocked").c_str());
    r = mlt({"ssh", "train", "logistic_model", "--resume"});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_EQ(read_or_empty(project() + "/blocked/got.txt"), "late\n");
    EXPECT_FALSE(path_exists(job_file("logistic_model", "lock"))) << job_state("logistic_model");
}

// A real full disk where the results land (a 1 MiB tmpfs): the training ran, so the run
// exits 1 (not 2, "nothing was done remotely"), says the results stay on the remote and how
// to collect them, and keeps the job; --resume collects once there is room.
TEST_F(TrainBasicTest, AFullLocalDiskAfterTheTrainingKeepsTheJobForResume) {
    copy_example();
    const std::string small = project() + "/results";
    make_dir(small, 0755);
    ProcessResult m = run_process({"/bin/mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", small},
                                  {}, std::chrono::seconds(30));
    ASSERT_EQ(m.exit_code, 0) << "the test needs to mount a tmpfs (root): " << describe(m);
    struct Unmount {
        std::string dir;
        ~Unmount() { run_process({"/bin/umount", "-l", dir}, {}, std::chrono::seconds(30)); }
    } unmount{small};
    write_model_settings("logistic_model",
                         "ssh:\n"
                         "  train_cmd: \"head -c 3000000 /dev/urandom > big.bin && "
                         "/usr/bin/python3 {spec}\"\n"
                         "  download_files: [\"big.bin|results/big.bin\"]\n");
    write_user_settings();
    ProcessResult r =
        mlt({"ssh", "train", "logistic_model", "--", "--epochs", "2", "--sleep", "0"});
    EXPECT_EQ(r.exit_code, 1) << describe(r);
    EXPECT_TRUE(is_one_error_line(r.err)) << describe(r);
    EXPECT_TRUE(contains_icase(r.err, "no space left")) << describe(r);
    EXPECT_TRUE(has_text(r.err, "stay on the remote")) << describe(r);
    EXPECT_TRUE(has_text(r.err, "--resume")) << describe(r);
    EXPECT_TRUE(lacks_text(r.err, "nothing was done remotely")) << describe(r);
    // Nothing torn is left where the result belongs.
    EXPECT_FALSE(path_exists(small + "/big.bin"));
    EXPECT_TRUE(path_exists(job_file("logistic_model", "lock"))) << job_state("logistic_model");

    ASSERT_EQ(run_process({"/bin/umount", small}, {}, std::chrono::seconds(30)).exit_code, 0);
    r = mlt({"ssh", "train", "logistic_model", "--resume"});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_EQ(sha256_of(small + "/big.bin"), sha256_of(remote() + "/big.bin"));
    EXPECT_FALSE(path_exists(job_file("logistic_model", "lock"))) << job_state("logistic_model");
}

// As in MLTK: a download_files entry the remote does not have is a warning; the rest is
// collected, shutdown_cmds run, the lock goes and the training's status is the run's.
TEST_F(TrainBasicTest, AMissingDownloadIsAWarning) {
    copy_example();
    write_model_settings(
        "logistic_model",
        "ssh:\n"
        "  train_cmd: \"/usr/bin/python3 {spec}\"\n"
        "  download_files: [\"never-written.txt|got.txt\", \"here.txt|here.txt\"]\n"
        "  shutdown_cmds: [\"echo shutdown >> shutdown.log\"]\n");
    write_user_settings();
    write_file(remote() + "/here.txt", "here\n");
    ProcessResult r =
        mlt({"ssh", "train", "logistic_model", "--", "--epochs", "2", "--sleep", "0"});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(has_text(r.err, "never-written.txt")) << describe(r);
    EXPECT_TRUE(contains_icase(r.err, "warning")) << describe(r);
    EXPECT_EQ(read_or_empty(project() + "/here.txt"), "here\n");
    EXPECT_FALSE(path_exists(project() + "/got.txt"));
    EXPECT_TRUE(valid_zip(local_archive("logistic_model")));
    EXPECT_EQ(read_or_empty(remote() + "/shutdown.log"), "shutdown\n") << describe(r);
    EXPECT_FALSE(path_exists(job_file("logistic_model", "lock"))) << job_state("logistic_model");
}

// --clean removes remote_log_dir: one that holds more than the model's logs is refused before
// anything happens on the remote.
TEST_F(TrainBasicTest, CleanRefusesALogDirThatHoldsMoreThanTheModelsLogs) {
    copy_example();
    write_user_settings();
    write_file(remote() + "/keep.txt", "other models' files\n");
    for (const std::string bad :
         {"{remote_dir}", ".", "~", "~/", "$HOME", "${HOME}/", "/", "..", "{remote_dir}/.mlt/x"}) {
        SCOPED_TRACE(bad);
        write_model_settings("logistic_model",
                             "ssh:\n  train_cmd: \"/usr/bin/python3 {spec}\"\n"
                             "  remote_log_dir: \"" +
                                 bad + "\"\n");
        ProcessResult r = mlt({"ssh", "train", "logistic_model", "--clean"});
        EXPECT_EQ(r.exit_code, 2) << describe(r);
        EXPECT_TRUE(is_one_error_line(r.err)) << describe(r);
        EXPECT_TRUE(has_text(r.err, "remote_log_dir")) << describe(r);
        EXPECT_FALSE(path_exists(job_file("logistic_model", "lock"))) << "it acted remotely";
        EXPECT_EQ(read_or_empty(remote() + "/keep.txt"), "other models' files\n");
    }
}

// The same guard for the local log dir: a spec kept inside <MLTK_CACHE_DIR>/models/<model>
// would go with the logs.
TEST_F(TrainBasicTest, CleanRefusesALocalLogDirThatHoldsTheSpec) {
    copy_example();
    write_user_settings();
    const std::string dir = env().home() + "/.mltk/models/logistic_model";
    make_dir(env().home() + "/.mltk/models", 0755);
    make_dir(dir, 0755);
    const std::string spec = dir + "/logistic_model.py";
    write_file(spec, read_or_empty(project() + "/logistic_model.py"));
    ProcessResult r = mlt({"ssh", "train", spec, "--clean"});
    EXPECT_EQ(r.exit_code, 2) << describe(r);
    EXPECT_TRUE(is_one_error_line(r.err)) << describe(r);
    EXPECT_TRUE(has_text(r.err, "local log dir")) << describe(r);
    EXPECT_TRUE(path_exists(spec)) << "--clean removed the spec";
    EXPECT_FALSE(path_exists(job_file("logistic_model", "lock"))) << "it acted remotely";
}

TEST_F(TrainBasicTest, ASecondRunSendsOnlyWhatChanged) {
    copy_example();
    write_model_settings("logistic_model", kExampleSidecar);
    write_user_settings();
    ProcessResult r =
        mlt({"ssh", "train", "logistic_model", "--", "--epochs", "1", "--sleep", "0"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(has_text(r.out, "uploaded 1 file(s)")) << describe(r);
    // Nothing changed locally: the spec is not sent again (size and mtime match remotely).
    r = mlt({"ssh", "train", "logistic_model", "--", "--epochs", "1", "--sleep", "0"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(has_text(r.out, "uploaded 0 file(s), 0 bytes (1 unchanged)")) << describe(r);
    // An edit is sent.
    write_file(project() + "/logistic_model.py",
               read_file(project() + "/logistic_model.py") + "\n# edited\n");
    r = mlt({"ssh", "train", "logistic_model", "--", "--epochs", "1", "--sleep", "0"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(has_text(r.out, "uploaded 1 file(s)")) << describe(r);
    EXPECT_EQ(read_or_empty(remote() + "/logistic_model.py"),
              read_file(project() + "/logistic_model.py"));
}

TEST_F(TrainBasicTest, WorkspaceSyncHonoursIgnoreFilesAndNeverSendsSecrets) {
    copy_example();
    write_model_settings("logistic_model", kExampleSidecar);
    write_user_settings();
    std::filesystem::create_directories(project() + "/src");
    write_file(project() + "/src/util.py", "print('util')\n");
    write_file(project() + "/.gitignore", "*.tmp\n");
    write_file(project() + "/scratch.tmp", "ignored\n");
    write_file(project() + "/.env", "SECRET=1\n");
    write_file(project() + "/id_backup", "not a key\n", 0600);
    ProcessResult r = mlt({"ssh", "train", "logistic_model", "--workspace", project(), "--",
                           "--epochs", "1", "--sleep", "0"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_EQ(read_or_empty(remote() + "/src/util.py"), "print('util')\n");
    EXPECT_TRUE(path_exists(remote() + "/.gitignore"));
    EXPECT_FALSE(path_exists(remote() + "/scratch.tmp")) << "ignored by .gitignore";
    EXPECT_FALSE(path_exists(remote() + "/.env")) << "a secret was synced";
    EXPECT_FALSE(path_exists(remote() + "/id_backup")) << "a key was synced";
    // Unchanged the second time: nothing is sent.
    r = mlt({"ssh", "train", "logistic_model", "--workspace", project(), "--", "--epochs", "1",
             "--sleep", "0"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(has_text(r.out, "uploaded 0 file(s), 0 bytes")) << describe(r);
}

}  // namespace
}  // namespace mlt_test
