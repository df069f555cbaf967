// The host's samples (gpu_watch.h): the follow script's line parsed, its JSON record, the
// status line's part, and GpuWatch's mean, peak and idle time.
#include <gtest/gtest.h>

#include "mlt/train/watch/gpu_watch.h"

namespace {

TEST(GpuWatch, ASampleLineWithTwoGpusLoadAndDisk) {
    const auto s = mlt::parse_sample(
        "mlt-sample 1700000000 gpu=80,5000,81920;5,100,81920 "
        "load=3.25 free=1048576");
    ASSERT_TRUE(s);
    EXPECT_EQ(s->time, 1700000000);
    ASSERT_EQ(s->gpus.size(), 2u);
    EXPECT_EQ(s->gpus[0].util, 80);
    EXPECT_EQ(s->gpus[1].mem_used_mib, 100);
    EXPECT_DOUBLE_EQ(s->load1.value_or(0), 3.25);
    EXPECT_EQ(s->free_kib.value_or(0), 1048576);
    EXPECT_EQ(mlt::gpu_status(*s), "GPU 80% 4.9/80.0 GiB, 5% 0.1/80.0 GiB");
    EXPECT_EQ(mlt::sample_json(*s, "r1"),
              "{\"disk_free_kib\":1048576,\"gpus\":[{\"mem_total_mib\":81920,\"mem_used_mib\":"
              "5000,\"util\":80},{\"mem_total_mib\":81920,\"mem_used_mib\":100,\"util\":5}],"
              "\"load1\":3.25,\"run_id\":\"r1\",\"time\":1700000000}");
    std::string run;
    const auto back = mlt::parse_sample_json(mlt::sample_json(*s, "r1"), &run);
    ASSERT_TRUE(back);
    EXPECT_EQ(run, "r1");
    EXPECT_EQ(mlt::sample_json(*back, run), mlt::sample_json(*s, "r1"));
    EXPECT_FALSE(mlt::parse_sample_json("{\"time\": 1}", &run));
    EXPECT_FALSE(mlt::parse_sample_json("not json", &run));
}

TEST(GpuWatch, NoGpuToolOrOddOutputGivesNoGpuColumn) {
    auto s = mlt::parse_sample("mlt-sample 5 load=0.5 free=10");
    ASSERT_TRUE(s);
    EXPECT_TRUE(s->gpus.empty());
    EXPECT_EQ(mlt::gpu_status(*s), "");
    s = mlt::parse_sample("mlt-sample 5 gpu=[N/A],1,2 load= free=");
    ASSERT_TRUE(s);
    EXPECT_TRUE(s->gpus.empty());
    EXPECT_FALSE(s->load1);
    EXPECT_FALSE(mlt::parse_sample("it has not started"));
    EXPECT_FALSE(mlt::parse_sample("mlt-sample soon"));
}

TEST(GpuWatch, MeanAndPeak) {
    mlt::GpuWatch w;
    EXPECT_EQ(w.summary(), "");
    const auto idle = *mlt::parse_sample("mlt-sample 1 gpu=0,1,2;9,1,2");
    const auto busy = *mlt::parse_sample("mlt-sample 1 gpu=100,1,2;50,1,2");
    w.add(idle);
    w.add(idle);
    w.add(busy);
    w.add(*mlt::parse_sample("mlt-sample 1 load=1"));  // no GPU: not counted
    w.add(idle);
    EXPECT_EQ(w.summary(), "mean 22 %, peak 100 % over 4 samples");  // (4.5 * 3 + 75) / 4
}

}  // namespace
