// The vast.ai CLI as mlt drives it (src/provider/vast_cli.cpp), against the stand-in `vastai`
// (tests/integration/standins/vastai): its marketplace is a state dir, and its `create
// instance` starts a real throwaway sshd on loopback as the instance, its `destroy` ends it.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>

#include "harness/files.h"
#include "harness/test_sshd.h"
#include "harness/train_fixture.h"
#include "mlt/provider/provider.h"
#include "mlt/util/error.h"

namespace fs = std::filesystem;

namespace mlt_test {
namespace {

class ProviderVastTest : public ::testing::Test {
  protected:
    void SetUp() override {
        machine_ = std::make_unique<TestSshd>();
        machine_->stop();  // the stand-in starts it as the instance
        std::error_code ec;
        fs::remove(machine_->pid_file(), ec);
        state_ = machine_->dir() + "/vast";
        fs::create_directories(state_);
        old_path_ = ::getenv("PATH") ? ::getenv("PATH") : "";
        ::setenv("PATH",
                 (std::string(MLT_SOURCE_DIR) + "/tests/integration/standins:" + old_path_).c_str(),
                 1);
        ::setenv("MLT_STANDIN_DIR", state_.c_str(), 1);
        settings_.name = "vast";
        settings_.offer = "gpu_name=RTX_4090 reliability2>0.98";
        settings_.image = "pytorch/pytorch";
        settings_.disk_gb = 20;
    }
    void TearDown() override {
        ::setenv("PATH", old_path_.c_str(), 1);
        ::unsetenv("MLT_STANDIN_DIR");
        machine_.reset();
    }
    void offers(const std::string& more = {}) const {
        const std::string machine = "{\"config\": \"" + machine_->config_path() +
                                    "\", \"pid_file\": \"" + machine_->pid_file() +
                                    "\", \"port\": " + std::to_string(machine_->port()) + "}";
        write_file(state_ + "/offers.json",
                   "[{\"id\": 11, \"dph_total\": 0.52, \"gpu_name\": \"RTX 4090\", \"num_gpus\": "
                   "1, \"reliability2\": 0.99, \"rentable\": true, \"_machine\": " +
                       machine +
                       "},\n {\"id\": 12, \"dph_total\": 0.31, \"gpu_name\": \"RTX 4090\", "
                       "\"num_gpus\": 2, \"reliability2\": 0.995, \"rentable\": true, "
                       "\"_machine\": " +
                       machine + more +
                       "},\n {\"id\": 13, \"dph_total\": 0.1, \"gpu_name\": \"RTX 3090\", "
                       "\"num_gpus\": 1, \"reliability2\": 0.99, \"rentable\": true, "
                       "\"_machine\": " +
                       machine + "}]\n");
    }
    std::unique_ptr<mlt::Provider> vast() const {
        return mlt::make_provider(settings_, std::chrono::seconds(30));
    }

    std::unique_ptr<TestSshd> machine_;
    std::string state_, old_path_;
    mlt::ProviderSettings settings_;
};

TEST_F(ProviderVastTest, SearchCreateShowDestroyAStandInInstance) {
    offers(", \"_billed_dph\": 0.45");
    auto p = vast();
    const auto found = p->offers(settings_);
    ASSERT_EQ(found.size(), 2u);   // the 3090 does not match the filter
    EXPECT_EQ(found[0].id, "12");  // cheapest first
    EXPECT_DOUBLE_EQ(found[0].price_per_hour, 0.31);
    EXPECT_EQ(found[0].what, "2x RTX 4090");
    const std::string id = p->create(found[0], settings_, "mlt-run-1");
    auto inst = p->instance(id);
    ASSERT_TRUE(inst);
    EXPECT_EQ(inst->state, mlt::Instance::State::running) << inst->status;
    EXPECT_EQ(inst->label, "mlt-run-1");
    ASSERT_TRUE(inst->price_per_hour);
    EXPECT_DOUBLE_EQ(*inst->price_per_hour, 0.45);  // what it bills, not what was listed
    EXPECT_EQ(inst->ssh_host, "127.0.0.1");
    EXPECT_EQ(inst->ssh_port, machine_->port());
    EXPECT_TRUE(path_exists(machine_->pid_file())) << "the instance's sshd did not start";
    ASSERT_EQ(p->instances().size(), 1u);
    p->stop(id);
    inst = p->instance(id);
    ASSERT_TRUE(inst);
    EXPECT_EQ(inst->state, mlt::Instance::State::stopped) << inst->status;
    p->destroy(id);
    EXPECT_FALSE(p->instance(id));
    EXPECT_TRUE(p->instances().empty());
    EXPECT_FALSE(path_exists(machine_->pid_file())) << "the instance's sshd still runs";
    // destroy answered the CLI's question on stdin; every call was one the real CLI takes.
    const std::string calls = read_or_empty(state_ + "/calls.log");
    EXPECT_NE(calls.find("destroy\tinstance\t" + id + "\n"), std::string::npos) << calls;
}

TEST_F(ProviderVastTest, TheCliMissingOrLoggedOutIsOneClearError) {
    offers();
    write_file(state_ + "/logged_out", "");
    try {
        vast()->offers(settings_);
        ADD_FAILURE() << "no error";
    } catch (const mlt::Error& e) {
        EXPECT_EQ(e.kind(), mlt::ErrorKind::config);
        EXPECT_NE(std::string(e.what()).find(
                      "vastai search offers failed: Failed with error 401: Invalid user key"),
                  std::string::npos)
            << e.what();
    }
    ::setenv("PATH", "/nonexistent", 1);
    try {
        vast()->offers(settings_);
        ADD_FAILURE() << "no error";
    } catch (const mlt::Error& e) {
        EXPECT_NE(std::string(e.what()).find("vastai cannot be run"), std::string::npos)
            << e.what();
    }
}

TEST_F(ProviderVastTest, AnInstanceTheHostTookBackIsLost) {
    offers();
    auto p = vast();
    const std::string id = p->create(p->offers(settings_).at(0), settings_, "mlt-run-2");
    ASSERT_EQ(std::system(("vastai _standin preempt " + id).c_str()), 0);
    const auto inst = p->instance(id);
    ASSERT_TRUE(inst);
    EXPECT_EQ(inst->state, mlt::Instance::State::lost) << inst->status;
    p->destroy(id);
}

}  // namespace
}  // namespace mlt_test
