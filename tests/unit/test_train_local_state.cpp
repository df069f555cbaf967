// mlt's own local files are never written through a symlink: the console copy, its run tag
// (written atomically under a predictable temporary name), and the local lock.

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "mlt/train/local/local_state.h"
#include "mlt/util/error.h"
#include "transfer_fixtures.h"

namespace {

namespace fs = std::filesystem;
using mlt::test::slurp;
using mlt::test::TempDir;
using mlt::test::write_file;

TEST(TrainLocalState, ASymlinkAtTheConsoleCopyIsOneClearErrorAndItsTargetIsNotWritten) {
    TempDir dir;
    write_file(dir / "victim", "keep me");
    fs::create_directories(dir / "logs");
    fs::create_symlink(dir / "victim", dir / "logs/mltk_ssh_train_m.log");
    EXPECT_THROW(mlt::check_own_file(dir / "logs/mltk_ssh_train_m.log"), mlt::Error);
    mlt::LocalConsole console(dir / "logs/mltk_ssh_train_m.log", dir / "state");
    try {
        console.open("run-1");
        ADD_FAILURE() << "opened a console copy that is a symlink";
    } catch (const mlt::Error& e) {
        EXPECT_NE(std::string(e.what()).find("is a symlink"), std::string::npos) << e.what();
        EXPECT_EQ(e.code(), mlt::exit_code::kUsage);
    }
    EXPECT_EQ(slurp(dir / "victim"), "keep me");
}

// The run tag is written to `console_run.mlt-tmp-<pid>` and renamed: a symlink planted under
// that name is replaced, not followed.
TEST(TrainLocalState, ASymlinkAtTheRunTagsTemporaryNameIsNotWrittenThrough) {
    TempDir dir;
    write_file(dir / "victim", "keep me");
    fs::create_directories(dir / "state");
    fs::create_symlink(dir / "victim",
                       dir / ("state/console_run.mlt-tmp-" + std::to_string(::getpid())));
    mlt::LocalConsole console(dir / "logs/mltk_ssh_train_m.log", dir / "state");
    EXPECT_EQ(console.open("run-1"), 0u);
    EXPECT_EQ(slurp(dir / "victim"), "keep me");
    EXPECT_EQ(slurp(dir / "state/console_run"), "run-1\n");
}

TEST(TrainLocalState, ASymlinkAtTheRunTagIsOneClearError) {
    TempDir dir;
    write_file(dir / "victim", "keep me");
    fs::create_directories(dir / "state");
    fs::create_symlink(dir / "victim", dir / "state/console_run");
    mlt::LocalConsole console(dir / "logs/mltk_ssh_train_m.log", dir / "state");
    EXPECT_THROW(console.open("run-1"), mlt::Error);
    EXPECT_EQ(slurp(dir / "victim"), "keep me");
}

}  // namespace
