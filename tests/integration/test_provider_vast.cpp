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
#include "harness/test_sshd.h"
#include "harness/train_fixture.h"
#include "mlt/provider/provider.h"
#include "mlt/provider/rent.h"
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
        second_ = std::make_unique<TestSshd>();
        second_->stop();
        std::error_code ec;
        fs::remove(second_->pid_file(), ec);
        const auto machine = [](const TestSshd& m) {
            return "{\"config\": \"" + m.config_path() + "\", \"pid_file\": \"" + m.pid_file() +
                   "\", \"port\": " + std::to_string(m.port()) + "}";
        };
        write_file(state_ + "/offers.json",
                   "[{\"id\": 21, \"dph_total\": 0.3, \"gpu_name\": \"RTX 4090\", \"num_gpus\": "
                   "1, \"reliability2\": 0.99, \"rentable\": true, \"_machine\": " +
                       machine(*machine_) + cheap +
                       "},\n {\"id\": 22, \"dph_total\": 0.5, \"gpu_name\": \"RTX 4090\", "
                       "\"num_gpus\": 1, \"reliability2\": 0.99, \"rentable\": true, "
                       "\"_machine\": " +
                       machine(*second_) + "}]\n");
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
    std::unique_ptr<TestSshd> second_;
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
    try {
        mlt::rent(*vast(), settings_, options(), lines);
        ADD_FAILURE() << "rented";
    } catch (const mlt::Error& e) {
        EXPECT_EQ(e.kind(), mlt::ErrorKind::config);
        EXPECT_NE(std::string(e.what()).find("under max_price $0.200/h (the cheapest: 1x RTX "
                                             "4090 at $0.300/h); nothing was rented"),
                  std::string::npos)
            << e.what();
    }
    EXPECT_TRUE(created_.empty());
    EXPECT_EQ(read_or_empty(state_ + "/calls.log").find("create"), std::string::npos);
}

}  // namespace
}  // namespace mlt_test
