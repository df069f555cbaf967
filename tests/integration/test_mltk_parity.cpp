// MLTK's own suite for `mltk ssh` (mltk/cli/tests/test_ssh_cli.py in the MLTK repository)
// replayed against mlt: the same settings files, spec edits, command lines and the checks of
// its `_verify_results`. The remote is this machine, as in MLTK's suite; MLTK itself is played
// by tests/integration/mltk_standin/ (stdlib Python, MLTK's file layout), reached through the
// `environment` setting. Where a scenario has to differ from the original, a comment says why.
#include <gtest/gtest.h>
#include <pwd.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "harness/expect.h"
#include "harness/files.h"
#include "harness/openssh.h"
#include "harness/train_fixture.h"

namespace mlt_test {
namespace {

namespace fs = std::filesystem;

// A small model spec named like MLTK's test model, with the lines MLTK's suite edits to add
// SshMixin. mlt never runs it locally and the stand-in only needs it to exist remotely.
const char* const kImageModelSpec =
    "# Stands in for mltk/utils/test_helper/test_image_model.py (mlt never runs it).\n"
    "from mltk.core.model import (\n"
    "    MltkModel,\n"
    "    TrainMixin,\n"
    ")\n"
    "class MyModel(\n"
    "    MltkModel,\n"
    "    TrainMixin,\n"
    "):\n"
    "    pass\n"
    "mltk_model = MyModel()\n"
    "mltk_model.version = 1\n"
    "mltk_model.description = 'Model used for unit tests'\n"
    "mltk_model.epochs = 5\n";

const char* const kAutoencoderModelSpec =
    "# Stands in for mltk/utils/test_helper/test_autoencoder_model.py.\n"
    "mltk_model = None\n";

// A YAML single-quoted scalar: no escapes but '' for '.
std::string yq(const std::string& value) {
    std::string quoted = "'";
    for (char c : value) quoted += c == '\'' ? std::string("''") : std::string(1, c);
    return quoted + "'";
}

// MLTK's _verify_results arguments; the *2 paths only for the SshMixin scenario.
struct Expected {
    std::string startup_cmd_file;
    std::string shutdown_cmd_file;
    std::string model_file;
    std::string model_log_dir;
    std::string upload_file_abspath;
    std::string startup_cmd_file2;
    std::string shutdown_cmd_file2;
};

// The image model spec with SshMixin added, as MLTK's suite edits it.
std::string image_spec_with_ssh_mixin() {
    std::string spec;
    for (const auto& line : split_lines(kImageModelSpec)) {
        spec += line + "\n";
        if (has_text(line, "from mltk.core.model import (")) spec += "    SshMixin,\n";
        if (has_text(line, "class MyModel(")) spec += "    SshMixin,\n";
    }
    return spec;
}

class MltkParity : public TrainTest {
  protected:
    void SetUp() override;

    // MLTK's pytest_results_dir: create_user_dir('pytest_results') of the local MLTK.
    std::string results() const { return env().home() + "/.mltk/pytest_results"; }
    std::string result(const std::string& name) const { return results() + "/" + name; }
    // The key `mlt ssh-keygen utest --output <results>` writes.
    std::string key() const { return result("id_utest"); }
    // MLTK's ssh_workspace_dir, `<login dir>/utest_ssh_workspace` there. Here it lives in the
    // test's temp dir, so that nothing lands in the real home of the user running the tests.
    std::string workspace() const { return sshd().dir() + "/utest_ssh_workspace"; }
    std::string workspace_from_login() const;
    // The remote MLTK's MLTK_CACHE_DIR: MLTK's suite shares ~/.mltk between its "remote" and
    // local side; here the remote one is separate so that collecting is really a copy.
    std::string remote_cache() const { return sshd().dir() + "/remote-mltk"; }
    // MLTK uploads the test's own file (`__file__`) to a temp dir by an absolute pair.
    std::string upload_source() const {
        return std::string(MLT_SOURCE_DIR) + "/tests/integration/test_mltk_parity.cpp";
    }
    std::string upload_file_abspath() const { return sshd().dir() + "/temp/test_mltk_parity.cpp"; }
    std::string standin() const {
        return std::string(MLT_SOURCE_DIR) + "/tests/integration/mltk_standin";
    }
    // Where the stand-in MLTK makes a held training wait (MLTK_STANDIN_HOLD).
    std::string hold_file() const { return sshd().dir() + "/release-training"; }

    // `mlt ssh-keygen utest --output <results>` (MLTK's test_generate_keypair) and the public
    // key authorized by the test server; the other scenarios depend on it, as in MLTK.
    ProcessResult generate_keypair();
    // The environment entries that bring the stand-in MLTK to the remote, as list items
    // (`NAME=value`) or as mapping lines (`NAME: value`), indented for the `ssh:` section.
    std::string standin_env_items() const;
    std::string standin_env_mapping() const;
    // The settings of MLTK's with_params_in_cmd and nowait scenarios (+ `extra_env` items).
    std::string params_in_cmd_settings(const std::string& extra_env = {}) const;
    // Writes `yaml` to <results>/user_settings.yaml, the MLTK_USER_SETTINGS_PATH of the runs.
    void write_settings(const std::string& yaml) const;
    // MLTK's run_mltk_command(..., update_model_path=True): mlt with MLTK_MODEL_PATHS set to
    // the models' dir, from another working directory.
    ProcessResult run_mltk_command(const std::vector<std::string>& args,
                                   std::chrono::milliseconds timeout = kTrainTimeout) const;
    // The `-h user@127.0.0.1/<workspace>` command line of MLTK's scenarios, then `tail`.
    std::vector<std::string> host_args(const std::vector<std::string>& tail) const;

    // MLTK's _verify_results, plus the two logs MLTK also collects into the log dir.
    void verify_results(const Expected& e) const;
    // The local model log dir and archive of `model` (MLTK's create_user_dir()/models/...).
    std::string model_log_dir(const std::string& model) const { return local_logs(model); }
    Expected expected_for(const std::string& model_file, const std::string& model) const;
    // What the stand-in printed about the environment and its arguments (mlt streams the
    // console log to stdout).
    void expect_standin_saw(const ProcessResult& r, const std::vector<std::string>& lines) const;
    // The stand-in's load_mltk_model() was called remotely for `model` (mlt asks the remote
    // MLTK for the log dir, as MLTK does).
    ::testing::AssertionResult remote_mltk_asked(const std::string& model) const;
    // The spec of MLTK's SshMixin scenario: the image model with SshMixin and its ssh_*
    // settings.
    std::string ssh_mixin_spec() const;
    // Writes <results>/ssh_config.txt, whose `utest_host` is the test server with key().
    void write_utest_host_config() const;
};

void MltkParity::SetUp() {
    TrainTest::SetUp();
    make_dir(env().home() + "/.mltk", 0755);
    make_dir(results(), 0755);
    make_dir(sshd().dir() + "/temp", 0755);  // MLTK: create_tempdir("temp")
    write_file(project() + "/test_image_model.py", kImageModelSpec);
    write_file(project() + "/test_autoencoder_model.py", kAutoencoderModelSpec);
    env().set("MLTK_USER_SETTINGS_PATH", result("user_settings.yaml"));
    env().set("MLTK_MODEL_PATHS", project());
}

std::string MltkParity::workspace_from_login() const {
    // MLTK passes the workspace's basename: relative to the login dir. mlt (as MLTK) resolves
    // a relative remote dir against the login dir too, so the same form is used, only the
    // path climbs from the login dir (the user's home) into the temp dir.
    const passwd* pw = getpwuid(geteuid());
    const fs::path login = fs::canonical(pw != nullptr ? pw->pw_dir : "/");
    return fs::path(workspace()).lexically_relative(login).string();
}

ProcessResult MltkParity::generate_keypair() {
    ProcessResult r = env().run_mlt({"ssh-keygen", "utest", "--output", results()});
    if (r.exit_code == 0 && path_exists(key() + ".pub")) sshd().authorize_key_file(key() + ".pub");
    return r;
}

std::string MltkParity::standin_env_items() const {
    // `$PATH` is expanded remotely: mlt exports values as MLTK does, `export NAME="value"`.
    return "  - " + yq("PATH=" + standin() + "/bin:$PATH") + "\n" + "  - " +
           yq("PYTHONPATH=" + standin()) + "\n" + "  - " + yq("MLTK_CACHE_DIR=" + remote_cache()) +
           "\n";
}

std::string MltkParity::standin_env_mapping() const {
    return "    PATH: " + yq(standin() + "/bin:$PATH") + "\n" + "    PYTHONPATH: " + yq(standin()) +
           "\n" + "    MLTK_CACHE_DIR: " + yq(remote_cache()) + "\n";
}

std::string MltkParity::params_in_cmd_settings(const std::string& extra_env) const {
    return "ssh:\n"
           "  create_venv: true\n"
           // Offline: mlt's default would pip-install `wheel silabs-mltk` into the new venv
           // (as MLTK does); the stand-in comes through PYTHONPATH instead.
           "  venv_packages: []\n"
           "  upload_files:\n"
           "  - " +
           yq(upload_source() + "|" + upload_file_abspath()) +
           "\n"
           "  - test_autoencoder_model.py\n"
           "  environment:\n"
           "  - 'TEST=\"This is a test\"'\n"
           "  - FOO\n"
           "  - BAR=this is a string without quotes\n"
           "  - CUDA_VISIBLE_DEVICES=-1\n" +
           standin_env_items() + extra_env +
           "  startup_cmds:\n"
           // MLTK's first startup command is `pip3 install tf_keras`: it needs PyPI, which the
           // tests cannot reach; a harmless command keeps the list two long.
           "  - python3 --version\n"
           "  - echo $TEST > ./test_startup_cmd.txt\n"
           "  download_files:\n"
           "  - " +
           yq("./test_startup_cmd.txt|" + result("test_startup_cmd.txt")) +
           "\n"
           "  shutdown_cmds:\n"
           "  - " +
           yq("echo \"shutting down ...\" > " + result("test_shutdown_cmd.txt")) + "\n";
}

void MltkParity::write_settings(const std::string& yaml) const {
    write_file(result("user_settings.yaml"), yaml);
}

ProcessResult MltkParity::run_mltk_command(const std::vector<std::string>& args,
                                           std::chrono::milliseconds timeout) const {
    std::vector<std::string> argv = {"/bin/sh", "-c",      "cd \"$1\" && shift && exec \"$@\"",
                                     "sh",      results(), mlt_binary()};
    argv.insert(argv.end(), args.begin(), args.end());
    return env().run(argv, timeout);
}

std::vector<std::string> MltkParity::host_args(const std::vector<std::string>& tail) const {
    std::vector<std::string> args = {"ssh",
                                     "-h",
                                     sshd().user() + "@127.0.0.1/" + workspace_from_login(),
                                     "-p",
                                     std::to_string(sshd().port()),
                                     "-i",
                                     key()};
    args.insert(args.end(), tail.begin(), tail.end());
    return args;
}

Expected MltkParity::expected_for(const std::string& model_file, const std::string& model) const {
    Expected e;
    e.startup_cmd_file = result("test_startup_cmd.txt");
    e.shutdown_cmd_file = result("test_shutdown_cmd.txt");
    e.model_file = model_file;
    e.model_log_dir = model_log_dir(model);
    e.upload_file_abspath = upload_file_abspath();
    return e;
}

void MltkParity::verify_results(const Expected& e) const {
    EXPECT_TRUE(path_exists(e.startup_cmd_file))
        << "Failed to download test file: " << e.startup_cmd_file;
    EXPECT_EQ(trim(read_or_empty(e.startup_cmd_file)), "This is a test")
        << "Failed to verify contents of test file";
    if (!e.startup_cmd_file2.empty()) {
        EXPECT_TRUE(path_exists(e.startup_cmd_file2))
            << "Failed to download test file2: " << e.startup_cmd_file2;
        EXPECT_EQ(trim(read_or_empty(e.startup_cmd_file2)), "This is a test2")
            << "Failed to verify contents of test file2";
    }
    EXPECT_TRUE(path_exists(e.shutdown_cmd_file))
        << "Failed to generate shutdown cmd file: " << e.shutdown_cmd_file;
    if (!e.shutdown_cmd_file2.empty()) {
        EXPECT_TRUE(path_exists(e.shutdown_cmd_file2))
            << "Failed to generate shutdown cmd file2: " << e.shutdown_cmd_file2;
    }
    EXPECT_TRUE(path_exists(e.model_file)) << "Failed to download model archive: " << e.model_file;
    if (path_exists(e.model_file)) {
        EXPECT_TRUE(valid_zip(e.model_file));
    }
    EXPECT_TRUE(path_exists(e.model_log_dir))
        << "Failed to download model training logs: " << e.model_log_dir;
    EXPECT_TRUE(path_exists(e.upload_file_abspath))
        << "Failed to upload with abs path: " << e.upload_file_abspath;
    EXPECT_TRUE(read_or_empty(e.upload_file_abspath) == read_file(upload_source()))
        << "the uploaded copy differs from " << upload_source();

    // As MLTK: the names follow from the archive's name (MLTK looks at the whole path; the
    // temp dirs here could contain "-test").
    const std::string archive = fs::path(e.model_file).filename().string();
    const std::string model = archive.substr(0, archive.size() - std::string(".mltk.zip").size());
    const bool test_mode = model.find("-test") != std::string::npos;
    const std::string test_prefix = test_mode ? ".test" : "";
    const std::string model_name = test_mode ? model.substr(0, model.find("-test")) : model;
    const std::vector<std::string> log_files = {
        model_name + ".h5.summary.txt",       model_name + test_prefix + ".h5",
        model_name + test_prefix + ".tflite", model_name + ".tflite.summary.txt",
        "train/training-history.json",        "train/training-history.png",
    };
    for (const auto& fn : log_files) {
        const std::string p = e.model_log_dir + "/" + fn;
        EXPECT_TRUE(path_exists(p)) << "Missing log file: " << p;
    }

    // MLTK also brings the console log (under this name) and its CLI log into the log dir.
    const std::string console = e.model_log_dir + "/mltk_ssh_train_" + model + ".log";
    EXPECT_TRUE(has_text(read_or_empty(console), "Training complete")) << "console log " << console;
    EXPECT_TRUE(has_text(read_or_empty(e.model_log_dir + "/train.log"), "mltk train " + model))
        << "MLTK's CLI log (<cache>/cli_logs/train.log) not collected into " << e.model_log_dir;
}

void MltkParity::expect_standin_saw(const ProcessResult& r,
                                    const std::vector<std::string>& lines) const {
    for (const auto& line : lines) EXPECT_TRUE(has_text(r.out, line)) << describe(r);
}

::testing::AssertionResult MltkParity::remote_mltk_asked(const std::string& model) const {
    const std::string calls = read_or_empty(remote_cache() + "/load_mltk_model.calls");
    if (has_text(calls, " " + model + " ")) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "the remote MLTK was never asked for the log dir of "
                                         << model << "; load_mltk_model calls:\n"
                                         << calls;
}

std::string MltkParity::ssh_mixin_spec() const {
    // As MLTK's suite: the model spec gets SshMixin and its settings, in the results dir.
    std::string spec = image_spec_with_ssh_mixin();
    spec += "\n\n";
    spec += "mltk_model.ssh_remote_dir = \"" + workspace_from_login() + "\"\n";
    spec += "mltk_model.ssh_create_venv = True\n";
    spec +=
        "mltk_model.ssh_environment = dict(TEST=\"This is a test\", CUDA_VISIBLE_DEVICES=\"-1\")\n";
    // `pip3 install tf_keras` in MLTK's suite; PyPI is out of reach here.
    spec +=
        "mltk_model.ssh_startup_cmds = [\"python3 --version\", \"echo $TEST > "
        "./test_startup_cmd.txt\"]\n";
    spec += "mltk_model.ssh_upload_files = [\"" + upload_source() + "|" + upload_file_abspath() +
            "\"]\n";
    spec += "mltk_model.ssh_download_files = [\"./test_startup_cmd.txt|" +
            result("test_startup_cmd.txt") + "\"]\n";
    spec += "mltk_model.ssh_shutdown_cmds = ['echo \"shutting down ...\" > " +
            result("test_shutdown_cmd.txt") + "']\n";
    return spec;
}

void MltkParity::write_utest_host_config() const {
    write_file(result("ssh_config.txt"),
               "Host utest_host\n"
               "  Hostname 127.0.0.1\n"
               "  Port " +
                   std::to_string(sshd().port()) +
                   "\n"
                   "  User " +
                   sshd().user() +
                   "\n"
                   "  IdentityFile " +
                   key() + "\n");
}

TEST_F(MltkParity, GenerateKeypair) {
    ProcessResult r = generate_keypair();
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    ASSERT_TRUE(path_exists(key())) << describe(r);
    ASSERT_TRUE(path_exists(key() + ".pub")) << describe(r);
    EXPECT_EQ(file_mode(key()), 0600);
    const std::string pub = trim(read_file(key() + ".pub"));
    // MLTK's suite finds its key in authorized_keys by this comment.
    EXPECT_EQ(split_fields(pub).back(), "utest") << pub;
    // The server accepts the key: an OpenSSH client logs in with it.
    trust_server_in(custom_known_hosts());
    ProcessResult login = run_process(sshd().openssh_argv(key(), custom_known_hosts(), "echo in"),
                                      tool_environment(), kToolTimeout);
    EXPECT_EQ(login.exit_code, 0) << describe(login) << sshd_log();
    EXPECT_EQ(trim(login.out), "in");
}

TEST_F(MltkParity, TrainModelWithParamsInCmdCreateVenv) {
    ASSERT_EQ(generate_keypair().exit_code, 0);
    write_settings(params_in_cmd_settings());
    ProcessResult r = run_mltk_command(
        host_args({"train", "test_image_model-test", "--verbose", "--clean", "--force"}));
    EXPECT_EQ(r.exit_code, 0) << describe(r);

    EXPECT_TRUE(path_exists(workspace() + "/test_autoencoder_model.py")) << describe(r);
    verify_results(
        expected_for(project() + "/test_image_model-test.mltk.zip", "test_image_model-test"));
    // The environment as MLTK parses it: quotes stripped, a bare name is empty, spaces kept;
    // the venv mlt created is active; --clean and --verbose reach `mltk train`.
    expect_standin_saw(
        r, {"env TEST=[This is a test]", "env FOO=[]", "env BAR=[this is a string without quotes]",
            "env CUDA_VISIBLE_DEVICES=[-1]", "env VIRTUAL_ENV=[" + workspace() + "/.venv]"});
    const auto args = lines_starting(r.out, "mltk train (stand-in) args: test_image_model-test");
    ASSERT_EQ(args.size(), 1u) << describe(r);
    EXPECT_TRUE(has_text(args[0], " --clean"));
    EXPECT_TRUE(has_text(args[0], " --verbose"));
    EXPECT_TRUE(remote_mltk_asked("test_image_model-test"));
}

TEST_F(MltkParity, TrainModelWithParamsInSettingsNoCreateVenv) {
    ASSERT_EQ(generate_keypair().exit_code, 0);
    write_settings(
        "ssh:\n"
        "  create_venv: false\n"
        "  remote_dir: " +
        yq(workspace()) +
        "\n"
        "  connection:\n"
        "    hostname: 127.0.0.1\n"
        "    port: " +
        std::to_string(sshd().port()) +
        "\n"
        "    key_filename: " +
        yq(key()) +
        "\n"
        "    username: " +
        sshd().user() +
        "\n"
        "  upload_files:\n"
        "  - " +
        yq(upload_source() + "|" + upload_file_abspath()) +
        "\n"
        "  - test_autoencoder_model.py\n"
        "  environment:\n"
        "    TEST: This is a test\n"
        "    CUDA_VISIBLE_DEVICES: '-1'\n" +
        standin_env_mapping() +
        "  startup_cmds:\n"
        "  - echo $TEST > ./test_startup_cmd.txt\n"
        "  - python3 -m venv .venv\n"
        "  - . ./.venv/bin/activate\n"
        // MLTK's next two are `pip3 install silabs-mltk` and `pip3 install tf_keras`: they need
        // PyPI, which the tests cannot reach; the stand-in is on PYTHONPATH instead.
        "  - python3 --version\n"
        "  - python3 --version\n"
        "  download_files:\n"
        "  - " +
        yq("./test_startup_cmd.txt|" + result("test_startup_cmd.txt")) +
        "\n"
        "  shutdown_cmds:\n"
        "  - " +
        yq("echo \"shutting down ...\" > " + result("test_shutdown_cmd.txt")) + "\n");
    ProcessResult r =
        run_mltk_command({"ssh", "train", "test_image_model", "--verbose", "--clean", "--force"});
    EXPECT_EQ(r.exit_code, 0) << describe(r);

    EXPECT_TRUE(path_exists(workspace() + "/test_autoencoder_model.py")) << describe(r);
    verify_results(expected_for(project() + "/test_image_model.mltk.zip", "test_image_model"));
    // The venv the startup commands activated is still active for the training: one batch.
    expect_standin_saw(r, {"env TEST=[This is a test]", "env CUDA_VISIBLE_DEVICES=[-1]",
                           "env VIRTUAL_ENV=[" + workspace() + "/.venv]"});
    EXPECT_TRUE(remote_mltk_asked("test_image_model"));
}

TEST_F(MltkParity, TrainModelWithSshMixinAndConfig) {
    ASSERT_EQ(generate_keypair().exit_code, 0);
    write_file(result("test_image_model.py"), ssh_mixin_spec());
    write_utest_host_config();
    // The connection of the settings must lose against the alias (MLTK's suite has the same
    // port 22 and empty key_filename there).
    write_settings(
        "ssh:\n"
        "  config_path: " +
        yq(result("ssh_config.txt")) +
        "\n"
        "  connection:\n"
        "    hostname: localhost\n"
        "    port: 22\n"
        "    key_filename: ''\n"
        "    username: " +
        sshd().user() +
        "\n"
        "  upload_files: []\n"
        "  environment:\n"
        "    TEST2: This is a test2\n" +
        standin_env_mapping() +
        // Offline: no `wheel silabs-mltk` in the venv the model asks for.
        "  venv_packages: []\n"
        "  startup_cmds:\n"
        "  - echo $TEST2 > ./test_startup_cmd2.txt\n"
        "  download_files:\n"
        "  - " +
        yq("./test_startup_cmd2.txt|" + result("test_startup_cmd2.txt")) +
        "\n"
        "  shutdown_cmds:\n"
        "  - " +
        yq("echo \"shutting down2 ...\" > " + result("test_shutdown_cmd2.txt")) + "\n");
    ProcessResult r =
        run_mltk_command({"ssh", "-h", "utest_host", "train", result("test_image_model.py"),
                          "--test", "--verbose", "--clean", "--force"});
    EXPECT_EQ(r.exit_code, 0) << describe(r);

    Expected e = expected_for(result("test_image_model-test.mltk.zip"), "test_image_model-test");
    e.startup_cmd_file2 = result("test_startup_cmd2.txt");
    e.shutdown_cmd_file2 = result("test_shutdown_cmd2.txt");
    verify_results(e);
    // Settings and model environments merged; the model's venv is active.
    expect_standin_saw(
        r, {"env TEST=[This is a test]", "env TEST2=[This is a test2]",
            "env CUDA_VISIBLE_DEVICES=[-1]", "env VIRTUAL_ENV=[" + workspace() + "/.venv]"});
    const auto args = lines_starting(r.out, "mltk train (stand-in) args: test_image_model");
    ASSERT_EQ(args.size(), 1u) << describe(r);
    EXPECT_TRUE(has_text(args[0], " --test"));
    EXPECT_TRUE(remote_mltk_asked("test_image_model-test"));
}

// Issue 18: a spec that computes its SshMixin values at import (as MLTK's
// keyword_spotting_on_off_v2 does) is loaded through the local MLTK, as `mltk ssh train`
// loads it: the local environment and control flow count (test mode comes after the import,
// as in MLTK). Not in MLTK's suite.
TEST_F(MltkParity, TrainComputedSshMixinSpecThroughTheLocalMltk) {
    ASSERT_EQ(generate_keypair().exit_code, 0);
    std::string spec = image_spec_with_ssh_mixin();
    spec +=
        "import os\n"
        "def prepare_ssh():\n"
        "    if mltk_model.test_mode_enabled:\n"
        "        raise RuntimeError('test mode comes after the import')\n"
        "    mltk_model.ssh_remote_dir = " +
        yq(workspace_from_login()) +
        "\n"
        "    mltk_model.ssh_create_venv = False\n"
        "    words = ['This', 'is', 'a', 'test']\n"
        "    mltk_model.ssh_environment = dict(TEST=' '.join(words),\n"
        "        TEST2=os.environ['PARITY_TEST2'], CUDA_VISIBLE_DEVICES=str(-1))\n"
        "    mltk_model.ssh_startup_cmds = ['echo $TEST > ./test_startup_cmd.txt']\n"
        "    mltk_model.ssh_upload_files = [" +
        yq(upload_source()) + " + '|' + " + yq(upload_file_abspath()) +
        "]\n"
        "    results = " +
        yq(results()) +
        "\n"
        "    mltk_model.ssh_download_files = ['./test_startup_cmd.txt|' + results + "
        "'/test_startup_cmd.txt']\n"
        "    mltk_model.ssh_shutdown_cmds = ['echo done > ' + results + "
        "'/test_shutdown_cmd.txt']\n"
        "prepare_ssh()\n";
    write_file(result("test_image_model.py"), spec);
    write_utest_host_config();
    // The stand-in MLTK reaches the remote through the settings; the spec's environment
    // merges with it per variable.
    write_settings("ssh:\n  config_path: " + yq(result("ssh_config.txt")) + "\n  environment:\n" +
                   standin_env_mapping());
    env().set("PYTHONPATH", standin());  // the local MLTK
    env().set("PARITY_TEST2", "from the local shell");
    ProcessResult r = run_mltk_command(
        {"ssh", "-h", "utest_host", "train", result("test_image_model.py"), "--test", "--clean"});
    EXPECT_EQ(r.exit_code, 0) << describe(r);

    verify_results(expected_for(result("test_image_model-test.mltk.zip"), "test_image_model-test"));
    expect_standin_saw(r, {"env TEST=[This is a test]", "env TEST2=[from the local shell]",
                           "env CUDA_VISIBLE_DEVICES=[-1]"});
    EXPECT_TRUE(remote_mltk_asked("test_image_model-test"));
}

TEST_F(MltkParity, TrainModelNoWaitThenResume) {
    ASSERT_EQ(generate_keypair().exit_code, 0);
    // The stand-in holds its training after epoch 1 until the test lets it go, so the job is
    // certainly still running when --no-wait returns.
    write_settings(params_in_cmd_settings("  - " + yq("MLTK_STANDIN_HOLD=" + hold_file()) + "\n"));
    ProcessResult r = run_mltk_command(host_args({"train", "test_image_model-test", "--verbose",
                                                  "--clean", "--force", "--no-wait"}),
                                       kMltTimeout);
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    ASSERT_FALSE(r.timed_out) << "--no-wait waited for the held training\n" << describe(r);
    ASSERT_TRUE(wait_until([&] { return path_exists(hold_file() + ".waiting"); }, kEffectTimeout))
        << "the training never started\n"
        << describe(r);
    const long pid = std::strtol(read_or_empty(hold_file() + ".waiting").c_str(), nullptr, 10);
    EXPECT_TRUE(process_alive(pid)) << "the training should still run after --no-wait";
    EXPECT_FALSE(path_exists(project() + "/test_image_model-test.mltk.zip"));
    // MLTK's "Do not forget to shutdown your cloud instance", also after --no-wait.
    EXPECT_TRUE(has_text(r.out,
                         "may still be billing: once the run is collected, stop or "
                         "destroy it"))
        << describe(r);

    write_file(hold_file(), "go\n");
    // MLTK's suite passes --clean with --resume too: it must not clean a running job's logs.
    r = run_mltk_command(
        host_args({"train", "test_image_model-test", "--verbose", "--clean", "--resume"}));
    EXPECT_EQ(r.exit_code, 0) << describe(r);

    EXPECT_TRUE(path_exists(workspace() + "/test_autoencoder_model.py")) << describe(r);
    verify_results(
        expected_for(project() + "/test_image_model-test.mltk.zip", "test_image_model-test"));
    EXPECT_TRUE(remote_mltk_asked("test_image_model-test"));
}

// Not a scenario of MLTK's suite but of its guide ("Example 4": --resume --no-wait polls
// without waiting for the end): the log so far, exit 0, the job left running.
TEST_F(MltkParity, ResumeNoWaitPollsARunningJob) {
    ASSERT_EQ(generate_keypair().exit_code, 0);
    write_settings(params_in_cmd_settings("  - " + yq("MLTK_STANDIN_HOLD=" + hold_file()) + "\n"));
    ProcessResult r = run_mltk_command(
        host_args({"train", "test_image_model-test", "--clean", "--force", "--no-wait"}),
        kMltTimeout);
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    ASSERT_TRUE(wait_until([&] { return path_exists(hold_file() + ".waiting"); }, kEffectTimeout))
        << describe(r);
    const long pid = std::strtol(read_or_empty(hold_file() + ".waiting").c_str(), nullptr, 10);

    r = run_mltk_command(host_args({"train", "test_image_model-test", "--resume", "--no-wait"}),
                         kMltTimeout);
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_FALSE(r.timed_out) << describe(r);
    EXPECT_TRUE(has_text(r.out, "Epoch 1/3")) << describe(r);
    EXPECT_TRUE(process_alive(pid)) << "a poll must leave the job running";
    EXPECT_FALSE(path_exists(project() + "/test_image_model-test.mltk.zip"));

    write_file(hold_file(), "go\n");
    r = run_mltk_command(host_args({"train", "test_image_model-test", "--resume"}));
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(valid_zip(project() + "/test_image_model-test.mltk.zip"));
}

}  // namespace
}  // namespace mlt_test
