// A spec's SshMixin values read through the local MLTK (issue 18): the stand-in MLTK of
// tests/integration/mltk_standin/ is on the local PYTHONPATH, and its load_mltk_model runs the
// spec as MLTK does.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <string>

#include "harness/expect.h"
#include "harness/files.h"
#include "harness/net.h"
#include "harness/train_fixture.h"

namespace mlt_test {
namespace {

// keyword_spotting_on_off_v2's teacher/student switch (MLTK's
// mltk/models/siliconlabs/keyword_spotting_on_off_v2.py), trimmed to its ssh logic.
const char* const kTeacherStudentSpec =
    "import os\n"
    "import mltk.core as mltk_core\n"
    "class MyModel(mltk_core.MltkModel, mltk_core.TrainMixin, mltk_core.SshMixin):\n"
    "    pass\n"
    "my_model = MyModel()\n"
    "def get_teacher_h5_path(check_exists=True) -> str:\n"
    "    ext = '.teacher.test.h5' if my_model.test_mode_enabled else '.teacher.h5'\n"
    "    retval = my_model.model_specification_path.replace('.py', ext)\n"
    "    if check_exists and not os.path.exists(retval):\n"
    "        raise RuntimeError(f'Teacher keras model not found: {retval}')\n"
    "    return retval\n"
    "def prepare_teacher_or_student_model(train_teacher=None):\n"
    "    if train_teacher is None:\n"
    "        train_teacher = os.environ.get('TRAIN_TEACHER', '0') == '1'\n"
    "    my_model.ssh_environment = dict(TRAIN_TEACHER='1' if train_teacher else '0')\n"
    "    if train_teacher:\n"
    "        teacher_h5_path = get_teacher_h5_path(check_exists=False)\n"
    "        my_model.ssh_upload_files = [os.path.basename(teacher_h5_path)]\n"
    "    else:\n"
    "        my_model.ssh_upload_files = [os.path.basename(get_teacher_h5_path())]\n"
    "prepare_teacher_or_student_model()\n";

class SpecLoaderTest : public TrainTest {
  protected:
    void SetUp() override {
        TrainTest::SetUp();
        env().set("PYTHONPATH", std::string(MLT_SOURCE_DIR) + "/tests/integration/mltk_standin");
        write_user_settings();
        // The remote does not run the spec: it reports what reached it.
        write_model_settings("kws",
                             "ssh:\n  train_cmd: \"echo TRAIN_TEACHER=[$TRAIN_TEACHER]; "
                             "ls\"\n  environment: {FROM_SIDECAR: 'yes'}\n");
    }
};

TEST_F(SpecLoaderTest, TeacherStudentSwitchFollowsTheLocalEnvironment) {
    write_file(project() + "/kws.py", kTeacherStudentSpec);
    write_file(project() + "/kws.teacher.h5", "weights");
    env().set("TRAIN_TEACHER", "1");
    ProcessResult r = mlt({"ssh", "train", "kws"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    const std::string console = read_or_empty(local_console("kws"));
    EXPECT_TRUE(has_text(console, "TRAIN_TEACHER=[1]")) << console;
    EXPECT_TRUE(has_text(console, "kws.teacher.h5")) << console;
    EXPECT_EQ(read_or_empty(remote() + "/kws.teacher.h5"), "weights");
}

TEST_F(SpecLoaderTest, ASpecThatRaisesStopsBeforeAnyRemoteCommand) {
    // The student needs the teacher's file, which is not there: MLTK fails at once, locally.
    write_file(project() + "/kws.py", kTeacherStudentSpec);
    ProcessResult r = mlt({"ssh", "train", "kws"});
    EXPECT_EQ(r.exit_code, 2) << describe(r);
    EXPECT_TRUE(has_text(r.err,
                         "kws.py failed to load through MLTK: RuntimeError: Teacher keras "
                         "model not found"))
        << describe(r);
    EXPECT_FALSE(path_exists(remote() + "/.mlt")) << "a remote job dir was created";
    EXPECT_FALSE(path_exists(remote() + "/kws.py")) << "the spec was uploaded";
}

// A spec that waits until sshd has logged a login after LOG_FROM (bounded by WAIT_S), and
// tells the job whether it saw one.
const char* const kWaitsForTheLoginSpec =
    "import os, time\n"
    "import mltk.core as mltk_core\n"
    "class MyModel(mltk_core.MltkModel, mltk_core.SshMixin):\n"
    "    pass\n"
    "my_model = MyModel()\n"
    "def login_seen():\n"
    "    deadline = time.time() + float(os.environ['WAIT_S'])\n"
    "    while time.time() < deadline:\n"
    "        with open(os.environ['SSHD_LOG']) as f:\n"
    "            if 'Accepted publickey' in f.read()[int(os.environ['LOG_FROM']):]:\n"
    "                return True\n"
    "        time.sleep(0.05)\n"
    "    return False\n"
    "my_model.ssh_environment = dict(SAW_LOGIN='yes' if login_seen() else 'no')\n";

TEST_F(SpecLoaderTest, TheConnectionIsMadeWhileMltkLoadsTheSpec) {
    write_file(project() + "/kws.py", kWaitsForTheLoginSpec);
    write_model_settings("kws", "ssh:\n  train_cmd: \"echo SAW_LOGIN=[$SAW_LOGIN]\"\n");
    env().set("SSHD_LOG", sshd().log_path());
    env().set("LOG_FROM", std::to_string(sshd().log_size()));
    env().set("WAIT_S", std::to_string(kEffectTimeout.count()));
    ProcessResult r = mlt({"ssh", "train", "kws"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(has_text(read_or_empty(local_console("kws")), "SAW_LOGIN=[yes]"))
        << "the spec loaded before the connection was made: " << describe(r);
}

TEST_F(SpecLoaderTest, WhatThePlanningSaysComesOnceAlthoughItIsCheckedBeforeTheLoad) {
    write_file(project() + "/kws.py", kTeacherStudentSpec);
    write_file(project() + "/kws.teacher.h5", "weights");
    env().set("TRAIN_TEACHER", "1");
    const std::string sidecar = "ssh:\n  train_cmd: \"true\"\n  upload_files: ['nothing*.bin']\n";
    write_model_settings("kws", sidecar);
    // The same model in a model path, which comes first: a warning says which one is used.
    const std::string copies = project() + "/copies";
    make_dir(copies);
    write_file(copies + "/kws.py", kTeacherStudentSpec);
    write_file(copies + "/kws.teacher.h5", "weights");
    write_file(copies + "/kws.ssh.yaml", sidecar);
    write_user_settings("  compression: zstd\n  compression: zstd\n  model_paths: ['" + copies +
                        "']\n");
    ProcessResult r = mlt({"ssh", "train", "kws"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    const auto count = [&](const std::string& text) {
        std::size_t n = 0;
        for (auto at = r.err.find(text); at != std::string::npos; at = r.err.find(text, at + 1))
            ++n;
        return n;
    };
    EXPECT_EQ(count("duplicate setting ssh.compression"), 1u) << describe(r);
    EXPECT_EQ(count("'nothing*.bin' matches no file"), 1u) << describe(r);
    EXPECT_EQ(count("also found"), 1u) << describe(r);
}

TEST_F(SpecLoaderTest, ACtrlCWhileTheSpecLoadsAfterTheConnectionEndsTheRunAndTheLoad) {
    // The spec loads until the login is in sshd's log, then for longer than the test waits.
    write_file(project() + "/kws.py",
               std::string(kWaitsForTheLoginSpec) + "if login_seen():\n    time.sleep(600)\n");
    write_model_settings("kws", "ssh:\n  train_cmd: \"true\"\n");
    env().set("SSHD_LOG", sshd().log_path());
    const std::size_t log_from = sshd().log_size();
    env().set("LOG_FROM", std::to_string(log_from));
    env().set("WAIT_S", std::to_string(kEffectTimeout.count()));
    auto run = start_mlt({"ssh", "train", "kws"});
    ASSERT_TRUE(wait_until(
        [&] { return has_text(sshd().log_text().substr(log_from), "Accepted publickey"); },
        kEffectTimeout))
        << "no login while the spec loads: " << run->err();
    run->signal(SIGINT);
    const ProcessResult r = run->wait(kEffectTimeout);
    EXPECT_EQ(r.exit_code, 130) << describe(r);
    EXPECT_TRUE(wait_until([&] { return processes_in(project()).empty(); }, kEffectTimeout))
        << "the spec's python3 is left: " << processes_in(project()).front();
    EXPECT_FALSE(path_exists(remote() + "/.mlt")) << "a remote job dir was created";
}

TEST_F(SpecLoaderTest, ASpecThatRaisesOutranksAConnectionThatFailed) {
    write_file(project() + "/kws.py", kTeacherStudentSpec);  // raises: no teacher file
    const int closed = find_free_port();
    ProcessResult r = mlt({"ssh", "-p", std::to_string(closed), "train", "kws"});
    EXPECT_EQ(r.exit_code, 2) << describe(r);
    EXPECT_TRUE(has_text(r.err, "Teacher keras model not found")) << describe(r);
    EXPECT_TRUE(lacks_text(r.err, "cannot connect")) << describe(r);
}

TEST_F(SpecLoaderTest, AConnectionThatFailsWhileTheSpecLoadsEndsTheRunAsWithoutMltk) {
    write_file(project() + "/kws.py", kTeacherStudentSpec);
    write_file(project() + "/kws.teacher.h5", "weights");
    env().set("TRAIN_TEACHER", "1");
    const std::string closed = std::to_string(find_free_port());
    ProcessResult loaded = mlt({"ssh", "-p", closed, "train", "kws"});
    write_user_settings("  spec_loader: literals\n");
    ProcessResult literal = mlt({"ssh", "-p", closed, "train", "kws"});
    EXPECT_NE(loaded.exit_code, 0) << describe(loaded);
    EXPECT_EQ(loaded.exit_code, literal.exit_code) << describe(loaded) << describe(literal);
    const auto first_error = [](const std::string& err) {
        const auto at = err.find("mlt: error:");
        return at == std::string::npos ? std::string() : err.substr(at, err.find('\n', at) - at);
    };
    EXPECT_FALSE(first_error(loaded.err).empty()) << describe(loaded);
    EXPECT_EQ(first_error(loaded.err), first_error(literal.err));
}

TEST_F(SpecLoaderTest, AJobAlreadyThereStaysReachableWhenTheSpecNoLongerLoads) {
    // Trained as the teacher; later the shell that stops the job lacks TRAIN_TEACHER, and the
    // student needs a teacher file that is not there: stop and status must still work.
    write_file(project() + "/kws.py", kTeacherStudentSpec);
    write_file(project() + "/kws.teacher.h5", "weights");
    env().set("TRAIN_TEACHER", "1");
    ASSERT_EQ(mlt({"ssh", "train", "kws"}).exit_code, 0);
    env().unset("TRAIN_TEACHER");
    ::unlink((project() + "/kws.teacher.h5").c_str());
    for (const char* command : {"status", "stop"}) {
        ProcessResult r = mlt({"ssh", command, "kws"});
        EXPECT_EQ(r.exit_code, 0) << command << ": " << describe(r);
        EXPECT_TRUE(has_text(r.err, "reading the spec's literal values instead")) << describe(r);
    }
    // A new run still refuses the spec that does not load.
    EXPECT_EQ(mlt({"ssh", "train", "kws"}).exit_code, 2);
}

TEST_F(SpecLoaderTest, LiteralsIgnoresTheLocalMltk) {
    write_file(project() + "/kws.py", std::string(kTeacherStudentSpec) +
                                          "my_model.ssh_environment = dict(TRAIN_TEACHER='lit')\n");
    write_user_settings("  spec_loader: literals\n");
    ProcessResult r = mlt({"ssh", "train", "kws"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(has_text(read_or_empty(local_console("kws")), "TRAIN_TEACHER=[lit]"));
}

}  // namespace
}  // namespace mlt_test
