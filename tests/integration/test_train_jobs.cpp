// The remote job protocol as users drive it: --no-wait/--resume, conflicts (exit 3),
// --force, stop, status, logs, download, and two models in one remote dir.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "harness/expect.h"
#include "harness/files.h"
#include "harness/mlt_env.h"
#include "harness/process.h"
#include "harness/train_fixture.h"

namespace mlt_test {
namespace {

constexpr int kExitConflict = 3;

const char* const kExampleSidecar =
    "ssh:\n"
    "  train_cmd: \"/usr/bin/python3 {spec}\"\n"
    "  shutdown_cmds: [\"echo shutdown >> shutdown.log\"]\n";

// A shell "model" that prints, then waits (bounded: 20 s) for the file `gate` in the remote
// dir, then writes a small archive and a log file, and prints again.
std::string gated_model(const std::string& tag) {
    return "echo '" + tag +
           " before the gate'\n"
           "i=0; while [ ! -f gate ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done\n"
           "[ -f gate ] || { echo 'gate never opened' >&2; exit 9; }\n"
           "mkdir -p \"$MLT_LOG_DIR\" && echo '" +
           tag +
           " log' > \"$MLT_LOG_DIR/train.log\"\n"
           "printf '" +
           tag + " weights' > " + tag +
           ".w && /usr/bin/python3 -m zipfile -c "
           "\"$MLT_ARCHIVE\" " +
           tag + ".w && rm " + tag +
           ".w\n"
           "echo '" +
           tag + " after the gate'\n";
}

// A shell "model" that starts a child `sleep`, records both pids in pids.txt (remote dir)
// and waits; with the argument `quick` it only prints and succeeds.
const char* const kBlockingModel =
    "if [ \"$1\" = quick ]; then echo 'quick run'; exit 0; fi\n"
    "sleep 1000 &\n"
    "echo $! >> pids.txt\n"
    "echo $$ >> pids.txt\n"
    "echo 'blocking'\n"
    "wait\n";

class TrainJobsTest : public TrainTest {
  protected:
    void SetUp() override {
        TrainTest::SetUp();
        write_user_settings();
    }
    // Writes a shell model trained with `sh {spec}`, with a shutdown marker.
    void shell_model(const std::string& stem, const std::string& script) const {
        write_shell_model(stem, script);
        write_model_settings(stem,
                             "ssh:\n  train_cmd: \"sh {spec}\"\n"
                             "  shutdown_cmds: [\"echo shutdown >> shutdown-" +
                                 stem + ".log\"]\n");
    }
    void open_gate() const { write_file(remote() + "/gate", ""); }
    // Another machine: a local dir without the model specs; the same user settings and key.
    std::string elsewhere() const { return sshd().dir() + "/elsewhere"; }
    // Runs `mlt args...` in elsewhere() (as mlt() runs in the project dir).
    ProcessResult mlt_elsewhere(const std::vector<std::string>& args) const {
        make_dir(elsewhere(), 0755);
        std::vector<std::string> argv = {
            "/bin/sh", "-c", "cd \"$1\" && shift && exec \"$@\"", "sh", elsewhere(), mlt_binary()};
        argv.insert(argv.end(), args.begin(), args.end());
        return env().run(argv, kTrainTimeout);
    }
    // Success when stderr says once that the spec of `model` is not here.
    static ::testing::AssertionResult noted_no_spec(const ProcessResult& r,
                                                    const std::string& model) {
        const std::string note = "mlt: note: model spec " + model + " not found here";
        if (count_occurrences(r.err, note) == 1) return ::testing::AssertionSuccess();
        return ::testing::AssertionFailure() << "not once '" << note << "'\n" << describe(r);
    }
    // The `mlt ...` command that --no-wait output `out` tells the user to run later, as mlt
    // arguments; empty when there is none.
    static std::vector<std::string> resume_hint(const std::string& out) {
        for (const auto& line : split_lines(out)) {
            const auto at = line.find("mlt ssh");
            if (line.find("--resume") == std::string::npos || at == std::string::npos) continue;
            auto fields = split_fields(line.substr(at));
            fields.erase(fields.begin());
            return fields;
        }
        return {};
    }
    // Success when the hint has every word of `needed` (the connection options the user
    // gave), so that running it reaches the same job.
    static ::testing::AssertionResult hint_has(const std::vector<std::string>& hint,
                                               const std::vector<std::string>& needed) {
        std::string text;
        for (const auto& w : hint) text += w + " ";
        for (const auto& w : needed) {
            if (std::find(hint.begin(), hint.end(), w) == hint.end()) {
                return ::testing::AssertionFailure()
                       << "the --resume hint 'mlt " << text << "' lacks '" << w << "'";
            }
        }
        if (std::find(hint.begin(), hint.end(), "HOST") != hint.end()) {
            return ::testing::AssertionFailure()
                   << "the --resume hint 'mlt " << text << "' has a placeholder HOST";
        }
        return ::testing::AssertionSuccess();
    }
    // The files of a job that must not change when mlt refuses to touch it.
    std::string state_snapshot(const std::string& model) const {
        std::string s;
        for (const char* name : {"lock", "pid", "cmd", "run.sh", "exit_status", "console.log"}) {
            s += std::string(name) + "=" + read_or_empty(job_file(model, name)) + "\n";
        }
        return s;
    }
};

TEST_F(TrainJobsTest, NoWaitThenResumeShowsEveryLineOnce) {
    copy_example();
    write_model_settings("logistic_model", kExampleSidecar);
    ProcessResult first =
        mlt({"ssh", "train", "logistic_model", "--no-wait", "--", "--sleep", "0.3"});
    ASSERT_EQ(first.exit_code, 0) << describe(first) << job_state("logistic_model");
    EXPECT_TRUE(path_exists(job_file("logistic_model", "lock")));
    EXPECT_GT(job_pgid("logistic_model"), 1) << job_state("logistic_model");
    // The host came from the settings: the printed command needs no -h.
    std::vector<std::string> hint = resume_hint(first.out);
    ASSERT_FALSE(hint.empty()) << "no command to reattach with\n" << describe(first);
    const ::testing::AssertionResult hint_ok =
        hint_has(hint, {"train", "logistic_model", "--resume"});
    EXPECT_TRUE(hint_ok) << describe(first);
    // Reattach mid-run: part of the log is written before, part after.
    ASSERT_TRUE(wait_console("logistic_model", "epoch 2/8 "));

    // Run the printed command (unless it names a host other than the test server).
    ProcessResult second = mlt(
        hint_ok ? hint : std::vector<std::string>{"ssh", "train", "logistic_model", "--resume"});
    ASSERT_EQ(second.exit_code, 0) << describe(second) << job_state("logistic_model");
    EXPECT_TRUE(each_epoch_once(first.out + second.out, 8));
    const std::string console = read_or_empty(local_console("logistic_model"));
    EXPECT_TRUE(each_epoch_once(console, 8));
    EXPECT_EQ(count_occurrences(console, "training finished"), 1u) << console;
    EXPECT_TRUE(valid_zip(local_archive("logistic_model")));
    EXPECT_TRUE(path_exists(local_logs("logistic_model") + "/checkpoints/checkpoint-0008.json"));
    EXPECT_FALSE(path_exists(job_file("logistic_model", "lock")));
    EXPECT_EQ(read_or_empty(remote() + "/shutdown.log"), "shutdown\n");
}

TEST_F(TrainJobsTest, ResumeAfterTheClientDiedContinuesAtTheLocalCopysEnd) {
    copy_example();
    write_model_settings("logistic_model", kExampleSidecar);
    {
        auto run = start_mlt({"ssh", "train", "logistic_model", "--", "--sleep", "0.3"});
        ASSERT_TRUE(run->wait_for_output("epoch 2/8 ", kEffectTimeout))
            << run->out() << run->err() << job_state("logistic_model");
        run->signal(SIGKILL);  // a client that vanished: no cleanup at all
        ProcessResult killed = run->wait(kEffectTimeout);
        ASSERT_EQ(killed.exit_code, 128 + SIGKILL) << describe(killed);
    }
    const std::string before = read_or_empty(local_console("logistic_model"));
    ASSERT_TRUE(has_text(before, "epoch 2/8 "));
    ASSERT_TRUE(path_exists(job_file("logistic_model", "lock"))) << "the job state must stay";

    ProcessResult second = mlt({"ssh", "train", "logistic_model", "--resume"});
    ASSERT_EQ(second.exit_code, 0) << describe(second) << job_state("logistic_model");
    const std::string console = read_or_empty(local_console("logistic_model"));
    EXPECT_TRUE(each_epoch_once(console, 8));
    ASSERT_EQ(console.compare(0, before.size(), before), 0) << "the local copy was rewritten";
    // What --resume printed is exactly the rest of the log.
    EXPECT_TRUE(has_text(second.out, console.substr(before.size()))) << describe(second);
    EXPECT_EQ(console, read_or_empty(job_file("logistic_model", "console.log")));
    EXPECT_TRUE(valid_zip(local_archive("logistic_model")));
    EXPECT_FALSE(path_exists(job_file("logistic_model", "lock")));
}

TEST_F(TrainJobsTest, RunningAndUncollectedJobsAreRefusedWithExit3) {
    shell_model("gated", gated_model("gated"));
    ProcessResult r = mlt({"ssh", "train", "gated", "--no-wait"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    ASSERT_TRUE(wait_console("gated", "gated before the gate"));
    const long pgid = job_pgid("gated");
    const std::string spec = read_file(project() + "/gated.py");

    // A running job: refused, and neither the job nor the uploaded spec changes.
    std::string snapshot = state_snapshot("gated");
    write_shell_model("gated", spec + "echo 'edited spec'\n");
    r = mlt({"ssh", "train", "gated"});
    EXPECT_EQ(r.exit_code, kExitConflict) << describe(r);
    EXPECT_TRUE(is_one_error_line(r.err));
    EXPECT_TRUE(contains_icase(r.err, "running")) << describe(r);
    EXPECT_TRUE(has_text(r.err, "--resume"));
    EXPECT_TRUE(has_text(r.err, "--force"));
    EXPECT_EQ(state_snapshot("gated"), snapshot);
    EXPECT_EQ(read_or_empty(remote() + "/gated.py"), spec) << "the spec was uploaded anyway";
    EXPECT_FALSE(group_members(pgid).empty()) << "the running job was disturbed";
    EXPECT_FALSE(path_exists(remote() + "/shutdown-gated.log"));

    // The job ends; nobody collected it: refused again, with the same hints.
    open_gate();
    ASSERT_TRUE(wait_job_finished("gated"));
    snapshot = state_snapshot("gated");
    r = mlt({"ssh", "train", "gated"});
    EXPECT_EQ(r.exit_code, kExitConflict) << describe(r);
    EXPECT_TRUE(is_one_error_line(r.err));
    EXPECT_TRUE(contains_icase(r.err, "collect")) << describe(r);
    EXPECT_TRUE(has_text(r.err, "--resume"));
    EXPECT_TRUE(has_text(r.err, "--force"));
    EXPECT_EQ(state_snapshot("gated"), snapshot);
    EXPECT_FALSE(path_exists(local_archive("gated"))) << "collected although refused";
    EXPECT_FALSE(path_exists(remote() + "/shutdown-gated.log"));

    // --resume collects it: its status, archive, logs, shutdown, lock released.
    r = mlt({"ssh", "train", "gated", "--resume"});
    ASSERT_EQ(r.exit_code, 0) << describe(r) << job_state("gated");
    EXPECT_TRUE(has_text(r.out, "gated after the gate"));
    EXPECT_TRUE(has_text(zip_listing(local_archive("gated")), "gated.w"));
    EXPECT_EQ(read_or_empty(local_logs("gated") + "/train.log"), "gated log\n");
    EXPECT_EQ(read_or_empty(remote() + "/shutdown-gated.log"), "shutdown\n");
    EXPECT_FALSE(path_exists(job_file("gated", "lock")));
}

// MLTK's poll: `--resume --no-wait` shows what is new and returns at once while the job
// runs, and collects once it has ended.
TEST_F(TrainJobsTest, ResumeNoWaitPollsThenCollects) {
    shell_model("gated", gated_model("gated"));
    ProcessResult r = mlt({"ssh", "train", "gated", "--no-wait"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    ASSERT_TRUE(wait_console("gated", "gated before the gate"));

    r = mlt({"ssh", "train", "gated", "--resume", "--no-wait"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(has_text(r.out, "gated before the gate")) << describe(r);
    EXPECT_TRUE(contains_icase(r.out + r.err, "still running")) << describe(r);
    EXPECT_TRUE(path_exists(job_file("gated", "lock"))) << "a poll released the lock";
    EXPECT_FALSE(path_exists(local_archive("gated")));

    r = mlt({"ssh", "train", "gated", "--resume", "--no-wait"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_FALSE(has_text(r.out, "gated before the gate")) << "a line shown twice: " << describe(r);

    open_gate();
    ASSERT_TRUE(wait_job_finished("gated"));
    r = mlt({"ssh", "train", "gated", "--resume", "--no-wait"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(has_text(r.out, "gated after the gate")) << describe(r);
    EXPECT_TRUE(has_text(zip_listing(local_archive("gated")), "gated.w"));
    EXPECT_EQ(read_or_empty(remote() + "/shutdown-gated.log"), "shutdown\n");
    EXPECT_FALSE(path_exists(job_file("gated", "lock")));
}

TEST_F(TrainJobsTest, ResumeWithoutAJobIsRefusedWithExit3) {
    shell_model("quick", "echo 'should not run'\n");
    ProcessResult r = mlt({"ssh", "train", "quick", "--resume"});
    EXPECT_EQ(r.exit_code, kExitConflict) << describe(r);
    EXPECT_TRUE(is_one_error_line(r.err));
    EXPECT_TRUE(contains_icase(r.err, "no job")) << describe(r);
    EXPECT_FALSE(path_exists(job_file("quick", "lock"))) << "the probe's lock was left behind";
    EXPECT_FALSE(path_exists(job_file("quick", "pid"))) << "a job was started";
    EXPECT_FALSE(path_exists(remote() + "/quick.py")) << "the spec was uploaded";
    EXPECT_TRUE(history().empty()) << read_or_empty(history_path());
}

TEST_F(TrainJobsTest, ForceStopsTheWholeProcessGroupOfTheRunningJob) {
    shell_model("blocker", kBlockingModel);
    ProcessResult r = mlt({"ssh", "train", "blocker", "--no-wait"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    ASSERT_TRUE(wait_console("blocker", "blocking"));
    const long old_pgid = job_pgid("blocker");
    ASSERT_EQ(split_lines(read_or_empty(remote() + "/pids.txt")).size(), 2u);
    ASSERT_FALSE(group_members(old_pgid).empty());

    r = mlt({"ssh", "train", "blocker", "--force", "--", "quick"});
    ASSERT_EQ(r.exit_code, 0) << describe(r) << job_state("blocker");
    EXPECT_TRUE(contains_icase(r.out, "stopping")) << describe(r);
    EXPECT_TRUE(has_text(r.out, "quick run"));
    EXPECT_TRUE(wait_pids_gone(remote() + "/pids.txt"));  // the model and its child
    EXPECT_TRUE(wait_group_gone(old_pgid));
    EXPECT_NE(job_pgid("blocker"), old_pgid);
    EXPECT_EQ(job_exit_status("blocker"), 0) << job_state("blocker");
    const std::string console = read_or_empty(local_console("blocker"));
    EXPECT_TRUE(lacks_text(console, "blocking")) << "the old run's log was kept";
    EXPECT_FALSE(path_exists(job_file("blocker", "lock")));
    EXPECT_TRUE(wait_no_remote_processes());
}

TEST_F(TrainJobsTest, ForceDiscardsAFinishedUncollectedJob) {
    shell_model("quick", "echo 'new run'\n");
    make_finished_job("quick", 7);
    write_file(job_file("quick", "console.log"), "old run\n");
    ProcessResult r = mlt({"ssh", "train", "quick"});
    ASSERT_EQ(r.exit_code, kExitConflict) << describe(r);

    r = mlt({"ssh", "train", "quick", "--force"});
    ASSERT_EQ(r.exit_code, 0) << "the old job's 7 must not leak\n" << describe(r);
    EXPECT_TRUE(has_text(r.out, "new run"));
    EXPECT_TRUE(lacks_text(r.out, "old run"));
    EXPECT_EQ(job_exit_status("quick"), 0) << job_state("quick");
    EXPECT_TRUE(lacks_text(read_or_empty(local_console("quick")), "old run"));
    EXPECT_FALSE(path_exists(job_file("quick", "lock")));
}

TEST_F(TrainJobsTest, StopEndsTheGroupAndReleasesTheLock) {
    shell_model("blocker", kBlockingModel);
    ProcessResult r = mlt({"ssh", "train", "blocker", "--no-wait"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    ASSERT_TRUE(wait_console("blocker", "blocking"));
    const long pgid = job_pgid("blocker");

    r = mlt({"ssh", "stop", "blocker"});
    ASSERT_EQ(r.exit_code, 0) << describe(r) << job_state("blocker");
    EXPECT_TRUE(contains_icase(r.out, "stopped")) << describe(r);
    EXPECT_TRUE(wait_pids_gone(remote() + "/pids.txt"));
    EXPECT_TRUE(wait_group_gone(pgid));
    EXPECT_FALSE(path_exists(job_file("blocker", "lock"))) << job_state("blocker");
    EXPECT_EQ(job_exit_status("blocker"), 143) << job_state("blocker");

    r = mlt({"ssh", "status", "blocker"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(has_text(r.out, "blocker"));
    EXPECT_TRUE(has_text(r.out, "143"));
    EXPECT_FALSE(contains_icase(r.out, "running")) << describe(r);

    // The model is free again: a new run is not refused.
    r = mlt({"ssh", "train", "blocker", "--", "quick"});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(has_text(r.out, "quick run"));
}

// download sends the console's read with the status on a guess: the run is the one the
// local copy is of. A copy of another run (here: its tag and bytes rewritten) makes the
// guess miss: its reply is dropped, the same shell goes on, and the copy becomes this run's
// console, whole.
TEST_F(TrainJobsTest, ADownloadWhoseGuessOfTheRunMissesStillGetsThisRunsWholeConsole) {
    shell_model("plain", "echo 'plain one'\necho 'plain two'\n");
    ProcessResult r = mlt({"ssh", "train", "plain"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    const std::string remote_console = read_or_empty(job_file("plain", "console.log"));
    ASSERT_TRUE(has_text(remote_console, "plain two")) << remote_console;
    ASSERT_EQ(read_or_empty(local_console("plain")), remote_console);
    const std::string tag =
        (std::filesystem::path(local_logs("plain")).parent_path().parent_path() /
         "ssh/models/plain/console_run")
            .string();
    ASSERT_TRUE(path_exists(tag));
    write_file(tag, "6b000000-another\n");
    write_file(local_console("plain"), "another run's console\n" + std::string(200, 'x') + "\n");
    r = mlt({"ssh", "-vv", "download", "plain"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(has_text(r.err, "a reply sent ahead on a guess is not asked for")) << r.err;
    EXPECT_FALSE(has_text(r.err, "dropping the control shell")) << r.err;
    EXPECT_EQ(read_or_empty(local_console("plain")), remote_console);
}

TEST_F(TrainJobsTest, StatusLogsAndDownloadLeaveTheJobAlone) {
    shell_model("gated", gated_model("gated"));
    ProcessResult r = mlt({"ssh", "train", "gated", "--no-wait"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    ASSERT_TRUE(wait_console("gated", "gated before the gate"));
    const long pgid = job_pgid("gated");

    r = mlt({"ssh", "status", "gated"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(has_text(r.out, "gated"));
    EXPECT_TRUE(has_text(r.out, "running"));
    EXPECT_TRUE(has_text(r.out, std::to_string(pgid)));

    const std::string snapshot = state_snapshot("gated");
    r = mlt({"ssh", "logs", "gated"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_EQ(r.out, read_or_empty(job_file("gated", "console.log")));
    EXPECT_TRUE(has_text(r.out, "gated before the gate"));
    EXPECT_EQ(state_snapshot("gated"), snapshot);
    EXPECT_FALSE(group_members(pgid).empty()) << "logs disturbed the job";

    open_gate();
    ASSERT_TRUE(wait_job_finished("gated"));
    r = mlt({"ssh", "status", "gated"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(has_text(r.out, "finished")) << describe(r);

    // download pulls archive and logs but keeps the job uncollected (lock, state).
    const std::string finished = state_snapshot("gated");
    r = mlt({"ssh", "download", "gated"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(valid_zip(local_archive("gated")));
    EXPECT_TRUE(has_text(zip_listing(local_archive("gated")), "gated.w"));
    EXPECT_EQ(sha256_of(local_archive("gated")), trim(read_or_empty(job_file("gated", "sha256"))));
    EXPECT_EQ(read_or_empty(local_logs("gated") + "/train.log"), "gated log\n");
    EXPECT_EQ(state_snapshot("gated"), finished);
    EXPECT_FALSE(path_exists(remote() + "/shutdown-gated.log")) << "download ran shutdown_cmds";
    r = mlt({"ssh", "status", "gated"});
    EXPECT_TRUE(has_text(r.out, "finished")) << describe(r);

    // The job can still be collected, and its log shows up once locally.
    r = mlt({"ssh", "train", "gated", "--resume"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_FALSE(path_exists(job_file("gated", "lock")));
    const std::string console = read_or_empty(local_console("gated"));
    EXPECT_EQ(count_lines(console, "gated before the gate"), 1u) << console;
    EXPECT_EQ(count_lines(console, "gated after the gate"), 1u) << console;
    r = mlt({"ssh", "status", "gated"});
    EXPECT_TRUE(has_text(r.out, "collected")) << describe(r);
}

// The job's state lives on the remote: a bare NAME acts on it from a machine without the
// spec (settings from the user file and the command line).
TEST_F(TrainJobsTest, JobCommandsByNameWorkWhereTheSpecIsNot) {
    shell_model("gated", gated_model("gated"));
    ProcessResult r = mlt({"ssh", "train", "gated", "--no-wait"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    ASSERT_TRUE(wait_console("gated", "gated before the gate"));
    const long pgid = job_pgid("gated");

    r = mlt_elsewhere({"ssh", "status", "gated"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(noted_no_spec(r, "gated"));
    EXPECT_TRUE(has_text(r.out, "running")) << describe(r);
    EXPECT_TRUE(has_text(r.out, std::to_string(pgid))) << describe(r);

    r = mlt_elsewhere({"ssh", "logs", "gated"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(noted_no_spec(r, "gated"));
    EXPECT_EQ(r.out, read_or_empty(job_file("gated", "console.log")));

    open_gate();
    ASSERT_TRUE(wait_job_finished("gated"));
    r = mlt_elsewhere({"ssh", "download", "gated"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(noted_no_spec(r, "gated"));
    // The archive lands in the current directory, as there is no spec dir here.
    const std::string archive = elsewhere() + "/gated.mltk.zip";
    EXPECT_TRUE(valid_zip(archive)) << describe(r);
    EXPECT_EQ(sha256_of(archive), trim(read_or_empty(job_file("gated", "sha256"))));
    EXPECT_EQ(read_or_empty(local_logs("gated") + "/train.log"), "gated log\n");
    EXPECT_TRUE(path_exists(job_file("gated", "lock"))) << "download collected the job";

    r = mlt_elsewhere({"ssh", "train", "gated", "--resume"});
    ASSERT_EQ(r.exit_code, 0) << describe(r) << job_state("gated");
    EXPECT_TRUE(noted_no_spec(r, "gated"));
    EXPECT_FALSE(path_exists(job_file("gated", "lock"))) << job_state("gated");
    const std::string console = read_or_empty(local_console("gated"));
    EXPECT_EQ(count_lines(console, "gated before the gate"), 1u) << console;
    EXPECT_EQ(count_lines(console, "gated after the gate"), 1u) << console;
    EXPECT_FALSE(path_exists(project() + "/gated.mltk.zip")) << "nothing lands by the spec";

    // A path is a path: it must exist.
    r = mlt_elsewhere({"ssh", "status", "models/gated.py"});
    EXPECT_EQ(r.exit_code, 2) << describe(r);
    EXPECT_TRUE(has_text(r.err, "models/gated.py not found")) << describe(r);
}

TEST_F(TrainJobsTest, StopByNameWorksWhereTheSpecIsNot) {
    shell_model("blocker", kBlockingModel);
    ProcessResult r = mlt({"ssh", "train", "blocker", "--no-wait"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    ASSERT_TRUE(wait_console("blocker", "blocking"));
    const long pgid = job_pgid("blocker");

    r = mlt_elsewhere({"ssh", "stop", "blocker"});
    ASSERT_EQ(r.exit_code, 0) << describe(r) << job_state("blocker");
    EXPECT_TRUE(noted_no_spec(r, "blocker"));
    EXPECT_TRUE(wait_group_gone(pgid));
    EXPECT_TRUE(wait_pids_gone(remote() + "/pids.txt"));
    EXPECT_FALSE(path_exists(job_file("blocker", "lock"))) << job_state("blocker");
    EXPECT_EQ(job_exit_status("blocker"), 143) << job_state("blocker");
}

// A run cut while uploading needs its spec to upload again: refused in one line (exit 2),
// the lock left for a machine that has it.
TEST_F(TrainJobsTest, ResumeByNameOfARunCutWhileUploadingNeedsTheSpec) {
    shell_model("gated", gated_model("gated"));
    const std::string hold = sshd().dir() + "/hold";
    env().set("MLT_TEST_HOLD", "uploading:" + hold);
    auto first = start_mlt({"ssh", "train", "gated"});
    ASSERT_TRUE(wait_until([&] { return path_exists(hold); }, kEffectTimeout))
        << first->out() << first->err();
    first->signal(SIGKILL);
    first->wait(kEffectTimeout);
    env().unset("MLT_TEST_HOLD");
    ASSERT_TRUE(path_exists(job_file("gated", "lock")));
    const std::string snapshot = state_snapshot("gated");

    ProcessResult r = mlt_elsewhere({"ssh", "train", "gated", "--resume"});
    EXPECT_EQ(r.exit_code, 2) << describe(r);
    EXPECT_EQ(count_occurrences(r.err, "mlt: error: "), 1u) << describe(r);
    EXPECT_TRUE(has_text(r.err, "was cut while uploading")) << describe(r);
    EXPECT_TRUE(has_text(r.err, "spec, which is not here")) << describe(r);
    EXPECT_EQ(state_snapshot("gated"), snapshot);
    EXPECT_FALSE(path_exists(job_file("gated", "pid"))) << "a job was started";

    // Where the spec is, the same command continues the run.
    open_gate();
    r = mlt({"ssh", "train", "gated", "--resume"});
    ASSERT_EQ(r.exit_code, 0) << describe(r) << job_state("gated");
    EXPECT_TRUE(has_text(r.out, "gated after the gate")) << describe(r);
    EXPECT_FALSE(path_exists(job_file("gated", "lock")));
}

// status MODEL reads the model's sidecar as train does: a remote_dir set only there.
TEST_F(TrainJobsTest, StatusHonoursTheModelsSidecar) {
    const std::string own = remote() + "/own";
    write_shell_model("gated", gated_model("gated"));
    write_model_settings("gated",
                         "ssh:\n  train_cmd: \"sh {spec}\"\n  remote_dir: \"" + own + "\"\n");
    ProcessResult r = mlt({"ssh", "train", "gated", "--no-wait"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    ASSERT_TRUE(wait_until([&] { return path_exists(own + "/.mlt/gated/pid"); }, kEffectTimeout));

    r = mlt({"ssh", "status", "gated"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(has_text(r.out, "running")) << describe(r);
    const std::string pgid = trim(read_or_empty(own + "/.mlt/gated/pid"));
    EXPECT_TRUE(has_text(r.out, "gated")) << describe(r);
    EXPECT_TRUE(has_text(r.out, pgid)) << describe(r);
    EXPECT_FALSE(has_text(r.err, "note:")) << describe(r);
    write_file(own + "/gate", "");
}

// `mlt ssh status | head -0`: output into a pipe nobody reads. mlt is not killed by
// SIGPIPE; it ends with its own status and says once that output was lost.
TEST_F(TrainJobsTest, AClosedStdoutIsSaidNotADeathBySigpipe) {
    write_shell_model("gated", gated_model("gated"));
    // The read end is closed before mlt starts, so its first write meets a broken pipe;
    // subprocess restores the default SIGPIPE action in the child.
    const std::string runner =
        "import os, subprocess, sys\n"
        "r, w = os.pipe()\n"
        "os.close(r)\n"
        "p = subprocess.run(sys.argv[1:], stdout=w, cwd=os.environ['MLT_TEST_CWD'])\n"
        "print('mlt-exit', p.returncode, file=sys.stderr)\n";
    std::vector<std::string> vars = env().vars();
    vars.push_back("MLT_TEST_CWD=" + project());
    ProcessResult r = run_process({"/usr/bin/python3", "-c", runner, mlt_binary(), "ssh", "status"},
                                  vars, std::chrono::seconds(60));
    EXPECT_TRUE(has_text(r.err, "mlt-exit 0")) << describe(r);
    EXPECT_TRUE(has_text(r.err,
                         "mlt: warning: not all output was shown: standard output was "
                         "closed (broken pipe)"))
        << describe(r);
}

TEST_F(TrainJobsTest, TwoModelsSideBySideInOneRemoteDir) {
    // The connection on the command line this time; the settings only place the dirs.
    env().write_settings(base_settings(/*connection=*/false));
    const std::vector<std::string> ssh = {"ssh", "-h", host_with_dir(), "-i",
                                          sshd().client_key_path()};
    auto with = [&](std::vector<std::string> args) {
        args.insert(args.begin(), ssh.begin(), ssh.end());
        return args;
    };
    shell_model("first", gated_model("first"));
    shell_model("second", gated_model("second"));
    ProcessResult first = mlt(with({"train", "first", "--no-wait"}));
    ASSERT_EQ(first.exit_code, 0) << describe(first);
    ProcessResult r = mlt(with({"train", "second", "--no-wait"}));
    ASSERT_EQ(r.exit_code, 0) << "the other model's job must not conflict\n" << describe(r);
    ASSERT_TRUE(wait_console("first", "first before the gate"));
    ASSERT_TRUE(wait_console("second", "second before the gate"));
    EXPECT_NE(job_pgid("first"), job_pgid("second"));

    r = mlt(with({"status"}));
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_EQ(lines_starting(r.out, "first ").size(), 1u) << describe(r);
    EXPECT_EQ(lines_starting(r.out, "second ").size(), 1u) << describe(r);
    EXPECT_EQ(count_occurrences(r.out, "running"), 2u) << describe(r);

    // The printed command must carry the connection options given (-h and -i).
    std::vector<std::string> hint = resume_hint(first.out);
    const ::testing::AssertionResult hint_ok =
        hint_has(hint, {host_with_dir(), sshd().client_key_path(), "first", "--resume"});
    EXPECT_TRUE(hint_ok) << describe(first);

    open_gate();
    for (const std::string model : {"first", "second"}) {
        SCOPED_TRACE(model);
        const std::string other = model == "first" ? "second" : "first";
        r = mlt(model == "first" && hint_ok ? hint : with({"train", model, "--resume"}));
        ASSERT_EQ(r.exit_code, 0) << describe(r) << job_state(model);
        EXPECT_TRUE(has_text(r.out, model + " after the gate"));
        EXPECT_TRUE(lacks_text(r.out, other + " "));
        EXPECT_TRUE(has_text(zip_listing(local_archive(model)), model + ".w"));
        EXPECT_EQ(read_or_empty(local_logs(model) + "/train.log"), model + " log\n");
        EXPECT_EQ(read_or_empty(remote() + "/shutdown-" + model + ".log"), "shutdown\n");
        EXPECT_FALSE(path_exists(job_file(model, "lock")));
    }
}

}  // namespace
}  // namespace mlt_test
