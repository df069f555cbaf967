// A host lost with its job (its sshd gone, the job's process group killed, its remote dir
// deleted) while a run trains: with fallback_hosts, or a provision_cmd that names a host, the
// run continues on a second real sshd as attempt 2, from the checkpoints that came home, and
// ends there with everything collected. --no-failover ends it as before; --restore pushes the
// local log dir to a fresh run.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "harness/expect.h"
#include "harness/fault_relay.h"
#include "harness/files.h"
#include "harness/net.h"
#include "harness/test_sshd.h"
#include "harness/train_fixture.h"

namespace fs = std::filesystem;

namespace mlt_test {
namespace {

constexpr int kEpochs = 6;

// Resumes after its newest checkpoint in the log dir; writes one per epoch (whole files,
// renamed into place). Attempt 1 stops after epoch 3 and waits (bounded) to be lost.
const char* const kCheckpointingModel =
    "n=0\n"
    "for f in \"$MLT_LOG_DIR\"/ckpt-*; do [ -e \"$f\" ] || continue; k=${f##*ckpt-}; "
    "[ \"$k\" -gt \"$n\" ] && n=$k; done\n"
    "echo \"attempt ${MLT_ATTEMPT:-1} resumes after epoch $n\"\n"
    "i=$((n+1))\n"
    "while [ $i -le 6 ]; do\n"
    "  echo \"epoch $i\"\n"
    "  echo \"weights of epoch $i\" > \"$MLT_LOG_DIR/.tmp\" && mv \"$MLT_LOG_DIR/.tmp\" "
    "\"$MLT_LOG_DIR/ckpt-$i\"\n"
    "  if [ -z \"$MLT_ATTEMPT\" ] && [ $i -eq 3 ]; then echo waiting; w=0; "
    "while [ $w -lt 2400 ]; do sleep 0.05; w=$((w+1)); done; exit 9; fi\n"
    "  i=$((i+1))\n"
    "done\n";

class TrainFailoverTest : public TrainTest {
  protected:
    void SetUp() override {
        TrainTest::SetUp();
        relay_ = std::make_unique<FaultRelay>(sshd().port());
        standby_ = std::make_unique<TestSshd>();
        standby_->authorize_key_file(sshd().client_key_path() + ".pub");
        write_shell_model("m", kCheckpointingModel);
        write_model_settings("m", "ssh:\n  train_cmd: \"sh {spec}\"\n");
        append_file(default_known_hosts(), "[127.0.0.1]:" + std::to_string(relay_->port()) + " " +
                                               sshd().host_key_type_and_blob() + "\n");
    }
    void TearDown() override {
        relay_.reset();
        // An sshd that provision_cmd started runs detached: its pid file names it.
        const long provisioned =
            provisioned_ ? std::atol(read_or_empty(standby_->pid_file()).c_str()) : 0;
        if (provisioned > 0 && ::kill(static_cast<pid_t>(provisioned), SIGTERM) == 0)
            wait_until([&] { return !process_alive(provisioned); }, kEffectTimeout);
        standby_.reset();
        TrainTest::TearDown();
    }

    // The settings: host A behind the relay, log dirs inside each host's remote dir (so that
    // A's and B's are apart), and `extra` lines.
    void write_settings(const std::string& extra) const {
        env().write_settings("ssh:\n  remote_dir: \"" + remote() +
                             "\"\n  remote_log_dir: \"logs/{model}\"\n  compression: none\n"
                             "  connection:\n    hostname: 127.0.0.1\n    port: " +
                             std::to_string(relay_->port()) + "\n    username: " + sshd().user() +
                             "\n    key_filename: \"" + sshd().client_key_path() + "\"\n" + extra);
    }
    // Host B as -h takes it, with its own remote dir.
    std::string standby_spec() const {
        return sshd().user() + "@127.0.0.1:" + std::to_string(standby_->port()) + "/" +
               standby_->remote_dir();
    }
    std::string standby_job_file(const std::string& name) const {
        return standby_->remote_dir() + "/.mlt/m/" + name;
    }

    // Host A goes away with its job: the process group killed, its sshd out of reach (every
    // connection reset, no new one accepted), its remote dir deleted. Returns the newest
    // checkpoint that had come home by then.
    int lose_host_a() {
        // The network first: a follow must not see the job end before the host is gone.
        const long pgid = job_pgid("m");
        EXPECT_GT(pgid, 0);
        lost_port_ = relay_->port();
        relay_.reset();
        a_closed_ = std::make_unique<ClosedPort>(lost_port_);  // refused, never reused
        if (pgid > 0) {
            EXPECT_EQ(::kill(static_cast<pid_t>(-pgid), SIGKILL), 0);
            EXPECT_TRUE(wait_group_gone(pgid));
        }
        std::error_code ec;
        fs::remove_all(remote(), ec);
        int newest = 0;
        for (int i = 1; i <= kEpochs; ++i)
            if (path_exists(local_logs("m") + "/ckpt-" + std::to_string(i))) newest = i;
        return newest;
    }

    // With B as the standby, starts the run with --sync-every 1 and returns it once it is
    // followed (the job's lines reached the terminal) and epoch 3's checkpoint came home while
    // the job ran; null (with a failure) otherwise.
    std::unique_ptr<BackgroundProcess> start_with_a_checkpoint_home(const std::string& extra = {}) {
        write_settings("  fallback_hosts: [\"" + standby_spec() + " price_per_hour=0.5\"]\n" +
                       extra);
        auto run = start_mlt({"ssh", "-o", "ConnectTimeout=2", "train", "m", "--reconnect-timeout",
                              "2", "--sync-every", "1"});
        if (!run->wait_for_output("waiting", kEffectTimeout) ||
            !wait_until([&] { return path_exists(local_logs("m") + "/ckpt-3"); }, kEffectTimeout)) {
            ADD_FAILURE() << "not followed, or --sync-every brought no checkpoint home\n"
                          << run->out() << run->err();
            return nullptr;
        }
        return run;
    }

    // Host A still answers, but its remote dir is gone with the job (a re-imaged instance at
    // the same address): that is a lost host, not another mlt's takeover.
    void wipe_host_a() {
        const long pgid = job_pgid("m");
        EXPECT_GT(pgid, 0);
        std::error_code ec;
        fs::remove_all(remote(), ec);
        if (pgid > 0) {
            EXPECT_EQ(::kill(static_cast<pid_t>(-pgid), SIGKILL), 0);
            EXPECT_TRUE(wait_group_gone(pgid));
        }
    }

    // The run went on on B as attempt 2 from checkpoint `resumed`, and ended there well.
    void expect_finished_on_b(const ProcessResult& r, int resumed) const {
        EXPECT_EQ(r.exit_code, 0) << describe(r);
        const std::string run = trim(read_or_empty(standby_job_file("run_id")));
        ASSERT_FALSE(run.empty()) << "no job on B";
        EXPECT_TRUE(has_text(r.err, "continuing m (run " + run + ") on ")) << describe(r);
        EXPECT_TRUE(has_text(r.err, "as attempt 2")) << describe(r);
        EXPECT_FALSE(path_exists(standby_job_file("lock"))) << "B's lock was not released";
        const std::string console = read_or_empty(local_console("m"));
        EXPECT_EQ(console, read_or_empty(standby_job_file("console.log")));
        EXPECT_EQ(lines_starting(console, "==== mlt: attempt 2 of run " + run).size(), 1u)
            << console;
        EXPECT_EQ(count_lines(console, "attempt 2 resumes after epoch " + std::to_string(resumed)),
                  1u)
            << console;
        for (int i = 1; i <= kEpochs; ++i) {
            // Epochs 1-3 of attempt 1 once; those after the checkpoint once more on B.
            const size_t want = (i <= 3 ? 1u : 0u) + (i > resumed ? 1u : 0u);
            EXPECT_EQ(count_lines(console, "epoch " + std::to_string(i)), want)
                << "epoch " << i << ":\n"
                << console;
            EXPECT_EQ(read_or_empty(local_logs("m") + "/ckpt-" + std::to_string(i)),
                      "weights of epoch " + std::to_string(i) + "\n");
        }
        const auto runs = history();
        ASSERT_FALSE(runs.empty());
        EXPECT_EQ(runs.back().at("status"), "success") << read_or_empty(history_path());
        EXPECT_EQ(runs.back().at("id"), run);
        // Both hosts in the history and in the summary, with the lost one's reminder.
        const std::string a = "127.0.0.1:" + std::to_string(lost_port_);
        const std::string b = "127.0.0.1:" + std::to_string(standby_->port());
        EXPECT_TRUE(has_text(runs.back().at("hosts"), a)) << runs.back().at("hosts");
        EXPECT_TRUE(has_text(runs.back().at("hosts"), b)) << runs.back().at("hosts");
        EXPECT_TRUE(has_text(r.out, "host lost; #2 on ")) << describe(r);
        EXPECT_TRUE(has_text(r.out, a + ", should it come back")) << describe(r);
    }

    // The local console copy: attempt 2 resumed after epoch 3, and every epoch was trained
    // once in all.
    void expect_each_epoch_once() const {
        const std::string console = read_or_empty(local_console("m"));
        EXPECT_EQ(count_lines(console, "attempt 2 resumes after epoch 3"), 1u) << console;
        for (int i = 1; i <= kEpochs; ++i)
            EXPECT_EQ(count_lines(console, "epoch " + std::to_string(i)), 1u)
                << "epoch " << i << ":\n"
                << console;
    }

    // mlt dies (SIGKILL) right after its failover chose B and recorded so, before B's lock
    // (held there by the test observer); A is cut off, its job killed, its disk kept.
    // Returns A's port (0 after a failure).
    int cut_after_the_standby_was_chosen() {
        write_settings("  fallback_hosts: [\"" + standby_spec() + "\"]\n");
        const std::string hold = sshd().dir() + "/hold";
        env().set("MLT_TEST_HOLD", "taking the job lock#2:" + hold);
        auto run = start_mlt({"ssh", "-o", "ConnectTimeout=2", "train", "m", "--reconnect-timeout",
                              "2", "--sync-every", "1"});
        const bool followed =
            run->wait_for_output("waiting", kEffectTimeout) &&
            wait_until([&] { return path_exists(local_logs("m") + "/ckpt-3"); }, kEffectTimeout);
        const long pgid = job_pgid("m");
        if (!followed || pgid <= 0) {
            ADD_FAILURE() << "not followed\n" << run->out() << run->err();
            return 0;
        }
        const int port = relay_->port();
        relay_.reset();
        a_closed_ = std::make_unique<ClosedPort>(port);  // refused, never reused
        EXPECT_EQ(::kill(static_cast<pid_t>(-pgid), SIGKILL), 0);
        EXPECT_TRUE(wait_group_gone(pgid));
        if (!wait_until([&] { return path_exists(hold); }, kTrainTimeout)) {
            ADD_FAILURE() << "no failover\n" << run->out() << run->err();
            return 0;
        }
        run->signal(SIGKILL);
        run->wait(kEffectTimeout);
        env().set("MLT_TEST_HOLD", "");
        return port;
    }

    std::unique_ptr<FaultRelay> relay_;
    std::unique_ptr<TestSshd> standby_;
    int lost_port_ = 0;  // host A's port, once it is lost
    // A's port while A is lost: refused, and no parallel test's sshd can take it (a
    // connect there met another host key).
    std::unique_ptr<ClosedPort> a_closed_;
    bool provisioned_ = false;  // provision_cmd started B's sshd itself
};

TEST_F(TrainFailoverTest, AHostLostMidRunFinishesOnTheFallbackHost) {
    auto run = start_with_a_checkpoint_home();
    ASSERT_TRUE(run);
    const int resumed = lose_host_a();
    EXPECT_EQ(resumed, 3);
    ProcessResult r = run->wait(kTrainTimeout);
    // B continued right after the last checkpoint that came home: no epoch lost, none twice.
    expect_finished_on_b(r, 3);
}

TEST_F(TrainFailoverTest, AProvisionedHostTakesOverWhenNoFallbackIsLeft) {
    // B is not running: provision_cmd starts it (as a rented machine comes up), waits until
    // it listens (its pid file), and prints its spec after a line of its own.
    standby_->stop();
    std::error_code ec;
    fs::remove(standby_->pid_file(), ec);
    provisioned_ = true;
    const std::string marker = project() + "/provisioned";
    write_file(project() + "/provision.sh",
               "echo renting >&2\n: > '" + marker + "'\n" + "/usr/sbin/sshd -f '" +
                   standby_->config_path() + "' -E '" + standby_->dir() +
                   "/provisioned-sshd.log'\n"
                   "i=0; while [ ! -s '" +
                   standby_->pid_file() +
                   "' ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done\n"
                   "echo 'a line before the host'\necho '" +
                   standby_spec() + "'\n");
    write_settings("  provision_cmd: \"sh provision.sh\"\n");
    auto run =
        start_mlt({"ssh", "-o", "ConnectTimeout=2", "train", "m", "--reconnect-timeout", "2"});
    ASSERT_TRUE(run->wait_for_output("waiting", kEffectTimeout)) << run->out() << run->err();
    const int resumed = lose_host_a();
    ProcessResult r = run->wait(kTrainTimeout);
    EXPECT_TRUE(path_exists(marker)) << "provision_cmd did not run";
    EXPECT_TRUE(has_text(r.out, "provision_cmd gave the host " + standby_spec())) << describe(r);
    expect_finished_on_b(r, resumed);
}

// watch.on_failure judges a lost host by the lines that came home: no_restart ends the run
// there, without a standby host; exclude_host fails over and marks the lost host bad.
TEST_F(TrainFailoverTest, ANoRestartRuleKeepsALostHostFromFailingOver) {
    write_settings("  fallback_hosts: [\"" + standby_spec() +
                   "\"]\n  watch:\n    on_failure: [{match: '^waiting$', then: no_restart}]\n");
    auto run =
        start_mlt({"ssh", "-o", "ConnectTimeout=2", "train", "m", "--reconnect-timeout", "2"});
    ASSERT_TRUE(run->wait_for_output("waiting", kEffectTimeout)) << run->out() << run->err();
    lose_host_a();
    ProcessResult r = run->wait(kTrainTimeout);
    EXPECT_EQ(r.exit_code, 255) << describe(r);
    EXPECT_TRUE(has_text(r.err,
                         "no standby host is taken: watch.on_failure rule #1 '^waiting$' "
                         "(no_restart) matched the line 'waiting'"))
        << describe(r);
    EXPECT_FALSE(path_exists(standby_->remote_dir() + "/.mlt")) << "B was used";
}

TEST_F(TrainFailoverTest, AnExcludeHostRuleMarksALostHostBad) {
    auto run = start_with_a_checkpoint_home(
        "  watch:\n    on_failure: [{match: '^waiting$', then: exclude_host}]\n");
    ASSERT_TRUE(run);
    lose_host_a();
    ProcessResult r = run->wait(kTrainTimeout);
    expect_finished_on_b(r, 3);
    EXPECT_TRUE(has_text(r.err, "is marked bad for 24 h: watch.on_failure rule #1")) << describe(r);
    const auto runs = history();
    ASSERT_FALSE(runs.empty());
    EXPECT_TRUE(
        has_text(runs.back().at("excluded_hosts"), "127.0.0.1:" + std::to_string(lost_port_)))
        << read_or_empty(history_path());
}

TEST_F(TrainFailoverTest, NoFailoverEndsTheRunWhenTheHostIsLost) {
    write_settings("  fallback_hosts: [\"" + standby_spec() + "\"]\n");
    auto run = start_mlt({"ssh", "-o", "ConnectTimeout=2", "train", "m", "--reconnect-timeout", "2",
                          "--no-failover"});
    ASSERT_TRUE(wait_console("m", "waiting"));
    lose_host_a();
    ProcessResult r = run->wait(kTrainTimeout);
    EXPECT_EQ(r.exit_code, 255) << describe(r);
    EXPECT_TRUE(has_text(r.err, "gave up reconnecting")) << describe(r);
    EXPECT_FALSE(path_exists(standby_->remote_dir() + "/.mlt")) << "B was used";
}

TEST_F(TrainFailoverTest, ARemoteDirWipedWhileTheHostAnswersFailsOverToTheStandby) {
    auto run = start_with_a_checkpoint_home();
    ASSERT_TRUE(run);
    lost_port_ = relay_->port();
    wipe_host_a();
    ProcessResult r = run->wait(kTrainTimeout);
    EXPECT_TRUE(has_text(r.err, "its remote dir is gone")) << describe(r);
    EXPECT_FALSE(has_text(r.out + r.err, "took it over")) << describe(r);
    expect_finished_on_b(r, 3);
}

TEST_F(TrainFailoverTest, ARemoteDirWipedWithoutAStandbyEndsSayingSoWithTheRestoreLine) {
    write_settings("");
    auto run = start_mlt({"ssh", "-o", "ConnectTimeout=2", "train", "m", "--reconnect-timeout", "2",
                          "--sync-every", "1"});
    ASSERT_TRUE(run->wait_for_output("waiting", kEffectTimeout)) << run->out() << run->err();
    wipe_host_a();
    ProcessResult r = run->wait(kTrainTimeout);
    EXPECT_EQ(r.exit_code, 1) << describe(r);
    EXPECT_TRUE(has_text(r.err, "holds no job of m any more")) << describe(r);
    EXPECT_TRUE(has_text(r.err, "train m --restore")) << describe(r);
    EXPECT_FALSE(has_text(r.out + r.err, "took it over")) << describe(r);
    EXPECT_FALSE(has_text(r.out + r.err, "\\n")) << "a literal \\n in a message\n" << describe(r);
    const auto runs = history();
    ASSERT_FALSE(runs.empty());
    EXPECT_EQ(runs.back().at("status"), "host lost") << read_or_empty(history_path());
}

TEST_F(TrainFailoverTest, ALostHostThatComesBackDoesNotResumeTheRunThatMovedOn) {
    write_settings("  fallback_hosts: [\"" + standby_spec() + "\"]\n");
    auto run =
        start_mlt({"ssh", "-o", "ConnectTimeout=2", "train", "m", "--reconnect-timeout", "2"});
    ASSERT_TRUE(run->wait_for_output("waiting", kEffectTimeout)) << run->out() << run->err();
    // A is cut off (its job killed as a restart would), but keeps its disk.
    const long pgid = job_pgid("m");
    ASSERT_GT(pgid, 0);
    const int port = relay_->port();
    relay_.reset();
    ASSERT_EQ(::kill(static_cast<pid_t>(-pgid), SIGKILL), 0);
    ASSERT_TRUE(wait_group_gone(pgid));
    ProcessResult r = run->wait(kTrainTimeout);
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    const std::string run_id = trim(read_or_empty(standby_job_file("run_id")));
    // A is back, under the same name: its lock still holds attempt 1 of the run.
    relay_ = std::make_unique<FaultRelay>(sshd().port(), port);
    ProcessResult status = mlt({"ssh", "status", "m"});
    EXPECT_TRUE(has_text(status.out, "lost")) << describe(status);
    ProcessResult resumed = mlt({"ssh", "train", "m", "--resume"});
    EXPECT_EQ(resumed.exit_code, 3) << describe(resumed);
    EXPECT_TRUE(has_text(resumed.err, "run " + run_id + " of m continued on "))
        << describe(resumed);
    EXPECT_TRUE(path_exists(job_file("m", "lock"))) << "A's run was touched";
    EXPECT_FALSE(path_exists(job_file("m", "started.2"))) << "a second attempt 2 started on A";
}

// mlt dies (SIGKILL) once the run went on on B: `--resume -h B` finishes it, and its history
// still names attempt 1 on A, so that A, back with its disk, refuses a --resume.
TEST_F(TrainFailoverTest, AResumeOnTheStandbyAfterTheClientDiedKeepsTheLostHostInTheHistory) {
    auto run = start_with_a_checkpoint_home();
    ASSERT_TRUE(run);
    const long pgid = job_pgid("m");
    ASSERT_GT(pgid, 0);
    const int port = relay_->port();
    relay_.reset();  // A is cut off, its job killed, its disk kept
    ASSERT_EQ(::kill(static_cast<pid_t>(-pgid), SIGKILL), 0);
    ASSERT_TRUE(wait_group_gone(pgid));
    ASSERT_TRUE(wait_until([&] { return path_exists(standby_job_file("pid")); }, kTrainTimeout))
        << run->out() << run->err();
    run->signal(SIGKILL);
    run->wait(kEffectTimeout);
    // B's lock names the attempt and where the run came from.
    const std::string lock = read_or_empty(standby_job_file("lock"));
    EXPECT_TRUE(has_text(lock, "attempt=2\nfrom=root@127.0.0.1:" + std::to_string(port) + "\n"))
        << lock;
    ProcessResult r = mlt({"ssh", "-h", standby_spec(), "train", "m", "--resume"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    const auto runs = history();
    ASSERT_FALSE(runs.empty());
    const std::string a = "127.0.0.1:" + std::to_string(port);
    EXPECT_TRUE(has_text(runs.back().at("hosts"), a)) << read_or_empty(history_path());
    EXPECT_TRUE(has_text(r.out, a)) << "the summary forgot A\n" << describe(r);
    relay_ = std::make_unique<FaultRelay>(sshd().port(), port);
    ProcessResult again = mlt({"ssh", "train", "m", "--resume"});
    EXPECT_EQ(again.exit_code, 3) << describe(again);
    EXPECT_FALSE(path_exists(job_file("m", "started.2"))) << "a second attempt 2 started on A";
}

// mlt dies once the run trains on B; A comes back without its disk. A --resume there is
// refused as for a host the run left, never pointed to --restore beside the run on B.
TEST_F(TrainFailoverTest, ALostHostBackWithoutItsDiskRefusesAResumeAndNamesTheStandby) {
    auto run = start_with_a_checkpoint_home();
    ASSERT_TRUE(run);
    lose_host_a();
    ASSERT_TRUE(wait_until([&] { return path_exists(standby_job_file("pid")); }, kTrainTimeout))
        << run->out() << run->err();
    run->signal(SIGKILL);
    run->wait(kEffectTimeout);
    fs::create_directories(remote());
    a_closed_.reset();
    relay_ = std::make_unique<FaultRelay>(sshd().port(), lost_port_);
    ProcessResult r = mlt({"ssh", "train", "m", "--resume"});
    EXPECT_EQ(r.exit_code, 3) << describe(r);
    EXPECT_TRUE(has_text(r.err, "continued on 127.0.0.1:" + std::to_string(standby_->port())) ||
                has_text(r.err, "@127.0.0.1:" + std::to_string(standby_->port())))
        << describe(r);
    EXPECT_FALSE(has_text(r.err, "--restore")) << describe(r);
    EXPECT_FALSE(path_exists(job_file("m", "lock"))) << "A was locked";
}

// A --resume from a machine that has no record of the run (its history elsewhere), of a job
// whose console log has been silent for longer than reconnect_timeout: it warns that the run
// may have been failed over from there; with the record, it does not.
TEST_F(TrainFailoverTest, AResumeOfASilentRunThisMachineDoesNotKnowWarns) {
    write_settings("");
    ProcessResult started = mlt({"ssh", "train", "m", "--no-wait"});
    ASSERT_EQ(started.exit_code, 0) << describe(started);
    const std::string console = job_file("m", "console.log");
    ASSERT_TRUE(
        wait_until([&] { return has_text(read_or_empty(console), "waiting"); }, kEffectTimeout));
    // Two seconds without a line, against a reconnect_timeout of one.
    const auto still = [&] {
        std::error_code ec;
        const auto age = fs::file_time_type::clock::now() - fs::last_write_time(console, ec);
        return !ec && age > std::chrono::milliseconds(2500);
    };
    ASSERT_TRUE(wait_until(still, kEffectTimeout));
    const std::string saved = history_path() + ".elsewhere";
    ASSERT_EQ(::rename(history_path().c_str(), saved.c_str()), 0);
    ProcessResult elsewhere =
        mlt({"ssh", "train", "m", "--resume", "--no-wait", "--reconnect-timeout", "1"});
    EXPECT_EQ(elsewhere.exit_code, 0) << describe(elsewhere);
    EXPECT_TRUE(has_text(elsewhere.err, "has written nothing for")) << describe(elsewhere);
    EXPECT_TRUE(has_text(elsewhere.err, "this machine has no record of it")) << describe(elsewhere);
    ASSERT_EQ(::rename(saved.c_str(), history_path().c_str()), 0);
    ProcessResult here =
        mlt({"ssh", "train", "m", "--resume", "--no-wait", "--reconnect-timeout", "1"});
    EXPECT_EQ(here.exit_code, 0) << describe(here);
    EXPECT_FALSE(has_text(here.err, "has written nothing for")) << describe(here);
    ProcessResult stopped = mlt({"ssh", "stop", "m"});
    EXPECT_EQ(stopped.exit_code, 0) << describe(stopped);
}

// A --resume on a host that holds no job of the run, while checkpoints came home: the hint
// names the --restore command, the way on when the host that ran the job is gone.
TEST_F(TrainFailoverTest, AResumeWhereNoJobIsPointsToRestoreWhenCheckpointsCameHome) {
    write_settings("");
    fs::create_directories(local_logs("m"));
    write_file(local_logs("m") + "/ckpt-3", "weights of epoch 3\n");
    ProcessResult r = mlt({"ssh", "-h", standby_spec(), "train", "m", "--resume"});
    EXPECT_EQ(r.exit_code, 3) << describe(r);
    EXPECT_TRUE(has_text(r.err, "no job of m to resume on ")) << describe(r);
    EXPECT_TRUE(has_text(r.err, "train m --restore")) << describe(r);
    EXPECT_FALSE(path_exists(standby_->remote_dir() + "/.mlt/m/lock")) << "B was locked";
}

// mlt dies (SIGKILL) during its failover, after "looking for a standby host" and before it
// has B's lock (B's link holds the connect). `--resume -h B` continues the failover from the
// local history: run the same run there as attempt 2, from the checkpoint that came home.
TEST_F(TrainFailoverTest, AFailoverCutBeforeTheStandbysLockIsContinuedByResumeOnIt) {
    FaultRelay to_b(standby_->port());
    append_file(default_known_hosts(), "[127.0.0.1]:" + std::to_string(to_b.port()) + " " +
                                           standby_->host_key_type_and_blob() + "\n");
    const std::string b_via_relay =
        sshd().user() + "@127.0.0.1:" + std::to_string(to_b.port()) + "/" + standby_->remote_dir();
    write_settings("  fallback_hosts: [\"" + b_via_relay + "\"]\n");
    auto run = start_mlt({"ssh", "-o", "ConnectTimeout=60", "train", "m", "--reconnect-timeout",
                          "2", "--sync-every", "1"});
    ASSERT_TRUE(run->wait_for_output("waiting", kEffectTimeout)) << run->out() << run->err();
    ASSERT_TRUE(
        wait_until([&] { return path_exists(local_logs("m") + "/ckpt-3"); }, kEffectTimeout))
        << run->out() << run->err();
    to_b.stall();
    lost_port_ = relay_->port();
    lose_host_a();
    ASSERT_TRUE(wait_until([&] { return has_text(run->err(), "looking for a standby host"); },
                           kTrainTimeout))
        << run->out() << run->err();
    run->signal(SIGKILL);
    run->wait(kEffectTimeout);
    ASSERT_FALSE(path_exists(standby_job_file("lock"))) << "B was locked before the kill";
    const std::string run_id = history().back().at("id");
    ProcessResult r = mlt({"ssh", "-h", standby_spec(), "train", "m", "--resume"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(has_text(r.err, "was cut off before it got here")) << describe(r);
    EXPECT_EQ(trim(read_or_empty(standby_job_file("run_id"))), run_id);
    expect_each_epoch_once();
    const auto runs = history();
    EXPECT_EQ(runs.back().at("status"), "success") << read_or_empty(history_path());
    const std::string a = "127.0.0.1:" + std::to_string(lost_port_);
    EXPECT_TRUE(has_text(runs.back().at("hosts"), a)) << read_or_empty(history_path());
}

// mlt dies (SIGKILL) right after its failover chose B and recorded so, before B's lock (held
// there by the test observer). A, back with its disk, refuses a --resume, names B and marks
// its lock as moved, so that a machine without this history is refused too; `--resume -h B`
// continues the failover as attempt 2, and every epoch is trained once.
TEST_F(TrainFailoverTest, AFailoverCutAfterItChoseItsStandbyLeavesTheLostHostRefusingAResume) {
    const int port = cut_after_the_standby_was_chosen();
    ASSERT_GT(port, 0);
    ASSERT_FALSE(path_exists(standby_job_file("lock"))) << "B was locked before the kill";
    const std::string run_id = history().back().at("id");
    EXPECT_EQ(history().back().at("status"), "failing over") << read_or_empty(history_path());
    a_closed_.reset();
    relay_ = std::make_unique<FaultRelay>(sshd().port(), port);  // A is back
    const std::string b = "127.0.0.1:" + std::to_string(standby_->port());
    ProcessResult on_a = mlt({"ssh", "train", "m", "--resume"});
    EXPECT_EQ(on_a.exit_code, 3) << describe(on_a);
    EXPECT_TRUE(has_text(on_a.err, "run " + run_id + " of m continued on ")) << describe(on_a);
    EXPECT_TRUE(has_text(on_a.err, b)) << describe(on_a);
    EXPECT_TRUE(has_text(read_or_empty(job_file("m", "lock")), "moved=")) << "A's lock unmarked";
    // A machine that never saw the failover: the lock's mark refuses it.
    const std::string saved = history_path() + ".elsewhere";
    ASSERT_EQ(::rename(history_path().c_str(), saved.c_str()), 0);
    ProcessResult elsewhere = mlt({"ssh", "train", "m", "--resume"});
    EXPECT_EQ(elsewhere.exit_code, 3) << describe(elsewhere);
    EXPECT_TRUE(has_text(elsewhere.err, "continued on ")) << describe(elsewhere);
    ASSERT_EQ(::rename(saved.c_str(), history_path().c_str()), 0);
    EXPECT_FALSE(path_exists(job_file("m", "started.2"))) << "a second attempt 2 started on A";
    ProcessResult on_b = mlt({"ssh", "-h", standby_spec(), "train", "m", "--resume"});
    ASSERT_EQ(on_b.exit_code, 0) << describe(on_b);
    EXPECT_TRUE(has_text(on_b.err, "was cut off before it got here")) << describe(on_b);
    expect_each_epoch_once();
    const auto runs = history();
    EXPECT_EQ(runs.back().at("status"), "success") << read_or_empty(history_path());
    // Each attempt once: 1 on A, 2 on B.
    const std::string attempts = runs.back().at("attempts");
    EXPECT_EQ(count_occurrences(attempts, "\"attempt\":"), 2u) << attempts;
    const size_t first = attempts.find("\"attempt\":1,");
    const size_t at_a = attempts.find("127.0.0.1:" + std::to_string(port) + "\"");
    const size_t second = attempts.find("\"attempt\":2,");
    const size_t at_b = attempts.find(b + "\"");
    EXPECT_TRUE(first < at_a && at_a < second && second < at_b && at_b != std::string::npos)
        << attempts;
}

// The same cut, and A stays down: a --resume with A's command line goes to B, where the
// failover was going, and finishes the run there; every epoch once.
TEST_F(TrainFailoverTest, AResumeOnTheLostHostDownContinuesTheCutFailoverOnTheStandby) {
    const int port = cut_after_the_standby_was_chosen();
    ASSERT_GT(port, 0);
    ProcessResult r = mlt(
        {"ssh", "-o", "ConnectTimeout=2", "train", "m", "--resume", "--reconnect-timeout", "2"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(has_text(r.err, "was lost: resuming it there")) << describe(r);
    EXPECT_TRUE(has_text(r.err, "was cut off before it got here")) << describe(r);
    expect_each_epoch_once();
    const auto runs = history();
    EXPECT_EQ(runs.back().at("status"), "success") << read_or_empty(history_path());
    EXPECT_TRUE(has_text(runs.back().at("hosts"), "127.0.0.1:" + std::to_string(port)))
        << read_or_empty(history_path());
}

// A limit reached while the run switches hosts: the standby is locked and pushed to, but no
// job starts there; the run ends with exit 5 and names the --restore command.
TEST_F(TrainFailoverTest, ALimitReachedDuringTheFailoverStartsNoJobOnTheStandby) {
    // A costs next to nothing, B $100 a second: the limit falls while B is taken.
    write_settings("  fallback_hosts: [\"" + standby_spec() + " price_per_hour=360000\"]\n");
    const std::string hold = sshd().dir() + "/hold";
    env().set("MLT_TEST_HOLD", "taking the job lock#2:" + hold);
    auto run = start_mlt({"ssh", "-o", "ConnectTimeout=2", "train", "m", "--reconnect-timeout", "2",
                          "--sync-every", "1", "--price", "0.36", "--max-cost", "100"});
    ASSERT_TRUE(run->wait_for_output("waiting", kEffectTimeout)) << run->out() << run->err();
    ASSERT_TRUE(
        wait_until([&] { return path_exists(local_logs("m") + "/ckpt-3"); }, kEffectTimeout))
        << run->out() << run->err();
    lose_host_a();
    ASSERT_TRUE(wait_until([&] { return path_exists(hold); }, kTrainTimeout))
        << run->out() << run->err();
    // Two seconds on B: $200, past the limit, before its lock is taken.
    const auto held = std::chrono::steady_clock::now();
    wait_until([&] { return std::chrono::steady_clock::now() - held > std::chrono::seconds(2); },
               kEffectTimeout);
    ::unlink(hold.c_str());
    ProcessResult r = run->wait(kTrainTimeout);
    EXPECT_EQ(r.exit_code, 5) << describe(r);
    EXPECT_TRUE(has_text(r.err, "not starting the job of m")) << describe(r);
    EXPECT_FALSE(path_exists(standby_job_file("pid"))) << "a job started on B";
    EXPECT_FALSE(path_exists(standby_job_file("lock"))) << "B's lock was not released";
    EXPECT_TRUE(has_text(r.out, "train m --restore")) << describe(r);
    const auto runs = history();
    ASSERT_FALSE(runs.empty());
    EXPECT_EQ(runs.back().at("status"), "limit") << read_or_empty(history_path());
}

// mlt dies (SIGKILL) while the job trains on A; then A is lost. A --resume of the run on A
// waits for it as for a lost link, then fails over to the standby and finishes there.
TEST_F(TrainFailoverTest, AResumeOnALostHostWaitsThenFailsOver) {
    auto run = start_with_a_checkpoint_home();
    ASSERT_TRUE(run);
    run->signal(SIGKILL);
    run->wait(kEffectTimeout);
    const int resumed = lose_host_a();
    ProcessResult r = mlt(
        {"ssh", "-o", "ConnectTimeout=2", "train", "m", "--resume", "--reconnect-timeout", "2"});
    EXPECT_TRUE(has_text(r.err, "waiting for it as for a lost link")) << describe(r);
    expect_finished_on_b(r, resumed);
}

// checkpoints (issue 44) across a failover: the standby starts from the newest whole checkpoint
// that came home (a save that the loss cut never did), and its guard goes on from what A's
// ledger knew: e1 stays there as the best by the metric it had on A (without that, e1 and e2
// would get the latest value B's console holds, 0.9, and e4's 0.8 would make e4 the best).
TEST_F(TrainFailoverTest, TheStandbyStartsFromTheNewestWholeCheckpointAndKeepsTheBestByItsMetric) {
    write_shell_model("m",
                      "cd \"$MLT_LOG_DIR\" && mkdir -p ck\n"
                      "if [ -z \"$MLT_ATTEMPT\" ]; then\n"
                      "  for i in 1 2; do\n"
                      "    if [ $i = 1 ]; then v=0.5; else v=0.9; fi\n"
                      "    echo \"epoch $i val_loss=$v\"\n"
                      // The guard has read the line: the save is after it (a checkpoint gets
                      // the value the guard last read when it first sees it).
                      "    until awk -F '\\t' -v v=$v '$3 == \"m\" && $2 == v { f = 1 } END "
                      "{ exit !f }' \"$MLT_JOB_DIR/ckpt.metric/rules.state\" 2>/dev/null; do "
                      "sleep 0.05; done\n"
                      "    printf 'weights %s\\n' $i > ck/e$i.pt; : > ck/e$i.pt.done\n"
                      "    until grep -q \"^ck/e$i.pt\t.*\t1\t\" \"$MLT_JOB_DIR/ckpt.ledger\" "
                      "2>/dev/null; do sleep 0.05; done\n"
                      "  done\n"
                      "  printf 'weig' > ck/e3.pt\n"  // the save the loss of the host cuts
                      "  echo waiting; w=0; while [ $w -lt 2400 ]; do sleep 0.05; w=$((w+1)); "
                      "done; exit 9\n"
                      "fi\n"
                      "echo \"attempt $MLT_ATTEMPT from [$MLT_CHECKPOINT]\"\n"
                      "echo 'epoch 4 val_loss=0.8'\n"
                      "printf 'weights 4\\n' > ck/e4.pt; : > ck/e4.pt.done\n");
    write_model_settings("m",
                         "ssh:\n  train_cmd: \"sh {spec}\"\n  checkpoints:\n"
                         "    pattern: 'ck/*.pt'\n    keep_last: 1\n    settle_seconds: 300\n"
                         "    marker: '{name}.done'\n"
                         "    keep_best: {metric: 'val_loss=([0-9.]+)', mode: min, n: 1}\n");
    write_settings("  fallback_hosts: [\"" + standby_spec() + "\"]\n");
    auto run = start_mlt({"ssh", "-o", "ConnectTimeout=2", "train", "m", "--reconnect-timeout", "2",
                          "--sync-every", "1"});
    const std::string local_ck = local_logs("m") + "/ck";
    ASSERT_TRUE(run->wait_for_output("waiting", kEffectTimeout)) << run->out() << run->err();
    ASSERT_TRUE(wait_until([&] { return path_exists(local_ck + "/e2.pt"); }, kEffectTimeout))
        << run->out() << run->err();
    lose_host_a();
    ProcessResult r = run->wait(kTrainTimeout);
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    const std::string b_ck = standby_->remote_dir() + "/logs/m/ck";
    EXPECT_TRUE(has_text(r.out, "attempt 2 from [" + b_ck + "/e2.pt]")) << r.out;
    const auto pt = [](const std::string& dir) {
        std::vector<std::string> names;
        for (const char* n : {"e1.pt", "e2.pt", "e3.pt", "e4.pt"})
            if (path_exists(dir + "/" + n)) names.push_back(n);
        return names;
    };
    const std::vector<std::string> kept{"e1.pt", "e4.pt"};
    EXPECT_EQ(pt(b_ck), kept) << read_or_empty(standby_job_file("ckpt.ledger"));
    EXPECT_EQ(pt(local_ck), kept) << r.out;
    EXPECT_EQ(read_or_empty(local_ck + "/e1.pt"), "weights 1\n");
}

TEST_F(TrainFailoverTest, RestorePushesTheLocalLogDirBeforeTheStart) {
    write_settings("");
    fs::create_directories(local_logs("m"));
    write_file(local_logs("m") + "/ckpt-4", "weights of epoch 4\n");
    write_file(local_logs("m") + "/ckpt-5", "weights of epoch 5\n");
    ProcessResult r = mlt({"ssh", "train", "m", "--restore"});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    const std::string console = read_or_empty(local_console("m"));
    EXPECT_EQ(count_lines(console, "attempt 1 resumes after epoch 5"), 1u) << console;
    EXPECT_EQ(count_lines(console, "epoch 6"), 1u) << console;
    EXPECT_EQ(read_or_empty(remote() + "/logs/m/ckpt-4"), "weights of epoch 4\n");
    EXPECT_FALSE(path_exists(job_file("m", "restore"))) << "the pushed files were not moved";
    EXPECT_EQ(read_or_empty(local_logs("m") + "/ckpt-6"), "weights of epoch 6\n");
}

TEST_F(TrainFailoverTest, RestoreWithNothingToPushIsRefusedBeforeAnyRemoteAction) {
    write_settings("");
    ProcessResult r = mlt({"ssh", "train", "m", "--restore"});
    EXPECT_EQ(r.exit_code, 2) << describe(r);
    EXPECT_TRUE(has_text(r.err, "--restore: nothing to push")) << describe(r);
    EXPECT_FALSE(path_exists(remote() + "/.mlt")) << "something was done remotely";
}

}  // namespace
}  // namespace mlt_test
