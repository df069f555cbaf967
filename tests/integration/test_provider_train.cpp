// `train` with a provider and no host, against the stand-in `vastai`
// (tests/integration/standins): the machine is rented, trained on and destroyed with one
// command; a run lost with its machine goes on on a new rental; a killed mlt's run is found
// again by --resume; `instances` and `release` touch only what mlt rented.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "harness/expect.h"
#include "harness/fault_relay.h"
#include "harness/files.h"
#include "harness/net.h"
#include "harness/standin_market.h"
#include "harness/test_sshd.h"
#include "harness/train_fixture.h"

namespace fs = std::filesystem;

namespace mlt_test {
namespace {

constexpr int kEpochs = 4;

class ProviderTrainTest : public TrainTest {
  protected:
    void SetUp() override {
        TrainTest::SetUp();
        market_ = std::make_unique<StandinMarket>();  // PATH and MLT_STANDIN_DIR, here
        env().set("PATH", ::getenv("PATH"));
        env().set("MLT_STANDIN_DIR", market_->state());
        for (TestSshd** m : {&a_, &b_}) {
            *m = &market_->add_machine();
            (*m)->authorize_key_file(sshd().client_key_path() + ".pub");
        }
        hold_ = sshd().dir() + "/hold";
        // Resumes after its newest checkpoint; writes one per epoch. With the hold file
        // there, attempt 1 waits (bounded) after epoch 2 until it is gone.
        write_shell_model(
            "m",
            "n=0\n"
            "for f in \"$MLT_LOG_DIR\"/ckpt-*; do [ -e \"$f\" ] || continue; k=${f##*ckpt-}; "
            "[ \"$k\" -gt \"$n\" ] && n=$k; done\n"
            "echo \"attempt ${MLT_ATTEMPT:-1} resumes after epoch $n\"\n"
            "i=$((n+1))\n"
            "while [ $i -le " +
                std::to_string(kEpochs) +
                " ]; do\n"
                "  echo \"epoch $i\"\n"
                "  echo \"weights $i\" > \"$MLT_LOG_DIR/.t\" && mv \"$MLT_LOG_DIR/.t\" "
                "\"$MLT_LOG_DIR/ckpt-$i\"\n"
                "  if [ -z \"$MLT_ATTEMPT\" ] && [ $i -eq 2 ] && [ -e '" +
                hold_ +
                "' ]; then echo waiting; w=0; "
                "while [ -e '" +
                hold_ +
                "' ] && [ $w -lt 2400 ]; do sleep 0.05; w=$((w+1)); done; fi\n"
                "  i=$((i+1))\n"
                "done\n");
        write_model_settings("m", "ssh:\n  train_cmd: \"sh {spec}\"\n");
    }
    void TearDown() override {
        relay_.reset();
        market_.reset();  // ends the sshd's the stand-in started
        TrainTest::TearDown();
    }

    // Offers 21 (on machine A, behind a relay) and 22 (on B), A the cheaper; each bills
    // `billed` more than it lists.
    void offers(double billed = 0.05) {
        relay_ = std::make_unique<FaultRelay>(a_->port());
        const auto offer = [&](int id, double dph, const TestSshd& m, int port) {
            return "{\"id\": " + std::to_string(id) + ", \"dph_total\": " + std::to_string(dph) +
                   ", \"_billed_dph\": " + std::to_string(dph + billed) +
                   ", \"gpu_name\": \"RTX 4090\", \"num_gpus\": 1, \"reliability2\": 0.99, "
                   "\"rentable\": true, \"disk_space\": 100, \"_machine\": {\"config\": \"" +
                   m.config_path() + "\", \"pid_file\": \"" + m.pid_file() +
                   "\", \"port\": " + std::to_string(port) + "}}";
        };
        write_file(market_->state() + "/offers.json", "[" + offer(21, 0.30, *a_, relay_->port()) +
                                                          ",\n " +
                                                          offer(22, 0.40, *b_, b_->port()) + "]\n");
    }
    void write_settings(const std::string& max_price = "0.5", const std::string& extra = {}) const {
        env().write_settings("ssh:\n  remote_dir: \"" + remote() +
                             "\"\n  remote_log_dir: \"logs/{model}\"\n  compression: none\n"
                             "  connection:\n    username: " +
                             sshd().user() + "\n    key_filename: \"" + sshd().client_key_path() +
                             "\"\n  provider: {name: vast, offer: 'gpu_name=RTX_4090', "
                             "max_price: " +
                             max_price + ", image: 'pytorch/pytorch', disk_gb: 20}\n" + extra);
    }
    static std::string vastai() {
        return std::string(MLT_SOURCE_DIR) + "/tests/integration/standins/vastai";
    }
    std::string calls() const { return read_or_empty(market_->state() + "/calls.log"); }
    std::string instances_json() const {
        return read_or_empty(market_->state() + "/instances.json");
    }
    std::string record() const {
        return read_or_empty(env().home() + "/.mltk/ssh/instances.jsonl");
    }
    // The ids the stand-in created, in order.
    std::vector<std::string> created() const {
        std::vector<std::string> ids;
        for (const auto& line : lines_starting(record(), "{"))
            if (has_text(line, "\"state\":\"created\"")) {
                const JsonRecord r = parse_json_record(line);
                if (std::find(ids.begin(), ids.end(), r.at("id")) == ids.end())
                    ids.push_back(r.at("id"));
            }
        return ids;
    }
    // Each epoch's checkpoint came home whole.
    void expect_all_checkpoints_home() const {
        for (int i = 1; i <= kEpochs; ++i)
            EXPECT_EQ(read_or_empty(local_logs("m") + "/ckpt-" + std::to_string(i)),
                      "weights " + std::to_string(i) + "\n");
    }
    // `id` is gone at the stand-in, recorded destroyed, its known_hosts file dropped.
    void expect_destroyed(const std::string& id) const {
        EXPECT_FALSE(has_text(instances_json(), "\"id\": " + id)) << instances_json();
        EXPECT_TRUE(has_text(record(), "\"id\":\"" + id + "\"") &&
                    has_text(record(), "\"state\":\"destroyed\""))
            << record();
        EXPECT_FALSE(path_exists(env().home() + "/.mltk/ssh/known_hosts.d/vast-" + id));
    }

    std::unique_ptr<StandinMarket> market_;
    std::unique_ptr<FaultRelay> relay_;
    std::unique_ptr<ClosedPort> a_closed_;
    TestSshd* a_ = nullptr;
    TestSshd* b_ = nullptr;
    std::string hold_;
};

TEST_F(ProviderTrainTest, OneCommandRentsTrainsBringsResultsHomeAndDestroysTheMachine) {
    offers();
    write_settings();
    const ProcessResult r = mlt({"ssh", "train", "m"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    // The cheapest offer, rented under the run's id, at the price it bills.
    const auto runs = history();
    ASSERT_EQ(runs.size(), 1u);
    const std::string run = runs.back().at("id");
    EXPECT_TRUE(has_text(calls(), "create\tinstance\t21\t")) << calls();
    EXPECT_TRUE(has_text(calls(), "--label\tmlt-" + run)) << calls();
    EXPECT_FALSE(has_text(calls(), "create\tinstance\t22")) << calls();
    EXPECT_TRUE(has_text(r.err + r.out, "rented instance 4200001 of vast.ai at $0.350/h"))
        << describe(r);
    EXPECT_EQ(runs.back().at("status"), "success");
    EXPECT_TRUE(has_text(runs.back().at("hosts"), "127.0.0.1:" + std::to_string(relay_->port())))
        << runs.back().at("hosts");
    expect_all_checkpoints_home();
    // Released once the results were home, and confirmed gone: its sshd ended with it.
    EXPECT_TRUE(has_text(r.out + r.err, "instance 4200001 of vast.ai destroyed after "))
        << describe(r);
    expect_destroyed("4200001");
    EXPECT_FALSE(path_exists(a_->pid_file())) << "the instance's sshd still runs";
    // `jobs` names the machine the run was on.
    const ProcessResult jobs = mlt({"jobs"});
    EXPECT_TRUE(has_text(jobs.out, " (rented: 4200001)")) << describe(jobs);
    // The host key was learned into the instance's own file, never the user's known_hosts.
    EXPECT_FALSE(has_text(read_or_empty(default_known_hosts()),
                          "[127.0.0.1]:" + std::to_string(relay_->port())));
}

TEST_F(ProviderTrainTest, OnRunPodTooOneCommandRentsTrainsAndRemovesThePod) {
    write_file(market_->state() + "/gpus.json",
               "[{\"id\": \"NVIDIA GeForce RTX 4090\", \"price\": 0.69, \"_billed\": 0.72, "
               "\"_machine\": " +
                   StandinMarket::machine_json(*a_) + "}]\n");
    env().write_settings("ssh:\n  remote_dir: \"" + remote() +
                         "\"\n  remote_log_dir: \"logs/{model}\"\n  compression: none\n"
                         "  connection:\n    username: " +
                         sshd().user() + "\n    key_filename: \"" + sshd().client_key_path() +
                         "\"\n  provider: {name: runpod, offer: 'NVIDIA GeForce RTX 4090', "
                         "max_price: 0.8, image: 'runpod/pytorch:2.1', disk_gb: 30}\n");
    const ProcessResult r = mlt({"ssh", "train", "m"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(has_text(r.out, "rented instance ")) << describe(r);
    EXPECT_TRUE(has_text(r.out, " of RunPod at $0.720/h")) << describe(r);
    expect_all_checkpoints_home();
    const auto ids = created();
    ASSERT_EQ(ids.size(), 1u) << record();
    EXPECT_TRUE(has_text(r.out, "instance " + ids[0] + " of RunPod destroyed after "))
        << describe(r);
    EXPECT_TRUE(has_text(calls(), "remove\tpod\t" + ids[0])) << calls();
    EXPECT_FALSE(path_exists(a_->pid_file())) << "the pod's sshd still runs";
    EXPECT_FALSE(path_exists(env().home() + "/.mltk/ssh/known_hosts.d/runpod-" + ids[0]));
}

TEST_F(ProviderTrainTest, NoOfferUnderTheCapIsExit2BeforeAnythingIsRented) {
    offers();
    write_settings("0.2");
    const ProcessResult r = mlt({"ssh", "train", "m"});
    EXPECT_EQ(r.exit_code, 2) << describe(r);
    EXPECT_TRUE(has_text(r.err,
                         "no offer of vast.ai matches 'gpu_name=RTX_4090' under max_price "
                         "$0.200/h (the cheapest: 1x RTX 4090 at $0.300/h); nothing was "
                         "rented"))
        << describe(r);
    EXPECT_FALSE(has_text(calls(), "create")) << calls();
    EXPECT_TRUE(record().empty()) << record();
    EXPECT_TRUE(history().empty());
}

TEST_F(ProviderTrainTest, AMachineTheRunCannotLogIntoIsDestroyedAtOnceAndSaidSo) {
    offers();
    write_settings();
    // The key is not the one the machine takes: rented, then refused at the login.
    const std::string other = sshd().dir() + "/other_key";
    ASSERT_EQ(run_process({"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", other},
                          env().vars(), kEffectTimeout)
                  .exit_code,
              0);
    const ProcessResult r = mlt({"ssh", "-i", other, "train", "m"});
    EXPECT_EQ(r.exit_code, 255) << describe(r);
    EXPECT_TRUE(has_text(r.out + r.err, "instance 4200001 of vast.ai destroyed after "))
        << describe(r);
    expect_destroyed("4200001");
}

TEST_F(ProviderTrainTest, AMachineLostAtTheMarketplaceFailsOverToANewRentalAtOnce) {
    offers();
    write_settings();
    write_file(hold_, "");
    // A reconnect timeout far longer than the test: only the marketplace's word ends the wait.
    auto run = start_mlt({"ssh", "-o", "ConnectTimeout=2", "train", "m", "--reconnect-timeout",
                          "3600", "--sync-every", "1"});
    ASSERT_TRUE(run->wait_for_output("waiting", kEffectTimeout)) << run->out() << run->err();
    ASSERT_TRUE(
        wait_until([&] { return path_exists(local_logs("m") + "/ckpt-2"); }, kEffectTimeout));
    // Machine A is taken back: its links reset, its address refused, its job and disk gone.
    const long pgid = job_pgid("m");
    ASSERT_GT(pgid, 0);
    const int a_port = relay_->port();
    relay_.reset();
    a_closed_ = std::make_unique<ClosedPort>(a_port);
    ASSERT_EQ(::kill(static_cast<pid_t>(-pgid), SIGKILL), 0);
    ASSERT_TRUE(wait_group_gone(pgid));
    std::error_code ec;
    fs::remove_all(remote(), ec);
    fs::create_directories(remote());
    ASSERT_EQ(
        run_process({vastai(), "_standin", "preempt", "4200001"}, env().vars(), kEffectTimeout)
            .exit_code,
        0);
    const ProcessResult r = run->wait(kTrainTimeout);
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(has_text(r.err, "instance 4200001 of vast.ai is exited")) << describe(r);
    EXPECT_TRUE(has_text(calls(), "create\tinstance\t22\t")) << calls();
    const std::string console = read_or_empty(local_console("m"));
    EXPECT_EQ(count_lines(console, "attempt 2 resumes after epoch 2"), 1u) << console;
    expect_all_checkpoints_home();
    // Both machines of the run released: the lost one and the one it ended on.
    const auto ids = created();
    ASSERT_EQ(ids.size(), 2u) << record();
    for (const auto& id : ids) expect_destroyed(id);
    const auto runs = history();
    ASSERT_FALSE(runs.empty());
    EXPECT_EQ(runs.back().at("status"), "success");
    EXPECT_TRUE(has_text(runs.back().at("hosts"), "127.0.0.1:" + std::to_string(b_->port())))
        << runs.back().at("hosts");
}

TEST_F(ProviderTrainTest, AResumeAfterMltWasKilledFindsTheRentedMachineAndReleasesIt) {
    offers();
    write_settings();
    write_file(hold_, "");
    auto run = start_mlt({"ssh", "train", "m"});
    ASSERT_TRUE(run->wait_for_output("waiting", kEffectTimeout)) << run->out() << run->err();
    ASSERT_EQ(::kill(run->pid(), SIGKILL), 0);
    run->wait(kEffectTimeout);
    // A new run refuses to rent beside the machine the killed one left.
    ProcessResult r = mlt({"ssh", "train", "m"});
    EXPECT_EQ(r.exit_code, 3) << describe(r);
    EXPECT_TRUE(has_text(r.err, "instance 4200001 of vast.ai, rented for run ")) << describe(r);
    fs::remove(hold_);
    r = mlt({"ssh", "train", "m", "--resume"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_EQ(created(), std::vector<std::string>{"4200001"}) << record();
    expect_all_checkpoints_home();
    expect_destroyed("4200001");
    // Nothing is left to resume: a clear line, exit 2.
    r = mlt({"ssh", "status", "m"});
    EXPECT_EQ(r.exit_code, 2) << describe(r);
    EXPECT_TRUE(has_text(r.err, "no machine rented for m on vast is left running")) << describe(r);
}

TEST_F(ProviderTrainTest, InstancesAndReleaseTouchOnlyWhatMltRented) {
    offers();
    write_settings();
    // Someone else's instance on the same account.
    ASSERT_EQ(run_process({vastai(), "create", "instance", "22", "--image", "x", "--label",
                           "not-mlt", "--raw"},
                          env().vars(), kEffectTimeout)
                  .exit_code,
              0);
    ProcessResult r = mlt({"ssh", "train", "m", "--no-wait"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(has_text(r.err, "instance 4200002 of vast.ai keeps running")) << describe(r);
    r = mlt({"ssh", "instances"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(has_text(r.out, "4200002")) << describe(r);
    EXPECT_FALSE(has_text(r.out, "4200001")) << describe(r);
    r = mlt({"ssh", "release", "4200001"});
    EXPECT_EQ(r.exit_code, 2) << describe(r);
    EXPECT_TRUE(has_text(r.err, "instance 4200001 is not one mlt rented")) << describe(r);
    ASSERT_TRUE(wait_job_finished("m"));
    r = mlt({"ssh", "release", "--all"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    expect_destroyed("4200002");
    EXPECT_TRUE(has_text(instances_json(), "not-mlt")) << instances_json();
    EXPECT_FALSE(has_text(calls(), "destroy\tinstance\t4200001")) << calls();
}

TEST_F(ProviderTrainTest, TwoNodesAreRentedOneEachTrainedAsAGangAndDestroyedTogether) {
    offers();
    // Each machine its own remote dir (its own HOME), one rank each.
    env().write_settings(
        "ssh:\n  remote_dir: \"~/work\"\n  remote_log_dir: \"logs/{model}\"\n"
        "  compression: none\n  connection:\n    username: " +
        sshd().user() + "\n    key_filename: \"" + sshd().client_key_path() +
        "\"\n  nodes: {count: 2}\n  provider: {name: vast, offer: "
        "'gpu_name=RTX_4090', max_price: 0.5, image: 'pytorch/pytorch', "
        "disk_gb: 20}\n");
    const ProcessResult r = mlt({"ssh", "train", "m"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(has_text(r.out, "[rank 1] ")) << describe(r);
    const auto runs = history();
    ASSERT_FALSE(runs.empty());
    const std::string run = runs.back().at("id");
    // One machine per rank, each under its own label of the run.
    EXPECT_TRUE(has_text(calls(), "create\tinstance\t21\t")) << calls();
    EXPECT_TRUE(has_text(calls(), "create\tinstance\t22\t")) << calls();
    EXPECT_TRUE(has_text(calls(), "--label\tmlt-" + run + "\t")) << calls();
    EXPECT_TRUE(has_text(calls(), "--label\tmlt-" + run + "-1\t")) << calls();
    EXPECT_TRUE(has_text(record(), "\"rank\":1")) << record();
    for (const auto& id : created()) expect_destroyed(id);
    EXPECT_EQ(created().size(), 2u) << record();
    EXPECT_TRUE(path_exists(a_->remote_home() + "/work/.mlt/m/run_id"));
    EXPECT_TRUE(path_exists(b_->remote_home() + "/work/.mlt/m/run_id"));
    EXPECT_FALSE(path_exists(a_->pid_file()));
    EXPECT_FALSE(path_exists(b_->pid_file()));
}

TEST_F(ProviderTrainTest, LeftUnattendedTheMachineStopsItselfWithItsOwnKey) {
    offers();
    // The host has the marketplace's CLI and the instance's own id and key, as vast.ai gives
    // them to a container.
    write_settings("0.5",
                   "  unattended_shutdown_minutes: 0.05\n  environment: {PATH: \"" +
                       std::string(MLT_SOURCE_DIR) +
                       "/tests/integration/standins:/usr/bin:/bin\", STANDIN_MARKET_DIR: \"" +
                       market_->state() +
                       "\", CONTAINER_ID: \"4200001\", CONTAINER_API_KEY: \"k-42\"}\n");
    ProcessResult r = mlt({"ssh", "train", "m", "--no-wait"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    ASSERT_TRUE(wait_until([&] { return has_text(calls(), "stop\tinstance\t4200001"); },
                           std::chrono::seconds(60)))
        << calls() << job_state("m") << read_or_empty(job_file("m", "shutdown.log"))
        << read_or_empty(job_file("m", "shutdown.status"));
    EXPECT_TRUE(
        wait_until([&] { return has_text(instances_json(), "\"exited\""); }, kEffectTimeout))
        << instances_json();
    EXPECT_FALSE(has_text(calls(), "k-42")) << "the key went through argv: " << calls();
    EXPECT_FALSE(has_text(calls(), "destroy")) << "the results are not home: " << calls();
    // The results stay on its disk: mlt says what to do, and release ends it.
    r = mlt({"ssh", "train", "m", "--resume"});
    EXPECT_EQ(r.exit_code, 2) << describe(r);
    EXPECT_TRUE(has_text(r.err, "is exited, not running")) << describe(r);
    r = mlt({"ssh", "release", "--all"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    expect_destroyed("4200001");
}

}  // namespace
}  // namespace mlt_test
