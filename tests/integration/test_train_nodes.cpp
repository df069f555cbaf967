// Several nodes: `-h` given twice runs the same model on two real sshd servers (two ports
// on 127.0.0.1, two remote dirs), with the rendezvous variables set, the logs of both in one
// stream with a [rank N] prefix, each node's logs brought home; a node that fails stops the
// other; a node that fails before the start keeps every job from starting.
#include <gtest/gtest.h>
#include <signal.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
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

// Prints what the node got, leaves a file in its log dir; rank 1 fails with 3 when
// FAIL_RANK1 is set; rank 0 then trains on (bounded) until it is stopped.
const char* const kNodeModel =
    "echo \"node $MLT_NODE_RANK of $MLT_NUM_NODES at $MASTER_ADDR:$MASTER_PORT"
    " if=$GLOO_SOCKET_IFNAME/$NCCL_SOCKET_IFNAME torchrun=$NODE_RANK/$NNODES"
    " sky=$SKYPILOT_NODE_RANK/$SKYPILOT_NUM_NODES dstack=$DSTACK_NODE_RANK/$DSTACK_NODES_NUM"
    " addrs=$MLT_NODE_ADDRS\"\n"
    "echo \"$MLT_NODE_RANK\" > \"$MLT_LOG_DIR/out-$MLT_NODE_RANK.txt\"\n"
    "if [ -n \"$FAIL_RANK1\" ]; then\n"
    "  if [ \"$MLT_NODE_RANK\" = 1 ]; then echo 'rank 1 fails now'; exit 3; fi\n"
    "  echo $$ > \"$MLT_JOB_DIR/rank0.pid\"; i=0\n"
    "  while [ $i -lt 2400 ]; do sleep 0.05; i=$((i+1)); done; echo 'rank 0 was never stopped'\n"
    "fi\n";

class TrainNodesTest : public TrainTest {
  protected:
    void SetUp() override {
        TrainTest::SetUp();
        second_ = std::make_unique<TestSshd>();
        second_->authorize_key_file(sshd().client_key_path() + ".pub");
        write_shell_model("m", kNodeModel);
    }
    void TearDown() override {
        second_.reset();
        TrainTest::TearDown();
    }
    // Both nodes by -h, each with its own remote dir, and -i for both (the settings' one
    // connection entry pairs with the first -h only).
    void write_settings(const std::string& extra = {}) const {
        write_user_settings();
        write_model_settings("m",
                             "ssh:\n  train_cmd: \"sh {spec}\"\n  remote_log_dir: "
                             "\"logs/{model}\"\n" +
                                 extra);
    }
    std::vector<std::string> two_nodes() const {
        return {"ssh",
                "-i",
                sshd().client_key_path(),
                "-h",
                host() + "/" + remote(),
                "-h",
                sshd().user() + "@127.0.0.1:" + std::to_string(second_->port()) + "/" +
                    second_->remote_dir()};
    }
    std::vector<std::string> train(std::vector<std::string> args) const {
        std::vector<std::string> all = two_nodes();
        all.insert(all.end(), args.begin(), args.end());
        return all;
    }
    std::string second_job_file(const std::string& name) const {
        return second_->remote_dir() + "/.mlt/m/" + name;
    }
    // `train m --no-wait` on both nodes; the two jobs' process groups (0 for a job that did
    // not record one).
    std::pair<long, long> started_on_both() const {
        ProcessResult started = mlt(train({"train", "m", "--no-wait"}));
        EXPECT_EQ(started.exit_code, 0) << describe(started);
        return {job_pgid("m"), std::atol(read_or_empty(second_job_file("pid")).c_str())};
    }

    std::unique_ptr<TestSshd> second_;
};

TEST_F(TrainNodesTest, TwoNodesGetTheRendezvousAndBringTheirLogsHome) {
    write_settings();
    ProcessResult r = mlt(train({"train", "m"}));
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    const auto zero = lines_starting(r.out, "[rank 0] node 0 of 2 at 127.0.0.1:");
    const auto one = lines_starting(r.out, "[rank 1] node 1 of 2 at 127.0.0.1:");
    ASSERT_EQ(zero.size(), 1u) << describe(r);
    ASSERT_EQ(one.size(), 1u) << describe(r);
    // The same MASTER_PORT on both, the loopback interface, every scheme's names.
    const std::string port0 = zero[0].substr(zero[0].find(':') + 1, 5);
    EXPECT_EQ(one[0].substr(one[0].find(':') + 1, 5), port0) << zero[0] << "\n" << one[0];
    EXPECT_TRUE(has_text(zero[0], " if=lo/lo torchrun=0/2 sky=0/2 dstack=0/2")) << zero[0];
    EXPECT_TRUE(has_text(one[0], " if=lo/lo torchrun=1/2 sky=1/2 dstack=1/2")) << one[0];
    EXPECT_TRUE(has_text(one[0], "addrs=127.0.0.1 127.0.0.1")) << one[0];
    // Each node's logs under nodes/<rank>, rank 0's also in the log dir itself; each job
    // ran once, in its own remote dir.
    EXPECT_EQ(read_or_empty(local_logs("m") + "/nodes/0/out-0.txt"), "0\n");
    EXPECT_EQ(read_or_empty(local_logs("m") + "/nodes/1/out-1.txt"), "1\n");
    EXPECT_EQ(read_or_empty(local_logs("m") + "/out-0.txt"), "0\n");
    EXPECT_FALSE(path_exists(local_logs("m") + "/out-1.txt"));
    EXPECT_TRUE(has_text(read_or_empty(job_file("m", "console.log")), "node 0 of 2"));
    EXPECT_TRUE(has_text(read_or_empty(second_job_file("console.log")), "node 1 of 2"));
    EXPECT_TRUE(
        has_text(read_or_empty(local_logs("m") + "/nodes/1/mltk_ssh_train_m.log"), "node 1 of 2"));
    EXPECT_FALSE(path_exists(job_file("m", "lock")));
    EXPECT_FALSE(path_exists(second_job_file("lock")));
    // `logs` shows every node's log, prefixed; --rank N one node's; -f needs --rank.
    ProcessResult logs = mlt(train({"logs", "m"}));
    EXPECT_EQ(logs.exit_code, 0) << describe(logs);
    EXPECT_EQ(lines_starting(logs.out, "[rank 0] node 0 of 2").size(), 1u) << describe(logs);
    EXPECT_EQ(lines_starting(logs.out, "[rank 1] node 1 of 2").size(), 1u) << describe(logs);
    ProcessResult one_log = mlt(train({"logs", "m", "--rank", "1"}));
    EXPECT_EQ(lines_starting(one_log.out, "node 1 of 2").size(), 1u) << describe(one_log);
    EXPECT_FALSE(has_text(one_log.out, "node 0 of 2")) << describe(one_log);
    // One run, one id, on every node.
    const std::string run = trim(read_or_empty(job_file("m", "run_id")));
    EXPECT_FALSE(run.empty());
    EXPECT_EQ(trim(read_or_empty(second_job_file("run_id"))), run);
}

TEST_F(TrainNodesTest, ANodeThatFailsStopsTheOtherAndItsStatusIsTheRuns) {
    write_settings("  environment: [FAIL_RANK1=1]\n");
    ProcessResult r = mlt(train({"train", "m"}));
    // Rank 1 exited 3, one of mlt's own codes: the run exits 1 and says 3.
    EXPECT_EQ(r.exit_code, 1) << describe(r);
    // Rank 0's job (its process group) was stopped, not left to its bound.
    const std::string console0 = read_or_empty(job_file("m", "console.log"));
    EXPECT_FALSE(has_text(console0, "rank 0 was never stopped")) << console0;
    EXPECT_TRUE(has_text(read_or_empty(job_file("m", "exit_status")), "143")) << job_state("m");
    const long pid0 = std::atol(read_or_empty(job_file("m", "rank0.pid")).c_str());
    EXPECT_GT(pid0, 0);
    EXPECT_FALSE(process_alive(pid0));
    // The root cause: which rank, and its last lines.
    EXPECT_TRUE(has_text(r.err, "rank 1 (")) << describe(r);
    EXPECT_TRUE(has_text(r.err, ") failed first, with exit 3")) << describe(r);
    EXPECT_TRUE(has_text(r.err, "rank 1 fails now")) << describe(r);
}

// A watch.on_failure `restart` rule on a rank's failure restarts every node together, once
// with max_restarts 0.
TEST_F(TrainNodesTest, ARestartRuleOnARanksFailureRestartsTheGangOnce) {
    write_shell_model(
        "m",
        "echo \"node $MLT_NODE_RANK attempt ${MLT_ATTEMPT:-1}\"\n"
        "if [ -z \"$MLT_ATTEMPT\" ]; then\n"
        "  if [ \"$MLT_NODE_RANK\" = 1 ]; then echo 'rank 1 hit a flaky link'; exit 3; "
        "fi\n"
        "  i=0; while [ $i -lt 2400 ]; do sleep 0.05; i=$((i+1)); done; exit 7\n"
        "fi\n"
        "echo \"node $MLT_NODE_RANK done\"\n");
    write_settings("  watch:\n    on_failure: [{match: 'flaky link', then: restart}]\n");
    ProcessResult r = mlt(train({"train", "m"}));
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(has_text(r.out + r.err,
                         "watch.on_failure rule #1 'flaky link' (restart) matched "
                         "the line 'rank 1 hit a flaky link'"))
        << describe(r);
    EXPECT_TRUE(has_text(r.out + r.err, "restarting every node")) << describe(r);
    EXPECT_EQ(count_lines(read_or_empty(job_file("m", "console.log")), "node 0 done"), 1u)
        << job_state("m");
    EXPECT_EQ(count_lines(read_or_empty(second_job_file("console.log")), "node 1 done"), 1u);
}

TEST_F(TrainNodesTest, NoNodeTrainsBeforeEveryNodesStartupCmdsSucceeded) {
    // Rank 1's startup_cmds fail; rank 0's succeed, and it waits at the barrier until it is
    // stopped: its training never starts.
    write_settings("  startup_cmds: ['[ \"$MLT_NODE_RANK\" != 1 ] || exit 4']\n");
    ProcessResult r = mlt(train({"train", "m"}));
    EXPECT_EQ(r.exit_code, 1) << describe(r);  // 4, one of mlt's own codes
    const std::string console0 = read_or_empty(job_file("m", "console.log"));
    // Rank 0 was stopped at the barrier, or (on a loaded machine, rank 1 failing first)
    // still in its own setup: either way before its training.
    EXPECT_TRUE(has_text(console0, "mlt: set up; waiting for every node") ||
                has_text(console0, "the training did not start"))
        << console0;
    EXPECT_FALSE(has_text(console0, "mlt: training:")) << console0;
    EXPECT_FALSE(has_text(console0, "node 0 of 2")) << console0;
    EXPECT_TRUE(has_text(r.err, "rank 1 (")) << describe(r);
}

TEST_F(TrainNodesTest, ANodeThatFailsBeforeTheStartKeepsEveryJobFromStarting) {
    write_settings();
    // The second node's remote dir cannot be made: its lock fails.
    std::error_code ec;
    fs::remove_all(second_->remote_dir(), ec);
    write_file(second_->remote_dir(), "not a directory\n");
    ProcessResult r = mlt(train({"train", "m"}));
    EXPECT_NE(r.exit_code, 0) << describe(r);
    EXPECT_FALSE(path_exists(job_file("m", "pid"))) << "rank 0 started its job";
    EXPECT_FALSE(path_exists(job_file("m", "lock"))) << "rank 0 kept its lock";
    EXPECT_TRUE(has_text(r.err, "rank 1 failed before the training started")) << describe(r);
}

// The real thing: examples/ddp (PyTorch DistributedDataParallel, gloo, env:// rendezvous)
// on both nodes, with Debian's torch (scripts/install-deps.sh installs python3-torch).
TEST_F(TrainNodesTest, APyTorchDdpModelTrainsOnTwoNodesToTheSameParameters) {
    const std::string python = "/usr/bin/python3";
    if (run_process({python, "-c", "import torch"}, current_environment(), kEffectTimeout)
            .exit_code != 0)
        GTEST_SKIP() << "*** SKIPPED LOUDLY: " << python
                     << " cannot import torch; install python3-torch (scripts/install-deps.sh "
                        "does) to run the two-node DDP test ***";
    write_file(project() + "/ddp_model.py",
               read_file(std::string(MLT_SOURCE_DIR) + "/examples/ddp/ddp_model.py"));
    write_user_settings();
    write_model_settings("ddp_model", "ssh:\n  train_cmd: \"" + python +
                                          " {spec} --epochs 3\"\n  remote_log_dir: "
                                          "\"logs/{model}\"\n");
    std::vector<std::string> args = two_nodes();
    args.insert(args.end(), {"train", "ddp_model"});
    ProcessResult r = mlt(args);
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    const auto zero = lines_starting(r.out, "[rank 0] rank 0/2 done, parameters ");
    const auto one = lines_starting(r.out, "[rank 1] rank 1/2 done, parameters ");
    ASSERT_EQ(zero.size(), 1u) << describe(r);
    ASSERT_EQ(one.size(), 1u) << describe(r);
    EXPECT_EQ(zero[0].substr(zero[0].rfind(' ')), one[0].substr(one[0].rfind(' ')))
        << "the replicas differ:\n"
        << zero[0] << "\n"
        << one[0];
    EXPECT_TRUE(valid_zip(project() + "/ddp_model.mltk.zip"));
    EXPECT_TRUE(path_exists(local_logs("ddp_model") + "/nodes/1/node-1.json"));
    EXPECT_TRUE(path_exists(local_logs("ddp_model") + "/nodes/0/node-0.json"));
}

TEST_F(TrainNodesTest, ResumeAfterTheClientWasKilledFinishesEveryNode) {
    write_shell_model("m",
                      "echo \"rank $MLT_NODE_RANK waiting\"; i=0\n"
                      "while [ ! -f gate ] && [ $i -lt 2400 ]; do sleep 0.05; i=$((i+1)); done\n"
                      "echo \"rank $MLT_NODE_RANK done\"\n");
    write_settings();
    auto first = start_mlt(train({"train", "m"}));
    ASSERT_TRUE(first->wait_for_output("[rank 0] rank 0 waiting", kEffectTimeout)) << first->out();
    ASSERT_TRUE(first->wait_for_output("[rank 1] rank 1 waiting", kEffectTimeout)) << first->out();
    first->signal(SIGKILL);
    first->wait(kEffectTimeout);
    write_file(remote() + "/gate", "");
    write_file(second_->remote_dir() + "/gate", "");
    ProcessResult r = mlt(train({"train", "m", "--resume"}));
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_EQ(count_lines(r.out, "[rank 0] rank 0 done"), 1u) << describe(r);
    EXPECT_EQ(count_lines(r.out, "[rank 1] rank 1 done"), 1u) << describe(r);
    for (const std::string& dir : {local_logs("m") + "/nodes/0", local_logs("m") + "/nodes/1"}) {
        const std::string console = read_or_empty(dir + "/mltk_ssh_train_m.log");
        EXPECT_EQ(lines_starting(console, "rank ").size(), 2u) << dir << ":\n" << console;
    }
    EXPECT_FALSE(path_exists(job_file("m", "lock")));
    EXPECT_FALSE(path_exists(second_job_file("lock")));
}

// Each rank resumes after its newest checkpoint in its log dir and writes one per epoch;
// attempt 1 waits (bounded) after epoch 2, to be lost there.
const char* const kCheckpointingNodes =
    "n=0\n"
    "for f in \"$MLT_LOG_DIR\"/ckpt-*; do [ -e \"$f\" ] || continue; k=${f##*ckpt-}; "
    "[ \"$k\" -gt \"$n\" ] && n=$k; done\n"
    "echo \"rank $MLT_NODE_RANK attempt ${MLT_ATTEMPT:-1} resumes after epoch $n\"\n"
    "i=$((n+1))\n"
    "while [ $i -le 4 ]; do\n"
    "  echo \"rank $MLT_NODE_RANK epoch $i\"\n"
    "  echo \"weights $i\" > \"$MLT_LOG_DIR/.tmp\" && mv \"$MLT_LOG_DIR/.tmp\" "
    "\"$MLT_LOG_DIR/ckpt-$i\"\n"
    "  if [ -z \"$MLT_ATTEMPT\" ] && [ $i -eq 2 ]; then echo \"rank $MLT_NODE_RANK waiting\"; "
    "w=0; while [ $w -lt 2400 ]; do sleep 0.05; w=$((w+1)); done; exit 9; fi\n"
    "  i=$((i+1))\n"
    "done\n";

// After a gang stop for a lost rank, the run's --resume (the same hosts) restarts every node
// together as attempt 2, each from its newest checkpoint: epochs 3-4 once on each rank, the
// exit status and the history agreeing.
void expect_restarted_together(const ProcessResult& r, const std::string& run_id,
                               const std::vector<std::string>& consoles) {
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(
        has_text(r.err, "restarting every node of m (run " + run_id + ") together as attempt 2"))
        << describe(r);
    for (size_t rank = 0; rank < consoles.size(); ++rank) {
        const std::string console = read_or_empty(consoles[rank]);
        const std::string k = std::to_string(rank);
        EXPECT_EQ(count_lines(console, "rank " + k + " attempt 2 resumes after epoch 2"), 1u)
            << console;
        for (int i = 1; i <= 4; ++i)
            EXPECT_EQ(count_lines(console, "rank " + k + " epoch " + std::to_string(i)), 1u)
                << "rank " << k << " epoch " << i << ":\n"
                << console;
    }
}

TEST_F(TrainNodesTest, AResumeAfterARanksJobWasKilledRestartsEveryNodeTogether) {
    write_shell_model("m", kCheckpointingNodes);
    write_settings();
    auto run = start_mlt(train({"train", "m"}));
    ASSERT_TRUE(run->wait_for_output("[rank 0] rank 0 waiting", kEffectTimeout)) << run->out();
    ASSERT_TRUE(run->wait_for_output("[rank 1] rank 1 waiting", kEffectTimeout)) << run->out();
    const long pgid1 = std::atol(read_or_empty(second_job_file("pid")).c_str());
    ASSERT_GT(pgid1, 0);
    ASSERT_EQ(::kill(static_cast<pid_t>(-pgid1), SIGKILL), 0);
    ProcessResult lost = run->wait(kTrainTimeout);
    EXPECT_NE(lost.exit_code, 0) << describe(lost);
    EXPECT_TRUE(has_text(lost.err, "the other nodes were stopped")) << describe(lost);
    EXPECT_TRUE(has_text(lost.err, "with --resume")) << describe(lost);
    // The lost node's warning keeps its rank (it went around the node's reporter before).
    EXPECT_TRUE(has_text(lost.err, "mlt: [rank 1] warning: the job of m (run ")) << describe(lost);
    const std::string run_id = trim(read_or_empty(job_file("m", "run_id")));
    ProcessResult r = mlt(train({"train", "m", "--resume"}));
    expect_restarted_together(r, run_id,
                              {job_file("m", "console.log"), second_job_file("console.log")});
    const auto runs = history();
    ASSERT_FALSE(runs.empty());
    EXPECT_EQ(runs.back().at("id"), run_id);
    EXPECT_EQ(runs.back().at("status"), "success") << read_or_empty(history_path());
    EXPECT_FALSE(path_exists(job_file("m", "lock")));
    EXPECT_FALSE(path_exists(second_job_file("lock")));
}

TEST_F(TrainNodesTest, AResumeAfterANodesHostWasLostRestartsEveryNodeTogether) {
    // Node 1 behind a relay: its host goes away (every connection reset, none accepted) with
    // its job, keeping its disk, then comes back under the same address.
    auto relay = std::make_unique<FaultRelay>(second_->port());
    const int port = relay->port();
    append_file(default_known_hosts(), "[127.0.0.1]:" + std::to_string(port) + " " +
                                           second_->host_key_type_and_blob() + "\n");
    write_shell_model("m", kCheckpointingNodes);
    write_settings();
    const std::vector<std::string> nodes = {
        "ssh",
        "-o",
        "ConnectTimeout=2",
        "-i",
        sshd().client_key_path(),
        "-h",
        host() + "/" + remote(),
        "-h",
        sshd().user() + "@127.0.0.1:" + std::to_string(port) + "/" + second_->remote_dir()};
    std::vector<std::string> args = nodes;
    for (const char* a : {"train", "m", "--reconnect-timeout", "2"}) args.push_back(a);
    auto run = start_mlt(args);
    ASSERT_TRUE(run->wait_for_output("[rank 0] rank 0 waiting", kEffectTimeout)) << run->out();
    ASSERT_TRUE(run->wait_for_output("[rank 1] rank 1 waiting", kEffectTimeout)) << run->out();
    const long pgid1 = std::atol(read_or_empty(second_job_file("pid")).c_str());
    ASSERT_GT(pgid1, 0);
    relay.reset();
    ASSERT_EQ(::kill(static_cast<pid_t>(-pgid1), SIGKILL), 0);
    ProcessResult lost = run->wait(kTrainTimeout);
    EXPECT_NE(lost.exit_code, 0) << describe(lost);
    EXPECT_TRUE(has_text(lost.err, "with --resume")) << describe(lost);
    EXPECT_TRUE(path_exists(second_job_file("lock"))) << "rank 1's lock went with its host";
    const std::string run_id = trim(read_or_empty(job_file("m", "run_id")));
    relay = std::make_unique<FaultRelay>(second_->port(), port);  // back, with its disk
    args = nodes;
    for (const char* a : {"train", "m", "--resume"}) args.push_back(a);
    ProcessResult r = mlt(args);
    expect_restarted_together(r, run_id,
                              {job_file("m", "console.log"), second_job_file("console.log")});
    EXPECT_EQ(history().back().at("status"), "success") << read_or_empty(history_path());
}

// A node that failed on its own (its training's exit status) is no lost rank: the gang's
// --resume finds every node collected and says so, naming --restore.
TEST_F(TrainNodesTest, AResumeAfterATrainingFailedRestartsNothing) {
    write_settings("  environment: [FAIL_RANK1=1]\n");
    ProcessResult failed = mlt(train({"train", "m"}));
    EXPECT_EQ(failed.exit_code, 1) << describe(failed);
    EXPECT_FALSE(has_text(failed.err, "with --resume")) << describe(failed);
    ProcessResult r = mlt(train({"train", "m", "--resume"}));
    EXPECT_EQ(r.exit_code, 3) << describe(r);
    EXPECT_TRUE(has_text(r.err, "has ended on every node")) << describe(r);
    EXPECT_TRUE(has_text(r.err, "--restore")) << describe(r);
    EXPECT_FALSE(has_text(r.err, "restarting every node")) << describe(r);
}

TEST_F(TrainNodesTest, APreflightThatFailsStartsNothing) {
    // MASTER_PORT is taken on rank 0: the preflight's listener cannot have it.
    SilentListener taken;
    write_settings("  nodes: {master_port: " + std::to_string(taken.port()) + "}\n");
    ProcessResult r = mlt(train({"train", "m"}));
    EXPECT_EQ(r.exit_code, 1) << describe(r);
    EXPECT_TRUE(has_text(r.err, "preflight: MASTER_PORT " + std::to_string(taken.port()) +
                                    " cannot be listened on on rank 0"))
        << describe(r);
    EXPECT_FALSE(path_exists(remote() + "/.mlt")) << "rank 0 was set up";
    EXPECT_FALSE(path_exists(second_->remote_dir() + "/.mlt")) << "rank 1 was set up";
}

// Node 1's commands run in a network namespace of their own (unshare --net: only a loopback
// that is down), as a host behind a firewall: it cannot reach rank 0's MASTER_PORT.
TEST_F(TrainNodesTest, ANodeThatCannotReachRankZeroIsNamedAndNothingStarts) {
    if (run_process({"unshare", "--net", "--", "true"}, {}, std::chrono::seconds(10)).exit_code !=
        0)
        GTEST_SKIP() << "LOUD SKIP: unshare --net is not allowed here (needs root or user "
                        "namespaces); the unreachable-node preflight is not tested";
    TestSshd walled("ForceCommand exec unshare --net -- /bin/sh -c \"$SSH_ORIGINAL_COMMAND\"\n");
    walled.authorize_key_file(sshd().client_key_path() + ".pub");
    append_file(default_known_hosts(), "[127.0.0.1]:" + std::to_string(walled.port()) + " " +
                                           walled.host_key_type_and_blob() + "\n");
    write_settings();
    ProcessResult r = mlt(
        {"ssh", "-i", sshd().client_key_path(), "-h", host() + "/" + remote(), "-h",
         sshd().user() + "@127.0.0.1:" + std::to_string(walled.port()) + "/" + walled.remote_dir(),
         "train", "m"});
    EXPECT_EQ(r.exit_code, 255) << describe(r);
    EXPECT_TRUE(has_text(r.err, "preflight: node 1 (")) << describe(r);
    EXPECT_TRUE(has_text(r.err, ") cannot reach rank 0 at 127.0.0.1:")) << describe(r);
    EXPECT_TRUE(has_text(r.err, "nothing was started")) << describe(r);
    EXPECT_FALSE(path_exists(remote() + "/.mlt")) << "rank 0 was set up";
    EXPECT_FALSE(path_exists(walled.remote_dir() + "/.mlt")) << "rank 1 was set up";
}

TEST_F(TrainNodesTest, ANodeWhoseLinkDropsReconnectsAndTheRunGoesOnEverywhere) {
    // Node 1 behind a relay that resets its connections once, while both jobs train.
    FaultRelay relay(second_->port());
    append_file(default_known_hosts(), "[127.0.0.1]:" + std::to_string(relay.port()) + " " +
                                           second_->host_key_type_and_blob() + "\n");
    write_shell_model("m",
                      "echo \"rank $MLT_NODE_RANK line 1\"; i=0\n"
                      "while [ ! -f gate ] && [ $i -lt 2400 ]; do sleep 0.05; i=$((i+1)); done\n"
                      "echo \"rank $MLT_NODE_RANK line 2\"\n");
    write_settings();
    auto run = start_mlt(
        {"ssh", "-i", sshd().client_key_path(), "-h", host() + "/" + remote(), "-h",
         sshd().user() + "@127.0.0.1:" + std::to_string(relay.port()) + "/" + second_->remote_dir(),
         "train", "m"});
    ASSERT_TRUE(run->wait_for_output("[rank 0] rank 0 line 1", kEffectTimeout)) << run->out();
    ASSERT_TRUE(run->wait_for_output("[rank 1] rank 1 line 1", kEffectTimeout)) << run->out();
    relay.cut();
    ASSERT_TRUE(run->wait_for_output("is back after", kEffectTimeout, true)) << run->err();
    write_file(remote() + "/gate", "");
    write_file(second_->remote_dir() + "/gate", "");
    ProcessResult r = run->wait(kTrainTimeout);
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    for (const char* line : {"[rank 0] rank 0 line 1", "[rank 0] rank 0 line 2",
                             "[rank 1] rank 1 line 1", "[rank 1] rank 1 line 2"})
        EXPECT_EQ(count_lines(r.out, line), 1u) << line << "\n" << describe(r);
    EXPECT_TRUE(has_text(r.err, "[rank 1] link to ")) << describe(r);
    EXPECT_FALSE(has_text(r.err, "[rank 0] link to ")) << describe(r);
    EXPECT_GE(relay.cuts(), 1u);
}

TEST_F(TrainNodesTest, StopStopsTheJobOfEveryNode) {
    write_shell_model("m",
                      "echo \"rank $MLT_NODE_RANK up\"; i=0\n"
                      "while [ $i -lt 2400 ]; do sleep 0.05; i=$((i+1)); done\n");
    write_settings();
    const auto [pgid0, pgid1] = started_on_both();
    ASSERT_GT(pgid0, 0);
    ASSERT_GT(pgid1, 0);
    ProcessResult r = mlt(train({"stop", "m"}));
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(has_text(r.out, "[rank 0] stopped the job of m")) << describe(r);
    EXPECT_TRUE(has_text(r.out, "[rank 1] stopped the job of m")) << describe(r);
    EXPECT_TRUE(wait_group_gone(pgid0));
    EXPECT_TRUE(wait_group_gone(pgid1));
    EXPECT_FALSE(path_exists(job_file("m", "lock")));
    EXPECT_FALSE(path_exists(second_job_file("lock")));
}

// --max-cost of a gang with no mlt attached: every node's guard holds the same deadline, from
// the budget at the sum of the nodes' prices ($3600/h each: $2 a second together, so $6 lasts
// 3 s, not the 6 s of one node), stops its rank, and a --resume ends the run as a limit.
TEST_F(TrainNodesTest, AGangsMaxCostIsHeldByEveryNodesGuardAtTheSumOfTheirPrices) {
    write_shell_model("m",
                      "echo \"rank $MLT_NODE_RANK up\"; i=0\n"
                      "while [ $i -lt 2400 ]; do sleep 0.05; i=$((i+1)); done\n");
    write_settings();
    ProcessResult started =
        mlt(train({"train", "m", "--no-wait", "--price", "3600", "--max-cost", "6"}));
    ASSERT_EQ(started.exit_code, 0) << describe(started);
    const auto budget_s = [](const std::string& lock) {
        const auto value = [&lock](const std::string& key) {
            const size_t at = lock.find("\n" + key + "=");
            return at == std::string::npos ? -1L : std::atol(lock.c_str() + at + key.size() + 2);
        };
        return value("deadline") - value("started");
    };
    for (const std::string& dir : {remote(), second_->remote_dir()}) {
        const std::string lock = read_or_empty(dir + "/.mlt/m/lock");
        EXPECT_TRUE(has_text(lock, "\nlimit=--max-cost 6\n")) << lock;
        EXPECT_GE(budget_s(lock), 0) << lock;
        EXPECT_LE(budget_s(lock), 3) << "not the sum of both prices: " << lock;
        ASSERT_TRUE(wait_until([&] { return path_exists(dir + "/.mlt/m/exit_status"); },
                               std::chrono::seconds(60)))
            << dir;
        EXPECT_EQ(read_or_empty(dir + "/.mlt/m/guard.stop"), "limit --max-cost 6\n") << dir;
    }
    const ProcessResult r = mlt(train({"train", "m", "--resume"}));
    EXPECT_EQ(r.exit_code, 5) << describe(r);
    EXPECT_TRUE(has_text(r.out + r.err, "--max-cost 6 (reached; the guard on ")) << describe(r);
}

// With the laptop closed, the gang ends on the hosts alone: rank 0's guard stops its rank for a
// rule; rank 1, which printed once and then waits (as a rank whose peer is gone hangs in its
// collective), falls silent, and its own guard stops it (watch.silent_minutes 0.05: 3 s).
TEST_F(TrainNodesTest, ARankStoppedByARuleLeavesTheOthersToTheirSilence) {
    write_shell_model("m",
                      "echo \"rank $MLT_NODE_RANK up\"\n"
                      "if [ \"$MLT_NODE_RANK\" = 0 ]; then echo 'loss=nan'; fi\n"
                      "i=0; while [ $i -lt 2400 ]; do sleep 0.05; i=$((i+1)); done\n");
    write_settings("  watch: {stop_when: ['loss=nan'], silent_minutes: 0.05, stop_silent: true}\n");
    const auto [pgid0, pgid1] = started_on_both();
    ASSERT_GT(pgid0, 0);
    ASSERT_GT(pgid1, 0);
    for (const std::string& dir : {remote(), second_->remote_dir()})
        ASSERT_TRUE(wait_until([&] { return path_exists(dir + "/.mlt/m/exit_status"); },
                               std::chrono::seconds(60)))
            << dir;
    EXPECT_EQ(read_or_empty(job_file("m", "guard.stop")), "rule 0\tloss=nan\n");
    EXPECT_EQ(read_or_empty(second_job_file("guard.stop")), "silent 3\n");
    EXPECT_FALSE(has_text(read_or_empty(second_job_file("lock")), "rules="))
        << "the rules are rank 0's";
    EXPECT_TRUE(wait_group_gone(pgid0));
    EXPECT_TRUE(wait_group_gone(pgid1));
}

TEST_F(TrainNodesTest, ForceReplacesTheRunningJobOfEveryNode) {
    write_shell_model("m",
                      "if [ -f quick ]; then echo \"rank $MLT_NODE_RANK quick\"; exit 0; fi\n"
                      "echo \"rank $MLT_NODE_RANK up\"; i=0\n"
                      "while [ $i -lt 2400 ]; do sleep 0.05; i=$((i+1)); done\n");
    write_settings();
    const auto [pgid0, pgid1] = started_on_both();
    ASSERT_GT(pgid0, 0);
    ASSERT_GT(pgid1, 0);
    ProcessResult refused = mlt(train({"train", "m"}));  // without --force: exit 3
    EXPECT_EQ(refused.exit_code, 3) << describe(refused);
    write_file(remote() + "/quick", "");
    write_file(second_->remote_dir() + "/quick", "");
    ProcessResult r = mlt(train({"train", "m", "--force"}));
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_EQ(count_lines(r.out, "[rank 0] rank 0 quick"), 1u) << describe(r);
    EXPECT_EQ(count_lines(r.out, "[rank 1] rank 1 quick"), 1u) << describe(r);
    EXPECT_TRUE(wait_group_gone(pgid0));
    EXPECT_TRUE(wait_group_gone(pgid1));
}

TEST_F(TrainNodesTest, CtrlCStopsEveryNodeAndCollects) {
    write_shell_model("m",
                      "echo \"rank $MLT_NODE_RANK up\"; i=0\n"
                      "while [ $i -lt 2400 ]; do sleep 0.05; i=$((i+1)); done; echo never\n");
    write_settings();
    auto run = start_mlt(train({"train", "m"}));
    ASSERT_TRUE(run->wait_for_output("[rank 0] rank 0 up", kEffectTimeout)) << run->out();
    ASSERT_TRUE(run->wait_for_output("[rank 1] rank 1 up", kEffectTimeout)) << run->out();
    run->signal(SIGINT);
    ProcessResult r = run->wait(kTrainTimeout);
    EXPECT_EQ(r.exit_code, 130) << describe(r);
    EXPECT_TRUE(has_text(r.err, "every node's job was stopped")) << describe(r);
    EXPECT_EQ(trim(read_or_empty(job_file("m", "exit_status"))), "143") << job_state("m");
    EXPECT_EQ(trim(read_or_empty(second_job_file("exit_status"))), "143");
    EXPECT_FALSE(has_text(read_or_empty(job_file("m", "console.log")), "never"));
    EXPECT_FALSE(has_text(read_or_empty(second_job_file("console.log")), "never"));
    // Both collected: the console copies hold each node's line.
    EXPECT_TRUE(
        has_text(read_or_empty(local_logs("m") + "/nodes/1/mltk_ssh_train_m.log"), "rank 1 up"));
}

TEST_F(TrainNodesTest, TwoNodesOnTheSameHostAndDirAreRefusedBeforeAnything) {
    write_settings();
    ProcessResult r =
        mlt({"ssh", "-h", host() + "/" + remote(), "-h", host() + "/" + remote(), "train", "m"});
    EXPECT_EQ(r.exit_code, 2) << describe(r);
    EXPECT_TRUE(has_text(r.err, "are the same host and remote dir")) << describe(r);
    EXPECT_FALSE(path_exists(remote() + "/.mlt")) << "something was done remotely";
}

TEST_F(TrainNodesTest, NodesFromTheSettingsOneStatusTableAndOneFollowOfAll) {
    // nodes.hosts names both nodes; the one connection entry's key serves both.
    write_shell_model("m",
                      "echo \"rank $MLT_NODE_RANK up\"; i=0\n"
                      "while [ ! -f gate ] && [ $i -lt 2400 ]; do sleep 0.05; i=$((i+1)); done\n"
                      "printf 'rank %s do' \"$MLT_NODE_RANK\"; sleep 0.2; echo ne\n");
    write_settings("  nodes:\n    hosts: [\"" + host() + "/" + remote() + "\", \"" + sshd().user() +
                   "@127.0.0.1:" + std::to_string(second_->port()) + "/" + second_->remote_dir() +
                   "\"]\n");
    ProcessResult started = mlt({"ssh", "train", "m", "--no-wait"});
    ASSERT_EQ(started.exit_code, 0) << describe(started);
    ASSERT_GT(job_pgid("m"), 0) << describe(started);
    ASSERT_FALSE(read_or_empty(second_job_file("pid")).empty()) << describe(started);
    // One table: a header, then a row per node, rank first.
    ProcessResult status = mlt({"ssh", "status", "m"});
    EXPECT_EQ(status.exit_code, 0) << describe(status);
    const auto rows = lines_starting(status.out, "");
    ASSERT_EQ(rows.size(), 3u) << describe(status);
    EXPECT_TRUE(has_text(rows[0], "RANK") && has_text(rows[0], "STATE")) << rows[0];
    EXPECT_EQ(rows[1].rfind("0 ", 0), 0u) << rows[1];
    EXPECT_TRUE(has_text(rows[1], std::to_string(sshd().port()) + " ")) << rows[1];
    EXPECT_EQ(rows[2].rfind("1 ", 0), 0u) << rows[2];
    EXPECT_TRUE(has_text(rows[2], std::to_string(second_->port()) + " ")) << rows[2];
    for (const auto& row : {rows[1], rows[2]}) EXPECT_TRUE(has_text(row, " running ")) << row;
    // logs -f follows both nodes at once, whole lines, until both jobs end.
    auto follow = start_mlt({"ssh", "logs", "m", "-f"});
    ASSERT_TRUE(follow->wait_for_output("[rank 0] rank 0 up", kEffectTimeout)) << follow->out();
    ASSERT_TRUE(follow->wait_for_output("[rank 1] rank 1 up", kEffectTimeout)) << follow->out();
    write_file(remote() + "/gate", "");
    write_file(second_->remote_dir() + "/gate", "");
    ProcessResult r = follow->wait(kTrainTimeout);
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    for (const char* line : {"[rank 0] rank 0 up", "[rank 1] rank 1 up", "[rank 0] rank 0 done",
                             "[rank 1] rank 1 done"})
        EXPECT_EQ(count_lines(r.out, line), 1u) << line << "\n" << describe(r);
    ProcessResult collected = mlt({"ssh", "train", "m", "--resume"});
    EXPECT_EQ(collected.exit_code, 0) << describe(collected);
    EXPECT_TRUE(
        has_text(read_or_empty(local_logs("m") + "/nodes/1/mltk_ssh_train_m.log"), "rank 1 done"));
}

}  // namespace
}  // namespace mlt_test
