// StandinMarket: the stand-in marketplace of the provider tests (harness/standin_market.h).
#include "harness/standin_market.h"

#include <signal.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>

#include "harness/files.h"
#include "harness/train_fixture.h"
#include "mlt/util/error.h"

namespace fs = std::filesystem;

namespace mlt_test {

StandinMarket::StandinMarket() {
    const char* path = ::getenv("PATH");
    old_path_ = path ? path : "";
    const std::string standins = std::string(MLT_SOURCE_DIR) + "/tests/integration/standins";
    ::setenv("PATH", (standins + ":" + old_path_).c_str(), 1);
    TestSshd& first = add_machine();
    state_ = first.dir() + "/market";
    fs::create_directories(state_);
    ::setenv("MLT_STANDIN_DIR", state_.c_str(), 1);
}

StandinMarket::~StandinMarket() {
    ::setenv("PATH", old_path_.c_str(), 1);
    ::unsetenv("MLT_STANDIN_DIR");
    // A test that failed before it destroyed its instance leaves the sshd a stand-in started
    // (a daemon TestSshd does not track): its pid file names it.
    for (const auto& m : machines_) {
        const long pid = std::atol(read_or_empty(m->pid_file()).c_str());
        if (pid > 0 && ::kill(static_cast<pid_t>(pid), SIGTERM) == 0)
            wait_until([&] { return ::kill(static_cast<pid_t>(pid), 0) != 0; },
                       std::chrono::seconds(10));
    }
    machines_.clear();
}

TestSshd& StandinMarket::add_machine() {
    machines_.push_back(std::make_unique<TestSshd>());
    TestSshd& m = *machines_.back();
    m.stop();
    std::error_code ec;
    fs::remove(m.pid_file(), ec);
    return m;
}

std::string StandinMarket::machine_json(const TestSshd& m) {
    return "{\"config\": \"" + m.config_path() + "\", \"pid_file\": \"" + m.pid_file() +
           "\", \"port\": " + std::to_string(m.port()) + "}";
}

void StandinProviderTest::SetUp() {
    market_ = std::make_unique<StandinMarket>();
    machine_ = &market_->add_machine();
    state_ = market_->state();
}

std::unique_ptr<mlt::Provider> StandinProviderTest::provider() const {
    return mlt::make_provider(settings_, std::chrono::seconds(30));
}

std::string StandinProviderTest::expect_a_whole_life(mlt::Provider& p, const mlt::Offer& offer,
                                                     const std::string& label, double billed) {
    const std::string id = p.create(offer, settings_, label);
    auto inst = p.instance(id);
    if (!inst) {
        ADD_FAILURE() << "instance " << id << " not there";
        return id;
    }
    EXPECT_EQ(inst->state, mlt::Instance::State::running) << inst->status;
    EXPECT_EQ(inst->label, label);
    EXPECT_TRUE(inst->price_per_hour && *inst->price_per_hour == billed);  // not the listed one
    EXPECT_EQ(inst->ssh_host, "127.0.0.1");
    EXPECT_EQ(inst->ssh_port, machine_->port());
    EXPECT_TRUE(path_exists(machine_->pid_file())) << "the instance's sshd did not start";
    EXPECT_EQ(p.instances().size(), 1u);
    p.stop(id);
    inst = p.instance(id);
    EXPECT_TRUE(inst && inst->state == mlt::Instance::State::stopped);
    p.destroy(id);
    EXPECT_FALSE(p.instance(id));
    EXPECT_TRUE(p.instances().empty());
    EXPECT_FALSE(path_exists(machine_->pid_file())) << "the instance's sshd still runs";
    return id;
}

std::string StandinProviderTest::config_error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const mlt::Error& e) {
        EXPECT_EQ(e.kind(), mlt::ErrorKind::config);
        return e.what();
    }
    ADD_FAILURE() << "no error";
    return {};
}

}  // namespace mlt_test
