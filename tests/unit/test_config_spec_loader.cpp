// Reading a spec's SshMixin values through a local MLTK (issue 18), with the stand-in MLTK of
// tests/integration/mltk_standin/ on PYTHONPATH, whose load_mltk_model runs the spec.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "mlt/config/local_mltk.h"
#include "mlt/config/settings.h"
#include "mlt/config/spec_options.h"
#include "mlt/util/error.h"
#include "transfer_fixtures.h"

namespace mlt {
namespace {

using Env = std::vector<std::pair<std::string, std::string>>;

using test::ScopedEnv;

const char* const kSpecHead =
    "import os\n"
    "import mltk.core as mltk_core\n"
    "class MyModel(mltk_core.MltkModel, mltk_core.TrainMixin, mltk_core.SshMixin):\n"
    "    pass\n"
    "my_model = MyModel()\n";

class SpecLoaderTest : public ::testing::Test {
  protected:
    std::string write(const std::string& name, const std::string& text) {
        std::string path = dir_ + "/" + name;
        std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
        return path;
    }

    SshSettings load(const std::string& spec_body, const std::string& user = {},
                     SpecOptions options = {}) {
        SettingsSources sources;
        sources.spec_path = write("spec.py", std::string(kSpecHead) + spec_body);
        if (!user.empty()) sources.user_settings_path = write("user.yaml", user);
        warnings_.clear();
        return load_settings(sources, options, &warnings_);
    }

    std::string error_of(const std::string& spec_body, const std::string& user = {},
                         SpecOptions options = {}) {
        try {
            load(spec_body, user, options);
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::config);
            return e.what();
        }
        ADD_FAILURE() << "no error";
        return {};
    }

    test::TempDir tmp_;
    const std::string dir_ = tmp_.path();
    std::vector<SettingsWarning> warnings_;
    ScopedEnv python_path_{"PYTHONPATH",
                           std::string(MLT_SOURCE_DIR) + "/tests/integration/mltk_standin"};
};

TEST_F(SpecLoaderTest, ComputedValuesComeFromTheLiveModel) {
    ScopedEnv teacher("TRAIN_TEACHER", "1");
    SshSettings s = load(
        "def prepare():\n"
        "    t = os.environ.get('TRAIN_TEACHER', '0') == '1'\n"
        "    my_model.ssh_environment = dict(TRAIN_TEACHER='1' if t else '0')\n"
        "    my_model.ssh_upload_files = [os.path.basename(my_model.model_specification_path)"
        ".replace('.py', '.teacher.h5')]\n"
        "print('the spec prints this')\n"
        "prepare()\n");
    EXPECT_EQ(s.environment, (Env{{"TRAIN_TEACHER", "1"}}));
    EXPECT_EQ(s.upload_files, (std::vector<std::string>{"spec.teacher.h5"}));
    EXPECT_TRUE(warnings_.empty());
}

TEST_F(SpecLoaderTest, TestModeReachesTheLoader) {
    SpecOptions options;
    options.test = true;
    SshSettings s = load("my_model.ssh_remote_dir = 'x'\n", {}, options);
    EXPECT_EQ(s.remote_dir, "x");
}

TEST_F(SpecLoaderTest, ASpecThatRaisesStopsWithItsError) {
    std::string e = error_of("raise RuntimeError('Teacher keras model not found: x.h5')\n");
    EXPECT_NE(e.find("spec.py failed to load through MLTK: RuntimeError: Teacher keras model "
                     "not found: x.h5"),
              std::string::npos)
        << e;
}

TEST_F(SpecLoaderTest, AHungSpecIsStoppedAfterTheBound) {
    SpecOptions options;
    options.load_timeout = std::chrono::seconds(2);
    std::string e = error_of("import time\ntime.sleep(600)\n", {}, options);
    EXPECT_NE(e.find("spec.py did not load through MLTK within 2 s (stopped it and its process "
                     "group)"),
              std::string::npos)
        << e;
}

TEST_F(SpecLoaderTest, LiteralsNeverRunsPython) {
    // The spec would fail to load; the literal reader only reads it.
    SshSettings s = load("raise RuntimeError('ran')\nmy_model.ssh_remote_dir = 'lit'\n",
                         "ssh:\n  spec_loader: literals\n");
    EXPECT_EQ(s.remote_dir, "lit");
}

TEST_F(SpecLoaderTest, MltkRequiredButMissingIsAnError) {
    ScopedEnv no_standin("PYTHONPATH", dir_);
    // python3 without its site-packages: an MLTK installed on this machine stays out.
    SpecOptions options;
    options.python = write("python3", "#!/bin/sh\nexec python3 -S \"$@\"\n");
    std::filesystem::permissions(options.python, std::filesystem::perms::owner_all);
    std::string e =
        error_of("my_model.ssh_remote_dir = 'lit'\n", "ssh:\n  spec_loader: mltk\n", options);
    EXPECT_NE(e.find("spec_loader is mltk, but python3 cannot import mltk"), std::string::npos)
        << e;
    // auto falls back to the literals.
    EXPECT_EQ(load("my_model.ssh_remote_dir = 'lit'\n", {}, options).remote_dir, "lit");
}

TEST_F(SpecLoaderTest, NoPythonIsAnErrorOnlyWhenMltkIsRequired) {
    SpecOptions options;
    options.python = dir_ + "/no-such-python3";
    std::string e =
        error_of("my_model.ssh_remote_dir = 'lit'\n", "ssh:\n  spec_loader: mltk\n", options);
    EXPECT_NE(e.find("spec_loader is mltk, but python3 cannot run: "), std::string::npos) << e;
    EXPECT_EQ(load("my_model.ssh_remote_dir = 'lit'\n", {}, options).remote_dir, "lit");
}

TEST_F(SpecLoaderTest, WithoutOptionsNoPythonRuns) {
    // load_settings(sources, warnings) reads the literals whatever spec_loader says.
    SettingsSources sources;
    sources.spec_path = write("spec.py", "raise RuntimeError('ran')\nm.ssh_remote_dir = 'lit'\n");
    sources.user_settings_path = write("user.yaml", "ssh:\n  spec_loader: mltk\n");
    EXPECT_EQ(load_settings(sources, nullptr).remote_dir, "lit");
}

TEST_F(SpecLoaderTest, WhatTheSpecPrintsIsNeverTakenForTheResult) {
    // A spec printing what looks like the driver's result, on stdout and stderr.
    SshSettings s = load(
        "import sys\n"
        "print('{\"ssh\": {\"remote_dir\": \"printed\"}}')\n"
        "print('{\"ssh\": {\"remote_dir\": \"printed\"}}', file=sys.stderr)\n"
        "my_model.ssh_remote_dir = 'set'\n");
    EXPECT_EQ(s.remote_dir, "set");
}

TEST_F(SpecLoaderTest, AThreadTheSpecLeftRunningDoesNotHoldTheLoad) {
    SpecOptions options;
    options.load_timeout = std::chrono::seconds(20);
    SshSettings s = load(
        "import threading, time\n"
        "threading.Thread(target=time.sleep, args=(60,)).start()\n"
        "my_model.ssh_remote_dir = 'x'\n",
        {}, options);
    EXPECT_EQ(s.remote_dir, "x");
}

TEST_F(SpecLoaderTest, AnErrorInsideMltksImportIsTheSpecsLoadError) {
    // An MLTK whose own import fails (a missing dependency) is no "MLTK absent".
    std::filesystem::create_directories(dir_ + "/mltk/core");
    write("mltk/__init__.py", "");
    write("mltk/core/__init__.py", "import tensorflow_not_installed_here\n");
    ScopedEnv broken("PYTHONPATH", dir_);
    std::string e = error_of("my_model.ssh_remote_dir = 'lit'\n");
    EXPECT_NE(e.find("spec.py failed to load through MLTK: ModuleNotFoundError: No module named "
                     "'tensorflow_not_installed_here'"),
              std::string::npos)
        << e;
}

TEST_F(SpecLoaderTest, TheLoadTellsTheLocalMltkVersion) {
    remember_local_mltk_version("python3", std::string("0.1.0"));
    load("my_model.ssh_remote_dir = 'x'\n");
    EXPECT_EQ(local_mltk_version(), "0.0.0+standin");  // tests/integration/mltk_standin/mltk
    // A load with another interpreter (here one without MLTK) tells nothing of python3's.
    ScopedEnv no_standin("PYTHONPATH", dir_);
    SpecOptions options;
    options.python = write("python3", "#!/bin/sh\nexec python3 -S \"$@\"\n");
    std::filesystem::permissions(options.python, std::filesystem::perms::owner_all);
    load("my_model.ssh_remote_dir = 'x'\n", {}, options);
    EXPECT_EQ(local_mltk_version(), "0.0.0+standin");
}

}  // namespace
}  // namespace mlt
