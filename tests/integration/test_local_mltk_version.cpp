// The local MLTK's version, which pins the remote silabs-mltk: a spec that loads through MLTK
// reports it on the way, so mlt starts the local python3 once, not a second time to ask.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "harness/expect.h"
#include "harness/files.h"
#include "harness/net.h"
#include "harness/train_fixture.h"

namespace mlt_test {
namespace {

const char* const kSpec =
    "import mltk.core as mltk_core\n"
    "class MyModel(mltk_core.MltkModel, mltk_core.SshMixin):\n"
    "    pass\n"
    "my_model = MyModel()\n";

// A `python3` first on PATH that counts its starts (a line each in starts()), then runs the
// one MltEnv put there (no site-packages).
class LocalMltkVersionTest : public TrainTest {
  protected:
    void SetUp() override {
        TrainTest::SetUp();
        const std::string shielded = env().home() + "/.mlt-test-python";
        if (!path_exists(shielded + "/python3")) GTEST_SKIP() << "no python3 here";
        const std::string dir = env().home() + "/.counting-python";
        make_dir(dir, 0700);
        write_file(dir + "/python3",
                   "#!/bin/sh\necho start >> '" + starts_path() + "'\nexec '" + shielded +
                       "/python3' \"$@\"\n",
                   0700);
        env().set("PATH", dir + ":" + shielded + ":" + std::getenv("PATH"));
        write_user_settings();
        write_file(project() + "/kws.py", kSpec);
        write_model_settings("kws", "ssh:\n  train_cmd: \"true\"\n  create_venv: true\n");
    }
    std::string starts_path() const { return env().home() + "/python3.starts"; }
    // How many times python3 started so far.
    size_t starts() const { return count_lines(read_or_empty(starts_path()), "start"); }
    void use_the_standin_mltk() {
        env().set("PYTHONPATH", std::string(MLT_SOURCE_DIR) + "/tests/integration/mltk_standin");
    }
};

const std::string kPinned = "  in a new venv with: wheel 'silabs-mltk==0.0.0+standin'\n";
const std::string kLatest = "    or, when those fail: wheel silabs-mltk\n";

TEST_F(LocalMltkVersionTest, TheSpecLoadTellsTheVersionThatPinsTheRemoteMltk) {
    use_the_standin_mltk();
    ProcessResult r = mlt({"ssh", "train", "kws", "--dry-run"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(has_text(r.out, kPinned + kLatest)) << describe(r);
    EXPECT_EQ(starts(), 1u) << describe(r);
    // No load through MLTK: python3 is asked for the version alone, and pins it the same.
    write_user_settings("  spec_loader: literals\n");
    r = mlt({"ssh", "train", "kws", "--dry-run"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(has_text(r.out, kPinned + kLatest)) << describe(r);
    EXPECT_EQ(starts(), 2u) << describe(r);
}

TEST_F(LocalMltkVersionTest, WithoutMltkTheRemoteGetsTheLatestAfterOneStart) {
    ProcessResult r = mlt({"ssh", "train", "kws", "--dry-run"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(has_text(r.out, "  in a new venv with: wheel silabs-mltk\n")) << describe(r);
    EXPECT_TRUE(lacks_text(r.out, "or, when those fail")) << describe(r);
    EXPECT_EQ(starts(), 1u) << describe(r);
}

TEST_F(LocalMltkVersionTest, ATrainChecksItsPlanBeforeTheLoadWithoutAskingPython) {
    // The train checks its plan on the literals before the load starts, plans again after
    // it, then fails to connect (nothing listens there).
    use_the_standin_mltk();
    ProcessResult r = mlt({"ssh", "-p", std::to_string(find_free_port()), "train", "kws"});
    EXPECT_NE(r.exit_code, 0) << describe(r);
    EXPECT_EQ(starts(), 1u) << describe(r);
}

}  // namespace
}  // namespace mlt_test
