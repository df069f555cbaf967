// RunPod's CLI as mlt drives it (src/provider/runpod_cli.cpp), against the stand-in
// `runpodctl` (tests/integration/standins/runpodctl): its `create pod` starts a real throwaway
// sshd on loopback as the pod, its `remove pod` ends it.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>

#include "harness/files.h"
#include "harness/standin_market.h"
#include "harness/test_sshd.h"
#include "harness/train_fixture.h"
#include "mlt/provider/provider.h"
#include "mlt/util/error.h"

namespace fs = std::filesystem;

namespace mlt_test {
namespace {

class ProviderRunpodTest : public StandinProviderTest {
  protected:
    void SetUp() override {
        StandinProviderTest::SetUp();
        const std::string machine = StandinMarket::machine_json(*machine_);
        write_file(state_ + "/gpus.json",
                   "[{\"id\": \"NVIDIA GeForce RTX 4090\", \"price\": 0.69, \"_billed\": 0.75, "
                   "\"_machine\": " +
                       machine +
                       "},\n {\"id\": \"NVIDIA GeForce RTX 3090\", \"price\": 0.3, "
                       "\"_machine\": " +
                       machine + "}]\n");
        settings_.name = "runpod";
        settings_.offer = "NVIDIA GeForce RTX 4090";
        settings_.image = "runpod/pytorch:2.1";
        settings_.disk_gb = 30;
    }
};

TEST_F(ProviderRunpodTest, ListCreateShowStopRemoveAStandInPod) {
    auto p = provider();
    const auto found = p->offers(settings_);
    ASSERT_EQ(found.size(), 1u);  // the GPU type asked for
    EXPECT_EQ(found[0].id, "NVIDIA GeForce RTX 4090");
    EXPECT_DOUBLE_EQ(found[0].price_per_hour, 0.69);
    expect_a_whole_life(*p, found[0], "mlt-run-9", 0.75);
}

TEST_F(ProviderRunpodTest, NotLoggedInIsOneClearError) {
    write_file(state_ + "/logged_out", "");
    const std::string what = config_error_of([&] { provider()->offers(settings_); });
    EXPECT_NE(what.find("runpodctl get cloud failed: Error: API key not found"), std::string::npos)
        << what;
}

}  // namespace
}  // namespace mlt_test
