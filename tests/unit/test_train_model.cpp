// Finding a model's spec as MLTK does: model_paths, the current directory, MLTK_MODEL_PATHS.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "mlt/commands/model.h"
#include "mlt/util/error.h"

namespace fs = std::filesystem;

namespace {

class ModelLookupTest : public ::testing::Test {
  protected:
    void SetUp() override {
        char tmpl[] = "/tmp/mlt-model-XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl), nullptr);
        dir_ = fs::canonical(tmpl).string();
        old_cwd_ = fs::current_path().string();
        if (const char* env = std::getenv("MLTK_MODEL_PATHS")) old_env_ = env;
        ::unsetenv("MLTK_MODEL_PATHS");
        fs::create_directories(dir_ + "/cwd");
        fs::current_path(dir_ + "/cwd");
    }
    void TearDown() override {
        fs::current_path(old_cwd_);
        if (old_env_)
            ::setenv("MLTK_MODEL_PATHS", old_env_->c_str(), 1);
        else
            ::unsetenv("MLTK_MODEL_PATHS");
        fs::remove_all(dir_);
    }

    // Creates <dir_>/<rel> (and its directories) and returns its path.
    std::string touch(const std::string& rel) const {
        const fs::path p = fs::path(dir_) / rel;
        fs::create_directories(p.parent_path());
        std::ofstream(p) << "# spec\n";
        return p.string();
    }
    std::string path(const std::string& rel) const { return dir_ + "/" + rel; }
    void set_env(const std::string& value) const { ::setenv("MLTK_MODEL_PATHS", value.c_str(), 1); }
    // The error message of resolving `argument`, or "" when it resolved.
    std::string error_of(const std::string& argument,
                         const std::vector<std::string>& model_paths) const {
        try {
            mlt::resolve_model(argument, model_paths);
        } catch (const mlt::Error& e) {
            EXPECT_EQ(e.kind(), mlt::ErrorKind::usage);
            return e.what();
        }
        return {};
    }

    std::string dir_;
    std::string old_cwd_;
    std::optional<std::string> old_env_;
};

TEST_F(ModelLookupTest, OrderIsModelPathsThenCwdThenEnvironment) {
    touch("paths/m.py");
    touch("cwd/m.py");
    touch("env/m.py");
    set_env(path("env"));
    EXPECT_EQ(mlt::resolve_model("m", {path("paths")}).spec_path, path("paths/m.py"));
    fs::remove(path("paths/m.py"));
    EXPECT_EQ(mlt::resolve_model("m", {path("paths")}).spec_path, path("cwd/m.py"));
    fs::remove(path("cwd/m.py"));
    const mlt::ModelRef ref = mlt::resolve_model("m", {path("paths")});
    EXPECT_EQ(ref.spec_path, path("env/m.py"));
    EXPECT_EQ(ref.spec_dir, path("env"));
    EXPECT_EQ(ref.spec_file, "m.py");
    EXPECT_EQ(ref.name, "m");
}

TEST_F(ModelLookupTest, SearchDirsInOrderWithoutDuplicates) {
    set_env(path("env") + "::" + path("paths") + ":" + path("env2"));
    const auto dirs = mlt::model_search_dirs({path("paths"), "~/../rel", path("cwd")});
    ASSERT_EQ(dirs.size(), 5u);
    EXPECT_EQ(dirs[0].path, path("paths"));
    EXPECT_TRUE(dirs[0].recursive);
    EXPECT_TRUE(fs::path(dirs[1].path).is_absolute()) << dirs[1].path;
    // The current directory, named in model_paths: searched there, but never recursively.
    EXPECT_EQ(dirs[2].path, path("cwd"));
    EXPECT_FALSE(dirs[2].recursive);
    // The empty entry and the second `paths` are dropped.
    EXPECT_EQ(dirs[3].path, path("env"));
    EXPECT_TRUE(dirs[3].recursive);
    EXPECT_EQ(dirs[4].path, path("env2"));
}

TEST_F(ModelLookupTest, ModelPathsAndEnvironmentAreSearchedRecursively) {
    touch("paths/group/sub/m.py");
    EXPECT_EQ(mlt::resolve_model("m", {path("paths")}).spec_path, path("paths/group/sub/m.py"));
    touch("env/a/b/c/other.py");
    set_env(path("env"));
    EXPECT_EQ(mlt::resolve_model("other", {}).spec_path, path("env/a/b/c/other.py"));
}

TEST_F(ModelLookupTest, CurrentDirectoryIsNotSearchedRecursively) {
    touch("cwd/sub/m.py");
    const std::string error = error_of("m", {});
    EXPECT_NE(error.find("m.py"), std::string::npos) << error;
    EXPECT_NE(error.find(path("cwd")), std::string::npos) << error;
}

TEST_F(ModelLookupTest, FirstMatchInWalkOrderWins) {
    // Depth first as os.walk, siblings in name order: a's subtree before b.
    touch("paths/b/m.py");
    touch("paths/a/deep/m.py");
    EXPECT_EQ(mlt::resolve_model("m", {path("paths")}).spec_path, path("paths/a/deep/m.py"));
    // A directory's own file comes before its subdirectories.
    touch("paths/m.py");
    EXPECT_EQ(mlt::resolve_model("m", {path("paths")}).spec_path, path("paths/m.py"));
}

TEST_F(ModelLookupTest, HiddenCacheAndPackageDirsAreSkipped) {
    for (const char* rel : {"paths/.git/m.py", "paths/.venv/m.py", "paths/__pycache__/m.py",
                            "paths/node_modules/pkg/m.py", "paths/lib/site-packages/m.py",
                            "paths/lib/dist-packages/m.py", "paths/env/lib/m.py"})
        touch(rel);
    touch("paths/env/pyvenv.cfg");  // a virtual environment not named .venv
    const std::string error = error_of("m", {path("paths")});
    EXPECT_NE(error.find("not found"), std::string::npos) << error;
    // What is not skipped is found.
    touch("paths/models/m.py");
    EXPECT_EQ(mlt::resolve_model("m", {path("paths")}).spec_path, path("paths/models/m.py"));
}

TEST_F(ModelLookupTest, SymlinkedDirsAreFollowedAndLoopsEnd) {
    touch("elsewhere/inner/m.py");
    fs::create_directories(path("paths"));
    fs::create_directory_symlink(path("elsewhere"), path("paths/link"));
    fs::create_directory_symlink(path("paths"), path("paths/loop"));
    EXPECT_EQ(mlt::resolve_model("m", {path("paths")}).spec_path, path("paths/link/inner/m.py"));
    // Not found: the walk still ends, and says where it looked.
    const std::string error = error_of("absent", {path("paths")});
    EXPECT_NE(error.find(path("paths") + " (and below)"), std::string::npos) << error;
}

TEST_F(ModelLookupTest, NotFoundListsEveryPlaceSearched) {
    fs::create_directories(path("paths"));
    set_env(path("env"));
    const std::string error = error_of("nope", {path("paths")});
    EXPECT_NE(error.find("nope.py"), std::string::npos) << error;
    const auto at_paths = error.find(path("paths") + " (and below)");
    const auto at_cwd = error.find(path("cwd") + ",");
    const auto at_env = error.find(path("env") + " (and below) (missing)");
    ASSERT_NE(at_paths, std::string::npos) << error;
    ASSERT_NE(at_cwd, std::string::npos) << error;
    ASSERT_NE(at_env, std::string::npos) << error;
    EXPECT_LT(at_paths, at_cwd);
    EXPECT_LT(at_cwd, at_env);
}

TEST_F(ModelLookupTest, TestSuffixAndTestFlagNameTheTestModel) {
    touch("cwd/m.py");
    for (auto [argument, test] : std::vector<std::pair<std::string, bool>>{
             {"m-test", false}, {"m", true}, {"m-test", true}}) {
        SCOPED_TRACE(argument + (test ? " --test" : ""));
        const mlt::ModelRef ref = mlt::resolve_model(argument, {}, test);
        EXPECT_EQ(ref.name, "m-test");  // never m-test-test
        EXPECT_EQ(ref.spec_path, path("cwd/m.py"));
    }
    EXPECT_EQ(mlt::resolve_model("m", {}).name, "m");
    // A spec path with --test.
    EXPECT_EQ(mlt::resolve_model(path("cwd/m.py"), {}, true).name, "m-test");
    EXPECT_EQ(mlt::resolve_model("./m.py", {}, false).name, "m");
}

// The job commands act on a bare NAME whose spec is not here; a path must exist, and the
// name rules hold either way.
TEST_F(ModelLookupTest, SpecOptionalGivesTheNameOfAMissingSpec) {
    mlt::ModelRef ref = mlt::resolve_model("gone", {path("paths")}, false, true);
    EXPECT_EQ(ref.name, "gone");
    EXPECT_TRUE(ref.spec_path.empty());
    EXPECT_TRUE(ref.spec_dir.empty());
    EXPECT_TRUE(ref.spec_file.empty());
    EXPECT_EQ(mlt::resolve_model("gone-test", {}, false, true).name, "gone-test");
    EXPECT_EQ(mlt::resolve_model("gone", {}, true, true).name, "gone-test");
    touch("cwd/here.py");
    EXPECT_EQ(mlt::resolve_model("here", {}, false, true).spec_path, path("cwd/here.py"));
    for (const char* argument :
         {"dir/gone.py", "gone.py", "./gone", "../gone", "a;b", "-x", "$(id)", ".hidden"})
        EXPECT_THROW(mlt::resolve_model(argument, {}, false, true), mlt::Error) << argument;
}

TEST_F(ModelLookupTest, TestSuffixAlwaysMeansTheSpecWithoutIt) {
    // As MLTK: NAME-test is the test model of NAME.py, never a spec NAME-test.py.
    touch("cwd/solo-test.py");
    EXPECT_NE(error_of("solo-test", {}).find("solo.py"), std::string::npos);
}

TEST_F(ModelLookupTest, MissingSpecPathIsAnError) {
    const std::string error = error_of("models/absent.py", {});
    EXPECT_NE(error.find("models/absent.py"), std::string::npos) << error;
}

}  // namespace
