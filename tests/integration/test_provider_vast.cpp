// The vast.ai CLI as mlt drives it (src/provider/vast_cli.cpp), against the stand-in `vastai`
// (tests/integration/standins/vastai): its marketplace is a state dir, and its `create
// instance` starts a real throwaway sshd on loopback as the instance, its `destroy` ends it.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "harness/files.h"
#include "harness/standin_market.h"
#include "harness/test_sshd.h"
#include "harness/train_fixture.h"
#include "mlt/provider/provider.h"
#include "mlt/provider/rent.h"
#include "mlt/util/error.h"

namespace fs = std::filesystem;

namespace mlt_test {
namespace {

class ProviderVastTest : public StandinProviderTest {
  protected:
    void SetUp() override {
        StandinProviderTest::SetUp();
        settings_.name = "vast";
        settings_.offer = "gpu_name=RTX_4090 reliability2>0.98";
        settings_.image = "pytorch/pytorch";
        settings_.disk_gb = 20;
    }
    void offers(const std::string& more = {}) const {
        const std::string machine = StandinMarket::machine_json(*machine_);
        write_file(
            state_ + "/offers.json",
            "[{\"id\": 11, \"dph_total\": 0.52, \"gpu_name\": \"RTX 4090\", \"num_gpus\": "
            "1, \"reliability2\": 0.99, \"rentable\": true, \"disk_space\": 100, \"_machine\": " +
                machine +
                "},\n {\"id\": 12, \"dph_total\": 0.31, \"gpu_name\": \"RTX 4090\", "
                "\"num_gpus\": 2, \"reliability2\": 0.995, \"rentable\": true, \"disk_space\": "
                "100, "
                "\"_machine\": " +
                machine + more +
                "},\n {\"id\": 13, \"dph_total\": 0.1, \"gpu_name\": \"RTX 3090\", "
                "\"num_gpus\": 1, \"reliability2\": 0.99, \"rentable\": true, \"disk_space\": 100, "
                "\"_machine\": " +
                machine + "}]\n");
    }
    std::unique_ptr<mlt::Provider> vast() const { return provider(); }
};

TEST_F(ProviderVastTest, SearchCreateShowDestroyAStandInInstance) {
    offers(", \"_billed_dph\": 0.45");
    auto p = vast();
    const auto found = p->offers(settings_);
    ASSERT_EQ(found.size(), 2u);   // the 3090 does not match the filter
    EXPECT_EQ(found[0].id, "12");  // cheapest first
    EXPECT_DOUBLE_EQ(found[0].price_per_hour, 0.31);
    EXPECT_EQ(found[0].what, "2x RTX 4090");
    const std::string id = expect_a_whole_life(*p, found[0], "mlt-run-1", 0.45);
    // destroy answered the CLI's question on stdin; every call was one the real CLI takes.
    const std::string calls = read_or_empty(state_ + "/calls.log");
    EXPECT_NE(calls.find("destroy\tinstance\t" + id + "\n"), std::string::npos) << calls;
}

TEST_F(ProviderVastTest, TheCliMissingOrLoggedOutIsOneClearError) {
    offers();
    write_file(state_ + "/logged_out", "");
    std::string what = config_error_of([&] { vast()->offers(settings_); });
    EXPECT_NE(what.find("vastai search offers failed: Failed with error 401: Invalid user key"),
              std::string::npos)
        << what;
    ::setenv("PATH", "/nonexistent", 1);
    what = config_error_of([&] { vast()->offers(settings_); });
    EXPECT_NE(what.find("vastai cannot be run"), std::string::npos) << what;
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

// Lines a rent says, in order.
class Lines : public mlt::Reporter {
  public:
    void emit(mlt::Event, std::string_view text) override { said += std::string(text) + "\n"; }
    std::string said;
};

class ProviderRentTest : public ProviderVastTest {
  protected:
    // Offers on two machines of their own: 21 (cheap, `cheap` more fields) and 22.
    void two_offers(const std::string& cheap) {
        second_ = &market_->add_machine();
        write_file(
            state_ + "/offers.json",
            "[{\"id\": 21, \"dph_total\": 0.3, \"gpu_name\": \"RTX 4090\", \"num_gpus\": "
            "1, \"reliability2\": 0.99, \"rentable\": true, \"disk_space\": 100, \"_machine\": " +
                StandinMarket::machine_json(*machine_) + cheap +
                "},\n {\"id\": 22, \"dph_total\": 0.5, \"gpu_name\": \"RTX 4090\", "
                "\"num_gpus\": 1, \"reliability2\": 0.99, \"rentable\": true, \"disk_space\": 100, "
                "\"_machine\": " +
                StandinMarket::machine_json(*second_) + "}]\n");
    }
    mlt::RentOptions options() {
        mlt::RentOptions o;
        o.label = "mlt-run-7";
        o.wait = std::chrono::seconds(3);
        o.look = std::chrono::milliseconds(100);
        o.on_created = [&](const std::string& id) { created_.push_back(id); };
        o.on_destroyed = [&](const std::string& id) { destroyed_.push_back(id); };
        return o;
    }
    TestSshd* second_ = nullptr;
    std::vector<std::string> created_, destroyed_;
};

// The cheapest offer's instance bills more than the cap: destroyed at once, and the next offer
// is rented, up and answering on ssh.
TEST_F(ProviderRentTest, AnInstanceThatBillsOverTheCapIsDestroyedAndTheNextOfferTaken) {
    two_offers(", \"_billed_dph\": 0.9");
    settings_.max_price = 0.6;
    Lines lines;
    auto p = vast();
    const mlt::Rental r = mlt::rent(*p, settings_, options(), lines);
    ASSERT_EQ(created_.size(), 2u) << lines.said;
    EXPECT_EQ(destroyed_, std::vector<std::string>{created_[0]});
    EXPECT_EQ(r.id, created_[1]);
    EXPECT_DOUBLE_EQ(r.price_per_hour, 0.5);
    EXPECT_EQ(r.ssh_port, second_->port());
    EXPECT_TRUE(mlt::ssh_answers(r.ssh_host, r.ssh_port, std::chrono::seconds(5)));
    EXPECT_FALSE(p->instance(created_[0])) << "the instance over the cap is still there";
    EXPECT_NE(lines.said.find("bills $0.900/h, over max_price $0.600/h: destroyed"),
              std::string::npos)
        << lines.said;
    p->destroy(r.id);
}

// An instance that runs but never gets sshd is destroyed after the wait; the next is rented.
TEST_F(ProviderRentTest, AnInstanceWithoutSshdIsDestroyedAfterTheWait) {
    two_offers(", \"_no_sshd\": true");
    Lines lines;
    auto p = vast();
    const mlt::Rental r = mlt::rent(*p, settings_, options(), lines);
    ASSERT_EQ(created_.size(), 2u) << lines.said;
    EXPECT_EQ(destroyed_, std::vector<std::string>{created_[0]});
    EXPECT_EQ(r.ssh_port, second_->port());
    EXPECT_NE(lines.said.find("did not answer on ssh within 3.0 s: destroyed"), std::string::npos)
        << lines.said;
    EXPECT_TRUE(p->instances().size() == 1u);
    p->destroy(r.id);
}

// No offer under the cap: one clear error, and nothing is rented.
TEST_F(ProviderRentTest, NoOfferUnderTheCapRentsNothing) {
    two_offers("");
    settings_.max_price = 0.2;
    Lines lines;
    const std::string what =
        config_error_of([&] { mlt::rent(*vast(), settings_, options(), lines); });
    EXPECT_NE(what.find("under max_price $0.200/h (the cheapest: 1x RTX 4090 at $0.300/h); "
                        "nothing was rented"),
              std::string::npos)
        << what;
    EXPECT_TRUE(created_.empty());
    EXPECT_EQ(read_or_empty(state_ + "/calls.log").find("create"), std::string::npos);
}

}  // namespace
}  // namespace mlt_test
