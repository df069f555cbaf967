// Several nodes survive the loss of one: a node's host lost mid-run (its connections reset,
// its job killed, its dir deleted) is replaced by a standby host from fallback_hosts, and
// every node starts again together as attempt 2 from the newest checkpoint (real PyTorch DDP
// on gloo, and a shell training for rank 0's loss); a lost job restarts the gang in place
// under max_restarts; no standby left, or a training's own failure, stops the gang as before.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "harness/expect.h"
#include "harness/fault_relay.h"
#include "harness/files.h"
#include "harness/net.h"
#include "harness/process.h"
#include "harness/test_sshd.h"
#include "harness/train_fixture.h"

namespace fs = std::filesystem;

namespace mlt_test {
namespace {

// Each rank resumes after its newest checkpoint in its log dir and writes one per epoch;
// attempt 1 waits (bounded) after epoch 2, to be lost there. FAIL_RANK1 makes rank 1's
// training fail on its own at epoch 2 instead.
const char* const kCheckpointingNodes =
    "n=0\n"
    "for f in \"$MLT_LOG_DIR\"/ckpt-*; do [ -e \"$f\" ] || continue; k=${f##*ckpt-}; "
    "[ \"$k\" -gt \"$n\" ] && n=$k; done\n"
    "echo \"rank $MLT_NODE_RANK attempt ${MLT_ATTEMPT:-1} at $MASTER_ADDR resumes after epoch "
    "$n\"\n"
    "i=$((n+1))\n"
    "while [ $i -le 4 ]; do\n"
    "  echo \"rank $MLT_NODE_RANK epoch $i\"\n"
    "  echo \"weights $i\" > \"$MLT_LOG_DIR/.tmp\" && mv \"$MLT_LOG_DIR/.tmp\" "
    "\"$MLT_LOG_DIR/ckpt-$i\"\n"
    "  if [ -n \"$FAIL_RANK1\" ] && [ \"$MLT_NODE_RANK\" = 1 ] && [ $i -eq 2 ]; then "
    "echo 'rank 1 fails now'; exit 3; fi\n"
    "  if [ -z \"$MLT_ATTEMPT$NO_WAIT\" ] && [ $i -eq 2 ]; then echo \"rank $MLT_NODE_RANK "
    "waiting\"; "
    "w=0; while [ $w -lt 2400 ]; do sleep 0.05; w=$((w+1)); done; exit 9; fi\n"
    "  i=$((i+1))\n"
    "done\n";

class TrainNodesReplaceTest : public TrainTest {
  protected:
    void SetUp() override {
        TrainTest::SetUp();
        for (auto* node : {&second_, &standby_}) {
            *node = std::make_unique<TestSshd>();
            (*node)->authorize_key_file(sshd().client_key_path() + ".pub");
        }
        relay_a_ = std::make_unique<FaultRelay>(sshd().port());
        relay_b_ = std::make_unique<FaultRelay>(second_->port());
        port_a_ = relay_a_->port();
        port_b_ = relay_b_->port();
        append_file(default_known_hosts(), "[127.0.0.1]:" + std::to_string(relay_a_->port()) + " " +
                                               sshd().host_key_type_and_blob() + "\n" +
                                               "[127.0.0.1]:" + std::to_string(relay_b_->port()) +
                                               " " + second_->host_key_type_and_blob() + "\n");
        write_shell_model("m", kCheckpointingNodes);
    }
    void TearDown() override {
        relay_a_.reset();
        relay_b_.reset();
        closed_.clear();
        second_.reset();
        standby_.reset();
        TrainTest::TearDown();
    }
    void write_settings(const std::string& model, const std::string& train_cmd,
                        const std::string& extra) const {
        write_user_settings();
        write_model_settings(model, "ssh:\n  train_cmd: \"" + train_cmd +
                                        "\"\n  remote_log_dir: \"logs/{model}\"\n" + extra);
    }
    std::string spec_of(const TestSshd& s, int port) const {
        return s.user() + "@127.0.0.1:" + std::to_string(port) + "/" + s.remote_dir();
    }
    std::string standby_spec() const { return spec_of(*standby_, standby_->port()); }
    // A behind relay A, B behind relay B (also once lost); `args` after them.
    std::vector<std::string> nodes(std::vector<std::string> args) const {
        std::vector<std::string> all = {"ssh",
                                        "-o",
                                        "ConnectTimeout=2",
                                        "-i",
                                        sshd().client_key_path(),
                                        "-h",
                                        spec_of(sshd(), port_a_),
                                        "-h",
                                        spec_of(*second_, port_b_)};
        all.insert(all.end(), args.begin(), args.end());
        return all;
    }
    static std::string job_file_of(const TestSshd& s, const std::string& name) {
        return s.remote_dir() + "/.mlt/m/" + name;
    }
    // A node's host goes away: its job's process group killed, every connection reset and
    // none accepted again, its remote dir deleted.
    void lose(std::unique_ptr<FaultRelay>& relay, const TestSshd& host, const std::string& model) {
        const long pgid =
            std::atol(read_or_empty(host.remote_dir() + "/.mlt/" + model + "/pid").c_str());
        ASSERT_GT(pgid, 0);
        const int port = relay->port();
        relay.reset();
        closed_.push_back(std::make_unique<ClosedPort>(port));
        ASSERT_EQ(::kill(static_cast<pid_t>(-pgid), SIGKILL), 0);
        ASSERT_TRUE(wait_group_gone(pgid));
        std::error_code ec;
        fs::remove_all(host.remote_dir(), ec);
    }

    std::unique_ptr<TestSshd> second_, standby_;
    std::unique_ptr<FaultRelay> relay_a_, relay_b_;
    std::vector<std::unique_ptr<ClosedPort>> closed_;
    int port_a_ = 0, port_b_ = 0;  // the relays' ports: a lost host's stays refused
};

// The number of lines of `text` that hold `part` (and `also`).
size_t lines_with(const std::string& text, const std::string& part, const std::string& also = {}) {
    size_t n = 0;
    size_t from = 0;
    for (size_t end; (end = text.find('\n', from)) != std::string::npos; from = end + 1) {
        const std::string line = text.substr(from, end - from);
        if (line.find(part) != std::string::npos && line.find(also) != std::string::npos) ++n;
    }
    return n;
}

// The real thing: examples/ddp on two nodes; rank 1's host is lost after epoch 2 and the
// standby takes rank 1; every epoch is trained once, the replicas end equal.
TEST_F(TrainNodesReplaceTest, ALostHostsRankMovesToTheStandbyAndDdpFinishesAsAttempt2) {
    const std::string python = "/usr/bin/python3";
    if (run_process({python, "-c", "import torch"}, current_environment(), kEffectTimeout)
            .exit_code != 0)
        GTEST_SKIP() << "*** SKIPPED LOUDLY: " << python
                     << " cannot import torch; install python3-torch (scripts/install-deps.sh "
                        "does) to run the DDP replacement test ***";
    write_file(project() + "/ddp_model.py",
               read_file(std::string(MLT_SOURCE_DIR) + "/examples/ddp/ddp_model.py"));
    write_settings("ddp_model", python + " {spec} --epochs 6 --sleep 1",
                   "  fallback_hosts: [\"" + standby_spec() + "\"]\n");
    auto run = start_mlt(nodes({"train", "ddp_model", "--reconnect-timeout", "2"}));
    ASSERT_TRUE(run->wait_for_output("[rank 0] epoch 2/6", kTrainTimeout)) << run->out();
    lose(relay_b_, *second_, "ddp_model");
    ProcessResult r = run->wait(kTrainTimeout);
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(has_text(r.err, "rank 1: " + sshd().user() + "@127.0.0.1:")) << describe(r);
    EXPECT_TRUE(has_text(r.err, " takes its place")) << describe(r);
    EXPECT_TRUE(has_text(r.err, "together as attempt 2")) << describe(r);
    // Every epoch once: attempt 2 resumes after the newest checkpoint on rank 0.
    for (int e = 1; e <= 6; ++e)
        EXPECT_EQ(lines_with(r.out, "[rank 0] epoch " + std::to_string(e) + "/6 "), 1u)
            << "epoch " << e << ":\n"
            << r.out;
    EXPECT_EQ(lines_with(r.out, "[rank 0] resuming from checkpoint-"), 1u) << r.out;
    // Rank 1's console goes on on the standby from what it showed on B: its marker line, and
    // every line whole (its local copy was pushed as the job's console log there).
    EXPECT_EQ(lines_starting(r.out, "[rank 1] mlt: training: ").size(), 2u) << r.out;
    EXPECT_TRUE(
        has_text(read_or_empty(local_logs("ddp_model") + "/nodes/1/mltk_ssh_train_ddp_model.log"),
                 "==== mlt: attempt 2 of run "));
    const auto zero = lines_starting(r.out, "[rank 0] rank 0/2 done, parameters ");
    const auto one = lines_starting(r.out, "[rank 1] rank 1/2 done, parameters ");
    ASSERT_EQ(zero.size(), 1u) << describe(r);
    ASSERT_EQ(one.size(), 1u) << describe(r);
    EXPECT_EQ(zero[0].substr(zero[0].rfind(' ')), one[0].substr(one[0].rfind(' ')));
    EXPECT_TRUE(path_exists(standby_->remote_dir() + "/.mlt/ddp_model/run_id"));
    EXPECT_TRUE(valid_zip(project() + "/ddp_model.mltk.zip"));
    const auto runs = history();
    ASSERT_FALSE(runs.empty());
    EXPECT_EQ(runs.back().at("status"), "success") << read_or_empty(history_path());
    // Every node of every attempt: A, the lost B, the standby.
    const std::string hosts = runs.back().at("hosts");
    EXPECT_EQ(std::count(hosts.begin(), hosts.end(), '@'), 3) << read_or_empty(history_path());
    EXPECT_TRUE(has_text(r.out, "nodes by attempt: #1 rank 0 ")) << describe(r);
}

// Rank 0's host lost: rank 0 moves to the standby, which gets the checkpoints that came home
// (--sync-every) and the MASTER_ADDR the standby names (127.0.0.2, a loopback address apart
// from 127.0.0.1 where attempt 1 met); rank 1 resumes on its own host.
TEST_F(TrainNodesReplaceTest, RankZeroMovesWithTheCheckpointsThatCameHome) {
    write_settings("m", "sh {spec}",
                   "  fallback_hosts: [\"" + standby_spec() + " master_addr=127.0.0.2\"]\n");
    auto run = start_mlt(nodes({"train", "m", "--reconnect-timeout", "2", "--sync-every", "1"}));
    ASSERT_TRUE(run->wait_for_output("[rank 0] rank 0 waiting", kEffectTimeout)) << run->out();
    ASSERT_TRUE(run->wait_for_output("[rank 1] rank 1 waiting", kEffectTimeout)) << run->out();
    ASSERT_TRUE(wait_until([&] { return path_exists(local_logs("m") + "/nodes/0/ckpt-2"); },
                           kEffectTimeout));
    lose(relay_a_, sshd(), "m");
    ProcessResult r = run->wait(kTrainTimeout);
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(has_text(r.err, "rank 0: ")) << describe(r);
    EXPECT_TRUE(has_text(r.err, " takes its place")) << describe(r);
    EXPECT_EQ(count_lines(r.out, "[rank 0] rank 0 attempt 2 at 127.0.0.2 resumes after epoch 2"),
              1u)
        << describe(r);
    EXPECT_EQ(count_lines(r.out, "[rank 1] rank 1 attempt 2 at 127.0.0.2 resumes after epoch 2"),
              1u)
        << describe(r);
    for (int e = 1; e <= 4; ++e)
        for (const char* rank : {"0", "1"})
            EXPECT_EQ(count_lines(r.out, std::string("[rank ") + rank + "] rank " + rank +
                                             " epoch " + std::to_string(e)),
                      1u)
                << "rank " << rank << " epoch " << e << ":\n"
                << r.out;
    EXPECT_TRUE(path_exists(standby_->remote_dir() + "/logs/m/ckpt-4"));
    EXPECT_TRUE(has_text(r.out, "nodes by attempt: #1 rank 0 ")) << describe(r);
    // `jobs` lists every node of every attempt: the lost A too.
    ProcessResult jobs = mlt({"jobs"});
    EXPECT_EQ(jobs.exit_code, 0) << describe(jobs);
    for (const int port : {port_a_, port_b_, standby_->port()})
        EXPECT_TRUE(has_text(jobs.out, "127.0.0.1:" + std::to_string(port))) << jobs.out;
    // `status` with the hosts as given: A cannot be asked (its row says why), and every
    // attempt's nodes follow the table, from this machine's history.
    ProcessResult status = mlt(nodes({"status", "m"}));
    EXPECT_TRUE(has_text(status.out, "nodes by attempt: #1 rank 0 " + sshd().user() +
                                         "@127.0.0.1:" + std::to_string(port_a_)))
        << describe(status);
}

// nodes.master_addr set to an address that is not rank 0's as mlt reached it (an overlay's):
// a standby without its own cannot take rank 0, and the gang stops saying why.
TEST_F(TrainNodesReplaceTest, AnOverlayMasterAddrKeepsRankZeroFromMovingWithoutTheStandbysOwn) {
    write_settings(
        "m", "sh {spec}",
        "  fallback_hosts: [\"" + standby_spec() + "\"]\n  nodes: {master_addr: \"127.0.0.3\"}\n");
    auto run = start_mlt(nodes({"train", "m", "--reconnect-timeout", "2"}));
    ASSERT_TRUE(run->wait_for_output("[rank 0] rank 0 attempt 1 at 127.0.0.3", kEffectTimeout))
        << run->out();
    ASSERT_TRUE(run->wait_for_output("[rank 1] rank 1 waiting", kEffectTimeout)) << run->out();
    lose(relay_a_, sshd(), "m");
    ProcessResult r = run->wait(kTrainTimeout);
    EXPECT_NE(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(has_text(r.err, "rank 0 cannot move to " + sshd().user() +
                                    "@127.0.0.1:" + std::to_string(standby_->port()) +
                                    ": nodes.master_addr 127.0.0.3 is an address of the lost "
                                    "rank 0"))
        << describe(r);
    EXPECT_FALSE(has_text(r.err, "takes its place")) << describe(r);
    EXPECT_TRUE(has_text(r.err, "with --resume")) << describe(r);
}

TEST_F(TrainNodesReplaceTest, NoStandbyLeftStopsTheGangWithTheResumeLine) {
    const ClosedPort dead;
    write_settings("m", "sh {spec}",
                   "  fallback_hosts: [\"" + sshd().user() +
                       "@127.0.0.1:" + std::to_string(dead.port()) + "\"]\n");
    auto run = start_mlt(nodes({"train", "m", "--reconnect-timeout", "2"}));
    ASSERT_TRUE(run->wait_for_output("[rank 1] rank 1 waiting", kEffectTimeout)) << run->out();
    lose(relay_b_, *second_, "m");
    ProcessResult r = run->wait(kTrainTimeout);
    EXPECT_NE(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(has_text(r.err,
                         "rank 1: no standby host left (fallback_hosts, provision_cmd); "
                         "the gang stops"))
        << describe(r);
    EXPECT_TRUE(has_text(r.err, "with --resume")) << describe(r);
    EXPECT_FALSE(has_text(r.err, "takes its place")) << describe(r);
}

TEST_F(TrainNodesReplaceTest, ATrainingsOwnFailureTakesNoStandby) {
    write_user_settings();
    write_model_settings("m",
                         "ssh:\n  train_cmd: \"FAIL_RANK1=1 sh {spec}\"\n  remote_log_dir: "
                         "\"logs/{model}\"\n  fallback_hosts: [\"" +
                             standby_spec() + "\"]\n  max_restarts: 2\n");
    ProcessResult r = mlt(nodes({"train", "m", "--reconnect-timeout", "2"}));
    EXPECT_EQ(r.exit_code, 1) << describe(r);  // a training's 3 is exit 1 (mlt's own 3)
    EXPECT_TRUE(has_text(r.err, "rank 1 (")) << describe(r);
    EXPECT_FALSE(has_text(r.err, "takes its place")) << describe(r);
    EXPECT_FALSE(has_text(r.err, "together as attempt 2")) << describe(r);
    EXPECT_FALSE(path_exists(standby_->remote_dir() + "/.mlt")) << "the standby was used";
}

// A watch.on_failure exclude_host rule on a rank's own failure: a standby host takes the rank
// (from its checkpoints that came home) and every node starts again together; the left host
// is marked bad in the history.
TEST_F(TrainNodesReplaceTest, AnExcludeHostRuleOnARanksFailureMovesItToTheStandby) {
    write_user_settings();
    write_model_settings("m",
                         "ssh:\n  train_cmd: \"FAIL_RANK1=1 sh {spec}\"\n  remote_log_dir: "
                         "\"logs/{model}\"\n  fallback_hosts: [\"" +
                             standby_spec() +
                             "\"]\n  watch:\n    on_failure: [{match: 'rank 1 fails now', then: "
                             "exclude_host}]\n");
    ProcessResult r = mlt(nodes({"train", "m", "--reconnect-timeout", "2"}));
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(has_text(r.err, "watch.on_failure rule #1 'rank 1 fails now' (exclude_host)"))
        << describe(r);
    EXPECT_TRUE(has_text(r.err, "takes its place")) << describe(r);
    EXPECT_TRUE(has_text(r.err, "together as attempt 2")) << describe(r);
    // Rank 1 went on on the standby after the epochs that came home from its first host.
    EXPECT_TRUE(has_text(read_or_empty(job_file_of(*standby_, "console.log")),
                         "rank 1 attempt 2 at 127.0.0.1 resumes after epoch 2"))
        << job_state("m");
    const auto runs = history();
    ASSERT_FALSE(runs.empty());
    EXPECT_TRUE(has_text(runs.back().at("excluded_hosts"), "127.0.0.1:" + std::to_string(port_b_)))
        << read_or_empty(history_path());
}

TEST_F(TrainNodesReplaceTest, ALostJobRestartsTheGangInPlaceUnderMaxRestarts) {
    // shutdown_cmds run once per node, at the run's end: not when the gang restarts.
    write_settings("m", "sh {spec}",
                   "  max_restarts: 1\n  shutdown_cmds: [\"echo shut >> shutdowns.log\"]\n");
    // An earlier run's checkpoint left in rank 0's local log dir: never pushed by the restart.
    fs::create_directories(local_logs("m") + "/nodes/0");
    write_file(local_logs("m") + "/nodes/0/ckpt-9", "an earlier run's\n");
    auto run = start_mlt(nodes({"train", "m"}));
    ASSERT_TRUE(run->wait_for_output("[rank 0] rank 0 waiting", kEffectTimeout)) << run->out();
    ASSERT_TRUE(run->wait_for_output("[rank 1] rank 1 waiting", kEffectTimeout)) << run->out();
    const long pgid1 = std::atol(read_or_empty(job_file_of(*second_, "pid")).c_str());
    ASSERT_GT(pgid1, 0);
    ASSERT_EQ(::kill(static_cast<pid_t>(-pgid1), SIGKILL), 0);
    ProcessResult r = run->wait(kTrainTimeout);
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(has_text(r.err, "together as attempt 2")) << describe(r);
    EXPECT_FALSE(has_text(r.err, "takes its place")) << describe(r);
    for (const char* rank : {"0", "1"})
        EXPECT_EQ(count_lines(r.out, std::string("[rank ") + rank + "] rank " + rank +
                                         " attempt 2 at 127.0.0.1 resumes after epoch 2"),
                  1u)
            << describe(r);
    EXPECT_EQ(history().back().at("status"), "success") << read_or_empty(history_path());
    for (const TestSshd* host : {&sshd(), second_.get()})
        EXPECT_EQ(read_or_empty(host->remote_dir() + "/shutdowns.log"), "shut\n") << describe(r);
}

// mlt killed during the switch (the standby chosen and recorded, the first lock of attempt 2
// held): the same command with --resume finds rank 1 on the standby (the history says so),
// and the run ends once, every epoch trained once on each rank.
TEST_F(TrainNodesReplaceTest, KilledDuringTheSwitchTheResumeFindsTheStandbyAndEndsOnce) {
    write_settings("m", "sh {spec}", "  fallback_hosts: [\"" + standby_spec() + "\"]\n");
    const std::string hold = sshd().dir() + "/hold";
    env().set("MLT_TEST_HOLD", "taking the job lock#3:" + hold);
    auto run = start_mlt(nodes({"train", "m", "--reconnect-timeout", "2"}));
    ASSERT_TRUE(run->wait_for_output("[rank 1] rank 1 waiting", kEffectTimeout)) << run->out();
    ASSERT_TRUE(run->wait_for_output("[rank 0] rank 0 waiting", kEffectTimeout)) << run->out();
    lose(relay_b_, *second_, "m");
    ASSERT_TRUE(wait_until([&] { return path_exists(hold); }, kTrainTimeout)) << run->out();
    run->signal(SIGKILL);
    const ProcessResult killed = run->wait(kEffectTimeout);
    fs::remove(hold);
    env().unset("MLT_TEST_HOLD");
    EXPECT_TRUE(has_text(killed.err, " takes its place")) << describe(killed);
    ProcessResult r = mlt(nodes({"train", "m", "--resume"}));
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(has_text(r.err, "rank 1 of the run went on on " + standby_spec())) << describe(r);
    // Rank 0 goes on from its checkpoint on A; rank 1's were on B (this training keeps each
    // rank's own), so it starts over on the standby. Each once.
    // Attempt 2, or 3 when the killed mlt had locked A or the standby for attempt 2 already.
    EXPECT_EQ(lines_with(r.out, "[rank 0] rank 0 attempt ", " resumes after epoch 2"), 1u)
        << describe(r);
    EXPECT_EQ(lines_with(r.out, "[rank 1] rank 1 attempt ", " resumes after epoch 0"), 1u)
        << describe(r);
    for (int e = 1; e <= 4; ++e) {
        const std::string n = std::to_string(e);
        EXPECT_EQ(count_lines(killed.out + r.out, "[rank 0] rank 0 epoch " + n), 1u)
            << killed.out << r.out;
        EXPECT_EQ(count_lines(r.out, "[rank 1] rank 1 epoch " + n), 1u) << r.out;
    }
    EXPECT_EQ(history().back().at("status"), "success") << read_or_empty(history_path());
    EXPECT_FALSE(path_exists(standby_->remote_dir() + "/.mlt/m/lock"));
}

// A standby host that ran the model before (a run collected there) takes the lost rank: that
// run's files go aside as for any new run there, and the gang goes on as attempt 2.
TEST_F(TrainNodesReplaceTest, AStandbyThatRanTheModelBeforeTakesTheRank) {
    write_settings("m", "NO_WAIT=1 sh {spec}", "");
    ProcessResult before =
        mlt({"ssh", "-i", sshd().client_key_path(), "-h", standby_spec(), "train", "m"});
    ASSERT_EQ(before.exit_code, 0) << describe(before);
    const std::string old_run = trim(read_or_empty(standby_->remote_dir() + "/.mlt/m/run_id"));
    ASSERT_FALSE(old_run.empty());
    write_settings("m", "sh {spec}", "  fallback_hosts: [\"" + standby_spec() + "\"]\n");
    auto run = start_mlt(nodes({"train", "m", "--reconnect-timeout", "2"}));
    ASSERT_TRUE(run->wait_for_output("[rank 1] rank 1 waiting", kEffectTimeout)) << run->out();
    ASSERT_TRUE(run->wait_for_output("[rank 0] rank 0 waiting", kEffectTimeout)) << run->out();
    lose(relay_b_, *second_, "m");
    ProcessResult r = run->wait(kTrainTimeout);
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(has_text(r.err, " takes its place")) << describe(r);
    EXPECT_TRUE(has_text(r.err, "together as attempt 2: rank 1 holds no job of the run"))
        << describe(r);
    const std::string now = trim(read_or_empty(standby_->remote_dir() + "/.mlt/m/run_id"));
    EXPECT_NE(now, old_run);
    // The earlier run's checkpoints there are set aside, whole: rank 1 trains every epoch.
    EXPECT_TRUE(has_text(r.out,
                         "[rank 1] mlt: this host's earlier files of the log dir are set "
                         "aside in "))
        << describe(r);
    EXPECT_TRUE(path_exists(standby_->remote_dir() + "/logs/m.before-" + now + "/ckpt-4"));
    EXPECT_EQ(lines_with(r.out, "[rank 1] rank 1 attempt 2 ", " resumes after epoch 0"), 1u)
        << describe(r);
    EXPECT_EQ(count_lines(r.out, "[rank 1] rank 1 epoch 4"), 1u) << describe(r);
}

// Both nodes lost at once: this machine's link, more likely than both hosts; nothing replaced.
TEST_F(TrainNodesReplaceTest, EveryNodeLostAtOnceTakesNoStandby) {
    write_settings("m", "sh {spec}", "  fallback_hosts: [\"" + standby_spec() + "\"]\n");
    auto run = start_mlt(nodes({"train", "m", "--reconnect-timeout", "2"}));
    ASSERT_TRUE(run->wait_for_output("[rank 0] rank 0 waiting", kEffectTimeout)) << run->out();
    ASSERT_TRUE(run->wait_for_output("[rank 1] rank 1 waiting", kEffectTimeout)) << run->out();
    const int a = relay_a_->port(), b = relay_b_->port();
    relay_a_.reset();
    relay_b_.reset();
    closed_.push_back(std::make_unique<ClosedPort>(a));
    closed_.push_back(std::make_unique<ClosedPort>(b));
    ProcessResult r = run->wait(kTrainTimeout);
    EXPECT_NE(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(has_text(r.err, "every node was lost at once")) << describe(r);
    EXPECT_FALSE(has_text(r.err, "takes its place")) << describe(r);
    EXPECT_FALSE(path_exists(standby_->remote_dir() + "/.mlt")) << "the standby was used";
    // The jobs train on, untouched: stopped here by hand.
    for (const TestSshd* host : {&sshd(), second_.get()}) {
        const long pgid = std::atol(read_or_empty(job_file_of(*host, "pid")).c_str());
        EXPECT_TRUE(pgid > 0 && process_alive(pgid));
        if (pgid > 0) {
            ::kill(static_cast<pid_t>(-pgid), SIGKILL);
            EXPECT_TRUE(wait_group_gone(pgid));
        }
    }
}

// SIGTERM leaves a gang's jobs running, and mlt says so (not that they were stopped).
TEST_F(TrainNodesReplaceTest, SigtermLeavesEveryNodesJobRunningAndSaysSo) {
    write_settings("m", "sh {spec}", "");
    auto run = start_mlt(nodes({"train", "m"}));
    ASSERT_TRUE(run->wait_for_output("[rank 0] rank 0 waiting", kEffectTimeout)) << run->out();
    ASSERT_TRUE(run->wait_for_output("[rank 1] rank 1 waiting", kEffectTimeout)) << run->out();
    run->signal(SIGTERM);
    ProcessResult r = run->wait(kTrainTimeout);
    EXPECT_EQ(r.exit_code, 143) << describe(r);
    EXPECT_TRUE(has_text(r.err, "mlt left the nodes as they were")) << describe(r);
    EXPECT_FALSE(has_text(r.err, "every node's job was stopped")) << describe(r);
    const long pgid0 = job_pgid("m");
    const long pgid1 = std::atol(read_or_empty(job_file_of(*second_, "pid")).c_str());
    EXPECT_TRUE(pgid0 > 0 && process_alive(pgid0)) << "rank 0's job was not left running";
    EXPECT_TRUE(pgid1 > 0 && process_alive(pgid1)) << "rank 1's job was not left running";
    EXPECT_EQ(history().back().at("status"), "left") << read_or_empty(history_path());
    ProcessResult stopped = mlt(nodes({"stop", "m"}));
    EXPECT_EQ(stopped.exit_code, 0) << describe(stopped);
    for (const long pgid : {pgid0, pgid1}) {
        if (pgid > 0) {
            EXPECT_TRUE(wait_group_gone(pgid));
        }
    }
}

}  // namespace
}  // namespace mlt_test
