#pragma once
// A stand-in marketplace for the provider tests: the state dir of the stand-in CLIs
// (tests/integration/standins: `vastai`, `runpodctl`), PATH and MLT_STANDIN_DIR set in this
// process so that mlt's provider code finds them, and machines: sshd's, stopped, that a
// stand-in starts as an instance and stops as it is destroyed.

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "harness/test_sshd.h"
#include "mlt/provider/provider.h"

namespace mlt_test {

class StandinMarket {
  public:
    StandinMarket();   // sets PATH and MLT_STANDIN_DIR
    ~StandinMarket();  // puts them back, ends the machines
    StandinMarket(const StandinMarket&) = delete;
    StandinMarket& operator=(const StandinMarket&) = delete;

    // The state dir (offers.json, gpus.json, calls.log, ...).
    const std::string& state() const { return state_; }
    // A new machine: a stopped sshd whose pid file is gone.
    TestSshd& add_machine();
    // The machine as the stand-ins' offers name it: {"config", "pid_file", "port"}.
    static std::string machine_json(const TestSshd& machine);

  private:
    std::vector<std::unique_ptr<TestSshd>> machines_;
    std::string state_, old_path_;
};

// A test of one marketplace's CLI against its stand-in, on one machine.
class StandinProviderTest : public ::testing::Test {
  protected:
    void SetUp() override;
    void TearDown() override { market_.reset(); }
    std::unique_ptr<mlt::Provider> provider() const;
    // Rents `offer` as `label` and follows it through its life: running on the machine at
    // `billed` per hour, listed, stopped, destroyed with its sshd gone. Returns its id.
    std::string expect_a_whole_life(mlt::Provider& p, const mlt::Offer& offer,
                                    const std::string& label, double billed);
    // The text of the mlt::Error (config) that `f` throws; empty (with a failure) if none.
    static std::string config_error_of(const std::function<void()>& f);

    std::unique_ptr<StandinMarket> market_;
    TestSshd* machine_ = nullptr;
    std::string state_;
    mlt::ProviderSettings settings_;
};

}  // namespace mlt_test
