// --clean on the remote (JobDir::clean_outputs, clean_outputs.sh) and the barrier of several
// nodes (barrier_ready.sh, barrier_open.sh), under dash and BusyBox's sh.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "job_fixture.h"
#include "local_remote.h"
#include "mlt/job/job.h"
#include "mlt/util/error.h"
#include "mlt/util/paths.h"

namespace fs = std::filesystem;

namespace {

class JobClean : public mlt::test::JobFixture {
  protected:
    void put(const std::string& rel, const std::string& text) {
        fs::create_directories(fs::path(dir_ + "/" + rel).parent_path());
        mlt::write_file_atomic(dir_ + "/" + rel, text, 0644);
    }
};

TEST_P(JobClean, RemovesTheArchiveAndTheModelsLogDir) {
    mlt::test::LocalRemote r(shell());
    put("m.mltk.zip", "old archive");
    put("logs/m/events.txt", "old logs");
    put("keep.txt", "another model's file");
    job(r).clean_outputs("m.mltk.zip", "logs/m");
    EXPECT_FALSE(exists("m.mltk.zip"));
    EXPECT_FALSE(exists("logs/m"));
    EXPECT_TRUE(exists("logs"));
    EXPECT_EQ(read("keep.txt"), "another model's file");
    // Nothing there, or no log dir named: only the archive goes.
    job(r).clean_outputs("m.mltk.zip", "logs/m");
    put("m.mltk.zip", "again");
    job(r).clean_outputs("m.mltk.zip", "");
    EXPECT_FALSE(exists("m.mltk.zip"));
}

// What the client refuses already is refused again where the truth is: a log dir that is
// the remote dir or above it (through a symlink too), or one that holds job state.
TEST_P(JobClean, RefusesALogDirThatHoldsMoreThanTheModelsLogs) {
    mlt::test::LocalRemote r(shell());
    put("keep.txt", "another model's file");
    put("deep/.mlt/m/lock", "run=x\n");
    ASSERT_EQ(::symlink(".", (dir_ + "/here").c_str()), 0);
    ASSERT_EQ(::symlink("..", (dir_ + "/up").c_str()), 0);
    for (const std::string& bad : std::vector<std::string>{".", "here", "up", dir_, "deep", "/"}) {
        SCOPED_TRACE(bad);
        try {
            job(r).clean_outputs("m.mltk.zip", bad);
            ADD_FAILURE() << "removed " << bad;
        } catch (const mlt::Error& e) {
            EXPECT_NE(std::string(e.what()).find("it holds more than this model's logs"),
                      std::string::npos)
                << e.what();
        }
        EXPECT_EQ(read("keep.txt"), "another model's file");
        EXPECT_TRUE(exists("deep/.mlt/m/lock"));
    }
}

TEST_P(JobClean, TheBarrierSaysReadyOnlyOnceTheJobWaitsAndOpensIt) {
    mlt::test::LocalRemote r(shell());
    put(".mlt/m/run_id", "run-1\n");
    EXPECT_FALSE(job(r).barrier_ready());
    put(".mlt/m/ready", "");
    EXPECT_TRUE(job(r).barrier_ready());
    EXPECT_TRUE(job(r).open_barrier());
    EXPECT_TRUE(exists(".mlt/m/go"));
}

INSTANTIATE_JOB_SHELLS(JobClean);

}  // namespace
