// watch.stop_when against the real sshd: a rule on the console log stops the job (its whole
// process group, as `stop` does), which is still collected and runs shutdown_cmds; mlt names
// the rule and the line, records "rule" in the history and exits 6. A rule that cannot be
// used is exit 2 before anything remote.
#include <gtest/gtest.h>

#include <csignal>
#include <string>

#include "harness/expect.h"
#include "harness/fault_relay.h"
#include "harness/files.h"
#include "harness/test_sshd.h"
#include "harness/train_fixture.h"
#include "harness/train_process.h"

namespace mlt_test {
namespace {

// Records its process group's pids, writes a partial result, prints LINES (a shell list of
// words, one line each, 20 ms apart), then trains on "for two minutes" (bounded, so that a
// rule that does not stop it fails the test instead of hanging it).
std::string model_printing(const std::string& lines) {
    return "mkdir -p results && echo partial > results/partial.txt\n"
           "sleep 120 &\n"
           "echo $! >> pids.txt\n"
           "echo $$ >> pids.txt\n"
           "for l in " +
           lines +
           "; do echo \"$l\"; sleep 0.02; done\n"
           "echo 'still training'\n"
           "wait\n";
}

class TrainWatchTest : public TrainTest {
  protected:
    void set_up(const std::string& lines, const std::string& rules) {
        write_user_settings();
        write_shell_model("watched", model_printing(lines));
        write_model_settings("watched",
                             "ssh:\n  train_cmd: \"sh {spec}\"\n"
                             "  download_files: [\"results/**\"]\n"
                             "  shutdown_cmds: [\"touch shutdown_ran\"]\n"
                             "  watch:\n    stop_when: " +
                                 rules + "\n");
    }
    // A model that records its process group's pids, prints val_loss 0.5 (the best), 0.6
    // and 0.7, waits (bounded) for `go` in the remote dir, prints 0.8 and trains on "for two
    // minutes"; a plateau rule with patience 3 watches it. `extra_settings`: more ssh lines.
    void write_plateau_model(const std::string& name, const std::string& extra_settings = {}) {
        write_shell_model(name,
                          "sleep 120 &\n"
                          "echo $! >> pids.txt\n"
                          "echo $$ >> pids.txt\n"
                          "echo val_loss=0.5; echo val_loss=0.6; echo val_loss=0.7\n"
                          "i=0; while [ ! -e \"$MLT_REMOTE_DIR/go\" ] && [ $i -lt 1200 ]; do "
                          "sleep 0.1; i=$((i+1)); done\n"
                          "echo val_loss=0.8\n"
                          "wait\n");
        write_model_settings(
            name, "ssh:\n  train_cmd: \"sh {spec}\"\n" + extra_settings +
                      "  watch: {stop_when: [{metric: 'val_loss=([0-9.]+)', patience: 3}]}\n");
    }
    // What a rule's stop leaves: exit 6, the rule and its line named, the job's processes
    // gone, its results here, shutdown_cmds run, the lock released, the history's record.
    void expect_rule_stop(const ProcessResult& r, const std::string& rule,
                          const std::string& line) {
        EXPECT_EQ(r.exit_code, 6) << describe(r) << job_state("watched");
        const std::string all = r.out + r.err;
        // The host's guard decides and stops the job; mlt names the rule and the line.
        EXPECT_TRUE(
            has_text(all, "watch.stop_when rule " + rule + " (line: '" + line + "'; the guard on "))
            << describe(r);
        EXPECT_TRUE(has_text(all, " stopped the job): collecting the results of watched"))
            << describe(r);
        EXPECT_TRUE(wait_pids_gone(remote() + "/pids.txt")) << "the job's group lives on";
        EXPECT_EQ(read_or_empty(project() + "/results/partial.txt"), "partial\n") << describe(r);
        EXPECT_TRUE(path_exists(remote() + "/shutdown_ran")) << describe(r);
        EXPECT_FALSE(path_exists(job_file("watched", "lock"))) << job_state("watched");
        EXPECT_TRUE(has_text(r.out, "(exit 6)")) << describe(r);
        const auto runs = history();
        ASSERT_EQ(runs.size(), 1u) << read_or_empty(history_path());
        EXPECT_EQ(runs.back().at("status"), "rule") << read_or_empty(history_path());
    }
};

// loss=nan at step 30: the rule fires on that line, and the job, which would train on for
// two minutes, is stopped; every line it printed is shown and kept once.
TEST_F(TrainWatchTest, ANanRuleStopsTheJobAtItsLineCollectsAndExits6) {
    std::string steps;
    for (int i = 1; i < 30; ++i) steps += " step-" + std::to_string(i) + "-loss=0.5";
    set_up(steps + " step-30-loss=nan", "['loss[=:] *nan', 'CUDA out of memory']");
    const ProcessResult r = mlt({"ssh", "train", "watched"});
    expect_rule_stop(r, "'loss[=:] *nan'", "step-30-loss=nan");
    EXPECT_EQ(lines_starting(r.out, "step-").size(), 30u) << describe(r);
    EXPECT_EQ(
        lines_starting(read_file(local_logs("watched") + "/mltk_ssh_train_watched.log"), "step-")
            .size(),
        30u);
}

// A plateau rule: val_loss 0.9, 0.8 (best), then 3 values that are no better: it fires on
// the third of them.
TEST_F(TrainWatchTest, APlateauRuleFiresAfterPatienceValuesWithoutANewBest) {
    set_up("val_loss=0.9 val_loss=0.8 val_loss=0.85 val_loss=0.8 val_loss=0.81",
           "[{metric: 'val_loss=([0-9.]+)', mode: min, patience: 3}]");
    const ProcessResult r = mlt({"ssh", "train", "watched"});
    expect_rule_stop(r, "plateau of 'val_loss=([0-9.]+)' (min, patience 3)", "val_loss=0.81");
}

// Each line is decided once across a --resume: the first mlt sees val_loss 0.5 (the best), 0.6
// and 0.7 and is sent SIGTERM (it leaves the job running); the host's guard keeps the plateau
// rule's count, so the one value after it, 0.8, is the third without a new best and fires the
// rule. A count that started again would take 0.8 for a first best, and the job would train on
// for two minutes.
TEST_F(TrainWatchTest, APlateauGoesOnCountingAcrossAResume) {
    write_user_settings();
    write_plateau_model("resumed");
    auto first = start_mlt({"ssh", "train", "resumed"});
    ASSERT_TRUE(first->wait_for_output("val_loss=0.7", kTrainTimeout)) << first->err();
    first->signal(SIGTERM);
    const ProcessResult left = first->wait(kTrainTimeout);
    ASSERT_EQ(left.exit_code, 128 + SIGTERM) << describe(left);
    write_file(remote() + "/go", "");
    const ProcessResult r = mlt({"ssh", "train", "resumed", "--resume"});
    EXPECT_EQ(r.exit_code, 6) << describe(r) << job_state("resumed");
    EXPECT_TRUE(has_text(r.out + r.err, "(line: 'val_loss=0.8'; the guard on ")) << describe(r);
    EXPECT_FALSE(has_text(r.out, "val_loss=0.5")) << "a line shown twice";
    EXPECT_TRUE(wait_pids_gone(remote() + "/pids.txt")) << "the job's group lives on";
}

// Each line is decided once across a reconnect too: every connection drops (through a relay)
// after val_loss 0.5 (the best), 0.6 and 0.7; the guard on the host counts on, so the one
// value after the cut, 0.8, is the third without a new best and fires the rule, and mlt
// reconnects, follows on from its local copy (each line shown once) and reports it.
TEST_F(TrainWatchTest, APlateauGoesOnCountingAcrossAReconnect) {
    write_user_settings();
    write_plateau_model("cut", "  reconnect_timeout: 60\n");
    FaultRelay relay(sshd().port());
    append_file(default_known_hosts(), "[127.0.0.1]:" + std::to_string(relay.port()) + " " +
                                           sshd().host_key_type_and_blob() + "\n");
    const std::string via = sshd().user() + "@127.0.0.1:" + std::to_string(relay.port());
    auto run = start_mlt({"ssh", "-h", via, "train", "cut"});
    ASSERT_TRUE(run->wait_for_output("val_loss=0.7", kTrainTimeout)) << run->err();
    relay.cut();
    write_file(remote() + "/go", "");
    const ProcessResult r = run->wait(kTrainTimeout);
    EXPECT_EQ(r.exit_code, 6) << describe(r) << job_state("cut");
    EXPECT_GE(relay.cuts(), 1u);
    EXPECT_TRUE(has_text(r.err, "reconnecting")) << describe(r);
    EXPECT_TRUE(has_text(r.out + r.err, "(line: 'val_loss=0.8'; the guard on ")) << describe(r);
    for (const char* value : {"0.5", "0.6", "0.7", "0.8"})
        EXPECT_EQ(lines_starting(r.out, std::string("val_loss=") + value).size(), 1u)
            << value << "\n"
            << describe(r);
    EXPECT_TRUE(wait_pids_gone(remote() + "/pids.txt")) << "the job's group lives on";
}

// With no mlt attached the host's guard decides alone: a --no-wait run whose log reaches the
// nan rule is stopped on the host, and a later --resume collects it and exits 6.
TEST_F(TrainWatchTest, ARuleStopsTheJobOnTheHostWithNoMltAttached) {
    set_up("step-1-loss=0.5 step-2-loss=nan", "['CUDA out of memory', 'loss[=:] *nan']");
    const ProcessResult started = mlt({"ssh", "train", "watched", "--no-wait"});
    ASSERT_EQ(started.exit_code, 0) << describe(started);
    ASSERT_TRUE(wait_until([&] { return path_exists(job_file("watched", "exit_status")); },
                           std::chrono::seconds(60)))
        << job_state("watched");
    EXPECT_EQ(read_or_empty(job_file("watched", "guard.stop")), "rule 1\tstep-2-loss=nan\n")
        << job_state("watched");
    EXPECT_TRUE(wait_pids_gone(remote() + "/pids.txt")) << "the job's group lives on";
    const ProcessResult shown = mlt({"ssh", "status", "watched"});
    EXPECT_TRUE(has_text(shown.out,
                         "stopped by the host's guard: watch.stop_when rule #2 (line: "
                         "'step-2-loss=nan')"))
        << describe(shown);
    const ProcessResult r = mlt({"ssh", "train", "watched", "--resume"});
    expect_rule_stop(r, "'loss[=:] *nan'", "step-2-loss=nan");
}

// The same for a plateau rule when the mlt that followed the job was killed (kill -9) after
// val_loss 0.5, 0.6 and 0.7: the guard counts 0.8 as the third value without a new best.
TEST_F(TrainWatchTest, APlateauStopsTheJobOnTheHostAfterTheClientWasKilled) {
    write_user_settings();
    write_plateau_model("killed");
    auto first = start_mlt({"ssh", "train", "killed"});
    ASSERT_TRUE(first->wait_for_output("val_loss=0.7", kTrainTimeout)) << first->err();
    first->signal(SIGKILL);
    first->wait(kTrainTimeout);
    write_file(remote() + "/go", "");
    ASSERT_TRUE(wait_until([&] { return path_exists(job_file("killed", "exit_status")); },
                           std::chrono::seconds(60)))
        << job_state("killed");
    EXPECT_EQ(read_or_empty(job_file("killed", "guard.stop")), "rule 0\tval_loss=0.8\n")
        << job_state("killed");
    const ProcessResult r = mlt({"ssh", "train", "killed", "--resume"});
    EXPECT_EQ(r.exit_code, 6) << describe(r) << job_state("killed");
    EXPECT_TRUE(has_text(r.out + r.err,
                         "plateau of 'val_loss=([0-9.]+)' (min, patience 3) (line: "
                         "'val_loss=0.8'; the guard on "))
        << describe(r);
    EXPECT_TRUE(wait_pids_gone(remote() + "/pids.txt")) << "the job's group lives on";
}

// A job that ends by itself before any rule fires: its own exit status, no stop.
TEST_F(TrainWatchTest, ARuleThatNeverFiresChangesNothing) {
    write_user_settings();
    write_shell_model("calm", "echo 'loss=0.1'\necho done\n");
    write_model_settings("calm", "ssh:\n  train_cmd: \"sh {spec}\"\n  watch: {stop_when: [nan]}\n");
    const ProcessResult r = mlt({"ssh", "train", "calm"});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_FALSE(has_text(r.out + r.err, "watch.stop_when")) << describe(r);
}

// A rule that cannot be used: exit 2 with its place, and nothing remote happened.
TEST_F(TrainWatchTest, ABadRuleIsExit2BeforeAnythingRemote) {
    set_up("x", "['loss=(nan']");
    const ProcessResult r = mlt({"ssh", "train", "watched"});
    EXPECT_EQ(r.exit_code, 2) << describe(r);
    EXPECT_TRUE(has_text(r.err, "ssh.watch.stop_when[0] is no usable rule: not a valid regex"))
        << describe(r);
    EXPECT_FALSE(path_exists(remote() + "/.mlt")) << "something ran remotely";
}

// A fake nvidia-smi on the control shell's PATH (the remote home's .bashrc, which bash reads
// for sshd): two GPUs, idle for its first `idle_calls` calls, then busy (80 % and 90 %).
class TrainGpuWatchTest : public TrainWatchTest {
  protected:
    void fake_nvidia_smi(int idle_calls) {
        const std::string bin = sshd().dir() + "/fakebin";
        make_dir(bin, 0755);
        write_file(bin + "/nvidia-smi",
                   "#!/bin/sh\n"
                   "c=" +
                       sshd().dir() +
                       "/smi.count\n"
                       "n=$(($(cat \"$c\" 2>/dev/null || echo 0) + 1)); echo $n > \"$c\"\n"
                       "if [ $n -le " +
                       std::to_string(idle_calls) +
                       " ]; then\n"
                       "  echo '0, 100, 81920'; echo '5, 200, 81920'\n"
                       "else\n"
                       "  echo '80, 5000, 81920'; echo '90, 6000, 81920'\n"
                       "fi\n",
                   0755);
        write_file(sshd().remote_home() + "/.bashrc", "export PATH=\"" + bin + ":$PATH\"\n");
    }
    void model(const std::string& body, const std::string& watch) {
        write_user_settings();
        write_shell_model("gpu", body);
        write_model_settings("gpu",
                             "ssh:\n  train_cmd: \"sh {spec}\"\n"
                             "  shutdown_cmds: [\"touch shutdown_ran\"]\n"
                             "  watch: " +
                                 watch + "\n");
    }
    std::vector<JsonRecord> samples() const {
        std::vector<JsonRecord> out;
        for (const auto& line :
             lines_starting(read_or_empty(local_logs("gpu") + "/mlt-metrics.jsonl"), "{"))
            out.push_back(parse_json_record(line));
        return out;
    }
};

// Samples every second while the job prints for about 8 s: they land in mlt-metrics.jsonl
// (both GPUs, load, free disk), the summary gives the mean and peak GPU use, and the host's
// guard warns of the idle start once in the console log (idle_gpu_minutes 0.02: 1.2 s; 4 idle
// samples, each in a later second of the remote clock, span 2 s at least) without stopping the
// job. The guard takes the samples; the follow relays them, each once.
TEST_F(TrainGpuWatchTest, SamplesLandInTheMetricsFileAndAnIdleGpuWarnsOnce) {
    fake_nvidia_smi(4);
    model("i=0; while [ $i -lt 80 ]; do echo step $i; i=$((i+1)); sleep 0.1; done\n",
          "{every: 1, idle_gpu_minutes: 0.02}");
    const ProcessResult r = mlt({"ssh", "train", "gpu"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    const auto got = samples();
    ASSERT_GE(got.size(), 3u) << read_or_empty(local_logs("gpu") + "/mlt-metrics.jsonl");
    for (const auto& s : got) {
        EXPECT_TRUE(has_text(s.at("gpus"), "\"mem_total_mib\":81920")) << s.at("gpus");
        EXPECT_TRUE(s.count("load1") && s.count("disk_free_kib")) << s.at("gpus");
        EXPECT_FALSE(s.at("run_id").empty());
    }
    EXPECT_TRUE(has_text(got.front().at("gpus"), "\"util\":0")) << got.front().at("gpus");
    EXPECT_TRUE(has_text(got.back().at("gpus"), "\"util\":90")) << got.back().at("gpus");
    EXPECT_EQ(lines_starting(r.out, "mlt: every GPU was under 10 % for ").size(), 1u)
        << describe(r);
    for (size_t i = 1; i < got.size(); ++i)
        EXPECT_LT(std::stoll(got[i - 1].at("time")), std::stoll(got[i].at("time")))
            << "a sample recorded twice";
    EXPECT_TRUE(has_text(r.out, "  GPU use: mean ")) << describe(r);
    EXPECT_TRUE(has_text(r.out, ", peak 90 % over ")) << describe(r);
    EXPECT_EQ(lines_starting(r.out, "step ").size(), 80u) << "the log is shown whole";
    // `status` shows the run's last sample.
    const ProcessResult st = mlt({"ssh", "status", "gpu"});
    ASSERT_EQ(st.exit_code, 0) << describe(st);
    EXPECT_TRUE(has_text(st.out, "last sample (")) << describe(st);
    EXPECT_TRUE(has_text(st.out, "GPU 80% 4.9/80.0 GiB, 90% 5.9/80.0 GiB, load ")) << describe(st);
}

// An idle GPU with stop_idle: the host's guard stops the job, which ends as a limit (exit 5),
// collected, and shutdown_cmds run.
TEST_F(TrainGpuWatchTest, AnIdleGpuStopsTheJobAsALimitWhenAsked) {
    fake_nvidia_smi(1000000);
    model("sleep 120 &\necho $! >> pids.txt\necho $$ >> pids.txt\necho waiting\nwait\n",
          "{every: 1, idle_gpu_minutes: 0.02, stop_idle: true}");
    const ProcessResult r = mlt({"ssh", "train", "gpu"});
    EXPECT_EQ(r.exit_code, 5) << describe(r);
    EXPECT_TRUE(has_text(r.out + r.err, "was under 10 % for ")) << describe(r);
    EXPECT_TRUE(has_text(r.out + r.err, "the guard stopped the job")) << describe(r);
    EXPECT_TRUE(wait_pids_gone(remote() + "/pids.txt")) << "the job's group lives on";
    EXPECT_TRUE(path_exists(remote() + "/shutdown_ran")) << describe(r);
    const auto runs = history();
    ASSERT_EQ(runs.size(), 1u);
    EXPECT_EQ(runs.back().at("status"), "limit");
}

// The same with no mlt attached (--no-wait): the host's guard samples the host, stops the job,
// records why, and a later --resume collects the run and ends it as a limit (exit 5).
TEST_F(TrainGpuWatchTest, AnIdleGpuIsStoppedOnTheHostWithNoMltAttached) {
    fake_nvidia_smi(1000000);
    model("sleep 120 &\necho $! >> pids.txt\necho $$ >> pids.txt\necho waiting\nwait\n",
          "{every: 1, idle_gpu_minutes: 0.02, stop_idle: true}");
    const ProcessResult started = mlt({"ssh", "train", "gpu", "--no-wait"});
    ASSERT_EQ(started.exit_code, 0) << describe(started);
    ASSERT_TRUE(wait_until([&] { return path_exists(job_file("gpu", "exit_status")); },
                           std::chrono::seconds(60)))
        << job_state("gpu");
    EXPECT_EQ(read_or_empty(job_file("gpu", "guard.stop")).rfind("idle ", 0), 0u)
        << job_state("gpu");
    EXPECT_TRUE(wait_pids_gone(remote() + "/pids.txt")) << "the job's group lives on";
    EXPECT_TRUE(has_text(read_or_empty(job_file("gpu", "samples")), "gpu=0,100,81920;5,200,81920"))
        << job_state("gpu");
    const ProcessResult r = mlt({"ssh", "train", "gpu", "--resume"});
    EXPECT_EQ(r.exit_code, 5) << describe(r);
    EXPECT_TRUE(has_text(r.out + r.err, "was under 10 % for ")) << describe(r);
    EXPECT_TRUE(path_exists(remote() + "/shutdown_ran")) << describe(r);
    ASSERT_EQ(history().size(), 1u);
    EXPECT_EQ(history().back().at("status"), "limit");
}

// A host without nvidia-smi: samples without GPUs (the job runs 2.5 s: a sample from the
// second after its start), no GPU line in the summary, and the idle rule never fires.
TEST_F(TrainGpuWatchTest, AHostWithoutNvidiaSmiHasNoGpuColumnAndNothingFails) {
    model("sleep 2.5\necho trained\n", "{every: 1, idle_gpu_minutes: 0.01, stop_idle: true}");
    const ProcessResult r = mlt({"ssh", "train", "gpu"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    const auto got = samples();
    ASSERT_FALSE(got.empty());
    EXPECT_EQ(got.front().at("gpus"), "[]");
    EXPECT_FALSE(has_text(r.out, "GPU use")) << describe(r);
}

}  // namespace
}  // namespace mlt_test
