// The local record of rented machines: each instance as its newest record has it, destroyed
// ones left out, odd lines skipped, never written through a symlink.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "mlt/provider/instances.h"
#include "mlt/util/error.h"

namespace fs = std::filesystem;

namespace mlt {
namespace {

class RentedInstances : public ::testing::Test {
  protected:
    void SetUp() override {
        std::string dir = (fs::temp_directory_path() / "mlt-instances-XXXXXX").string();
        ASSERT_NE(mkdtemp(dir.data()), nullptr);
        dir_ = dir;
        path_ = dir_ + "/ssh/instances.jsonl";
    }
    void TearDown() override { fs::remove_all(dir_); }
    static RentedInstance inst(const std::string& id, const std::string& state, double at) {
        RentedInstance i;
        i.provider = "vast";
        i.id = id;
        i.run_id = "run-" + id;
        i.model = "m";
        i.label = "mlt-run-" + id;
        i.state = state;
        i.at = at;
        return i;
    }
    std::string dir_, path_;
};

TEST_F(RentedInstances, EachAsItsNewestRecordHasItAndDestroyedOnesLeftOut) {
    EXPECT_TRUE(read_rented_instances(path_, true).empty());  // no file yet
    RentedInstance a = inst("41", "created", 100);
    a.price_per_hour = 0.5;
    record_rented_instance(path_, a);
    record_rented_instance(path_, inst("42", "created", 110));
    record_rented_instance(path_, inst("41", "stopped", 200));
    record_rented_instance(path_, inst("42", "destroyed", 210));
    std::ofstream(path_, std::ios::app) << "not json\n{\"id\": 5}\n";
    struct stat st;
    ASSERT_EQ(::stat(path_.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    const auto live = read_rented_instances(path_, false);
    ASSERT_EQ(live.size(), 1u);
    EXPECT_EQ(live[0].id, "41");
    EXPECT_EQ(live[0].state, "stopped");
    EXPECT_DOUBLE_EQ(live[0].since, 100);
    EXPECT_DOUBLE_EQ(live[0].at, 200);
    ASSERT_TRUE(live[0].price_per_hour);  // kept from the first record
    EXPECT_DOUBLE_EQ(*live[0].price_per_hour, 0.5);
    EXPECT_EQ(live[0].run_id, "run-41");
    EXPECT_EQ(read_rented_instances(path_, true).size(), 2u);
}

TEST_F(RentedInstances, NeverWrittenThroughASymlink) {
    fs::create_directories(dir_ + "/ssh");
    fs::create_symlink(dir_ + "/elsewhere", path_);
    EXPECT_THROW(record_rented_instance(path_, inst("1", "created", 1)), Error);
    EXPECT_FALSE(fs::exists(dir_ + "/elsewhere"));
}

}  // namespace
}  // namespace mlt
