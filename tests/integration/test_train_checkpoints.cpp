// checkpoints (issue 44): retention on both ends against the real sshd. A trainer saves a
// checkpoint per epoch in place (in two writes, a pause between: a torn file for a while)
// after a metric line; the host's guard keeps the newest keep_last and the best keep_best,
// the pulls of --sync-every bring only whole checkpoints that stay, and the local copies of
// those the guard deleted go too.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "harness/expect.h"
#include "harness/files.h"
#include "harness/train_fixture.h"

namespace fs = std::filesystem;

namespace mlt_test {
namespace {

// EPOCHS epochs: "epoch I val_loss=V" (epoch 4 is the best: 0.05; later ones fall towards
// it, never below), then ck/eI.pt written in place in two halves, then 0.3 s. With
// `in_step`, the second half waits until the guard has seen the first (it looks every other
// second, and a checkpoint gets the metric's latest value at its first look: so each gets
// its own epoch's); else it comes 0.2 s later.
std::string saver(int epochs, bool in_step) {
    const std::string pause =
        in_step ? "  until grep -q \"^ck/e$i.pt\t\" \"$MLT_JOB_DIR/ckpt.ledger\" 2>/dev/null; "
                  "do sleep 0.05; done\n"
                : "  sleep 0.2\n";
    // In step, the save also waits until the guard has read the metric line before it (else
    // a look that read the console just before the line, then found the save, gives it the
    // epoch before's value).
    const std::string metric_read =
        in_step ? "  until awk -F '\\t' -v v=$v '$3 == \"m\" && $2 == v { f = 1 } END { exit "
                  "!f }' \"$MLT_JOB_DIR/ckpt.metric/rules.state\" 2>/dev/null; do sleep 0.05; "
                  "done\n"
                : "";
    return "mkdir -p \"$MLT_LOG_DIR/ck\"\n"
           "i=1; while [ $i -le " +
           std::to_string(epochs) +
           " ]; do\n"
           "  if [ $i = 4 ]; then v=0.05; else v=$((1000 - i * 10)); v=0.$v; fi\n"
           "  echo \"epoch $i val_loss=$v\"\n" +
           metric_read +
           "  f=\"$MLT_LOG_DIR/ck/e$i.pt\"\n"
           "  printf 'weights %s, first half;' $i > \"$f\"\n" +
           pause +
           "  printf ' second half\\n' >> \"$f\"; sleep 0.3\n"
           "  i=$((i+1))\n"
           "done\n";
}

std::string whole_content(int i) {
    return "weights " + std::to_string(i) + ", first half; second half\n";
}

// The names of the checkpoints in `dir`, sorted.
std::vector<std::string> checkpoints_in(const std::string& dir) {
    std::vector<std::string> names;
    if (!fs::exists(dir)) return names;
    for (const auto& e : fs::directory_iterator(dir))
        if (e.path().extension() == ".pt") names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

class TrainCheckpointsTest : public TrainTest {
  protected:
    void model(int epochs, bool in_step) {
        write_user_settings();
        write_shell_model("m", saver(epochs, in_step));
        write_model_settings(
            "m",
            "ssh:\n  train_cmd: \"sh {spec}\"\n  checkpoints:\n    pattern: 'ck/*.pt'\n"
            "    keep_last: 2\n    settle_seconds: 1\n"
            "    keep_best: {metric: 'val_loss=([0-9.]+)', mode: min, n: 1}\n");
    }
    std::string host_ck() const { return remote_logs_root() + "/m/ck"; }
    std::string local_ck() { return local_logs("m") + "/ck"; }
    // The lines of the local ledger copy whose local copy a pull deleted (`here`).
    size_t deleted_here() {
        const std::string text = read_or_empty(local_logs("m") + "/.mlt-checkpoints");
        size_t n = 0;
        for (size_t at = 0; (at = text.find("\there\n", at)) != std::string::npos; ++at) ++n;
        return n;
    }
};

// 12 checkpoints with a metric line each, pulled every second while the job runs.
TEST_F(TrainCheckpointsTest, TheNewestAndTheBestStayOnBothEndsAndTheRestGo) {
    model(12, true);
    const ProcessResult r = mlt({"ssh", "train", "m", "--sync-every", "1"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    const std::vector<std::string> kept{"e11.pt", "e12.pt", "e4.pt"};
    EXPECT_EQ(checkpoints_in(host_ck()), kept) << read_or_empty(job_file("m", "ckpt.ledger"));
    EXPECT_EQ(checkpoints_in(local_ck()), kept) << r.out << r.err;
    for (int i : {4, 11, 12}) {
        const std::string name = "/e" + std::to_string(i) + ".pt";
        EXPECT_EQ(read_or_empty(local_ck() + name), whole_content(i)) << name;
    }
    // The guard's ledger, kept here too: every checkpoint, 9 deleted.
    const std::string ledger = read_or_empty(local_logs("m") + "/.mlt-checkpoints");
    for (int i = 1; i <= 12; ++i)
        EXPECT_TRUE(has_text(ledger, "ck/e" + std::to_string(i) + ".pt\t")) << ledger;
    EXPECT_TRUE(has_text(r.out, "checkpoints: 3 kept on the host (9 deleted there, ")) << r.out;
    std::cout << "pulled while training, then deleted here: " << deleted_here() << " of 9\n";
}

// Issue 44's acceptance: 30 epochs, keep_last 2 and keep_best 1 leave at most 3 on each end.
TEST_F(TrainCheckpointsTest, ThirtyEpochsLeaveAtMostThreeOnEachEnd) {
    // Half a second an epoch: the guard sees several at once, each with the latest value.
    model(30, false);
    const ProcessResult r = mlt({"ssh", "train", "m", "--sync-every", "1"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    const std::vector<std::string> host = checkpoints_in(host_ck());
    EXPECT_LE(host.size(), 3u);
    EXPECT_EQ(checkpoints_in(local_ck()), host) << r.out << r.err;
    for (const char* newest : {"e29.pt", "e30.pt"})
        EXPECT_NE(std::find(host.begin(), host.end(), newest), host.end()) << newest;
    std::cout << "pulled while training, then deleted here: " << deleted_here() << " of 27\n";
}

// Without keep rules nothing is deleted on either end, and every whole checkpoint comes home.
TEST_F(TrainCheckpointsTest, WithoutKeepRulesNothingIsDeleted) {
    write_user_settings();
    write_shell_model("m", saver(5, false));
    write_model_settings("m",
                         "ssh:\n  train_cmd: \"sh {spec}\"\n  checkpoints: {pattern: 'ck/*.pt'}\n");
    const ProcessResult r = mlt({"ssh", "train", "m", "--sync-every", "1"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    const std::vector<std::string> all{"e1.pt", "e2.pt", "e3.pt", "e4.pt", "e5.pt"};
    EXPECT_EQ(checkpoints_in(host_ck()), all);
    EXPECT_EQ(checkpoints_in(local_ck()), all);
    EXPECT_TRUE(has_text(r.out, "checkpoints: 5 kept on the host")) << r.out;
}

// A job that fails after a save it cut: the torn newest checkpoint is neither deleted nor
// brought home; the whole ones are.
TEST_F(TrainCheckpointsTest, ATornCheckpointOfAFailedJobStaysOnTheHost) {
    write_user_settings();
    write_shell_model("m",
                      "mkdir -p \"$MLT_LOG_DIR/ck\"\n"
                      "printf 'whole\\n' > \"$MLT_LOG_DIR/ck/e1.pt\"\n"
                      "while ! grep -q 'ck/e1.pt\t.*\t1\t' \"$MLT_JOB_DIR/ckpt.ledger\" "
                      "2>/dev/null; do sleep 0.1; done\n"
                      "printf 'torn' > \"$MLT_LOG_DIR/ck/e2.pt\"\nexit 3\n");
    write_model_settings("m",
                         "ssh:\n  train_cmd: \"sh {spec}\"\n  checkpoints: {pattern: 'ck/*.pt', "
                         "keep_last: 1, settle_seconds: 1}\n");
    const ProcessResult r = mlt({"ssh", "train", "m"});
    ASSERT_EQ(r.exit_code, 1) << describe(r);  // the job failed
    EXPECT_EQ(checkpoints_in(host_ck()), (std::vector<std::string>{"e1.pt", "e2.pt"}));
    EXPECT_EQ(checkpoints_in(local_ck()), std::vector<std::string>{"e1.pt"}) << r.out << r.err;
    EXPECT_TRUE(has_text(r.out, "1 not brought home")) << r.out;
}

// A trainer killed (kill -9) in the middle of a save, once at each 10 % of the file from 10 % to
// 90 %: each restart in place starts from the whole checkpoint (MLT_CHECKPOINT, its bytes as
// saved), and the cut one stays on the host, named in a warning, and never comes home.
TEST_F(TrainCheckpointsTest, ARestartAfterASaveCutAtEachTenthStartsFromTheWholeOne) {
    write_user_settings();
    write_shell_model(
        "m",
        "cd \"$MLT_LOG_DIR\" && mkdir -p ck\n"
        "a=${MLT_ATTEMPT:-1}\n"
        "bytes() { awk -v n=\"$1\" -v c=\"$2\" 'BEGIN { for (i = 0; i < n; i++) printf \"%s\", c "
        "}'; }\n"
        "if [ \"$a\" = 1 ]; then\n"
        "  bytes 1000 w > ck/e1.pt; bytes 1000 w > ref\n"
        "  until grep -q 'ck/e1.pt\t.*\t1\t[^\t]*\tkept$' \"$MLT_JOB_DIR/ckpt.ledger\" "
        "2>/dev/null; do sleep 0.05; done\n"
        "else\n"
        "  cmp -s \"$MLT_CHECKPOINT\" ref && echo \"attempt $a from [$MLT_CHECKPOINT], whole\"\n"
        "fi\n"
        "if [ \"$a\" = 10 ]; then bytes 1000 x > ck/e2.pt; exit 0; fi\n"
        "echo \"saving e2, cut at ${a}0 %\"\n"
        "bytes $((a * 100)) x > ck/e2.pt\n"
        "kill -9 $$\n");
    write_model_settings("m",
                         "ssh:\n  train_cmd: \"sh {spec}\"\n  max_restarts: 9\n"
                         "  checkpoints: {pattern: 'ck/*.pt', keep_last: 1, settle_seconds: 5}\n"
                         "  watch: {on_failure: [{match: 'cut at', then: restart}]}\n");
    const ProcessResult r = mlt({"ssh", "train", "m", "--sync-every", "1"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    const std::string console = read_or_empty(local_console("m"));
    for (int a = 2; a <= 10; ++a)
        EXPECT_EQ(count_lines(console, "attempt " + std::to_string(a) + " from [" +
                                           remote_logs_root() + "/m/ck/e1.pt], whole"),
                  1u)
            << "attempt " << a << ":\n"
            << console;
    EXPECT_EQ(
        lines_starting(console, "mlt: warning: checkpoint ck/e2.pt is newer but not whole").size(),
        9u)
        << console;
    // The last attempt saved e2 whole: it stays, e1 goes; no cut copy ever came home.
    EXPECT_EQ(checkpoints_in(local_ck()), std::vector<std::string>{"e2.pt"}) << r.out;
    EXPECT_EQ(read_or_empty(local_ck() + "/e2.pt"), std::string(1000, 'x'));
    EXPECT_EQ(read_or_empty(host_ck() + "/e2.pt"), std::string(1000, 'x'));
}

// A job lost in the middle of a save (its process group killed: no exit status, no look of
// the guard after the end), with a ckpt.final of an earlier look still there: the restart in
// place takes the look after the end anyway, so the cut save never counts as whole (else it
// settles in the next attempt, or that attempt's end with 0 makes it whole, brings it home and
// deletes e1), and the next attempt starts from the whole one.
TEST_F(TrainCheckpointsTest, ARestartAfterAJobLostMidSaveStartsFromTheWholeOne) {
    write_user_settings("  max_restarts: 1\n");
    write_shell_model("m",
                      "cd \"$MLT_LOG_DIR\" && mkdir -p ck\n"
                      "if [ -n \"$MLT_ATTEMPT\" ]; then echo \"resumed from [$MLT_CHECKPOINT]\"; "
                      "exit 0; fi\n"
                      "printf 'whole\\n' > ck/e1.pt; : > ck/e1.pt.done\n"
                      "until grep -q 'ck/e1.pt\t.*\t1\t[^\t]*\tkept$' "
                      "\"$MLT_JOB_DIR/ckpt.ledger\" 2>/dev/null; do sleep 0.05; done\n"
                      "echo cut; printf 'tor' > ck/e2.pt\n"
                      "w=0; while [ $w -lt 2400 ]; do sleep 0.05; w=$((w+1)); done\n");
    write_model_settings("m",
                         "ssh:\n  train_cmd: \"sh {spec}\"\n  checkpoints: {pattern: 'ck/*.pt', "
                         "keep_last: 1, settle_seconds: 4, marker: '{name}.done'}\n");
    auto run = start_mlt({"ssh", "train", "m"});
    ASSERT_TRUE(run->wait_for_output("cut", kEffectTimeout)) << run->out() << run->err();
    ASSERT_TRUE(wait_until([&] { return path_exists(host_ck() + "/e2.pt"); }, kEffectTimeout));
    write_file(job_file("m", "ckpt.final"), "");  // a stale one: the look was not taken
    const long pgid = job_pgid("m");
    ASSERT_GT(pgid, 0);
    ASSERT_EQ(::kill(static_cast<pid_t>(-pgid), SIGKILL), 0);
    ASSERT_TRUE(wait_group_gone(pgid));
    const ProcessResult r = run->wait(kTrainTimeout);
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(has_text(r.out, "resumed from [" + remote_logs_root() + "/m/ck/e1.pt]")) << r.out;
    EXPECT_TRUE(has_text(r.out, "mlt: warning: checkpoint ck/e2.pt is newer but not whole"))
        << r.out;
    EXPECT_EQ(read_or_empty(host_ck() + "/e2.pt"), "tor");
    EXPECT_EQ(checkpoints_in(local_ck()), std::vector<std::string>{"e1.pt"}) << r.out;
}

// After a run whose last save a failure cut, a new run in the same log dir, and then a
// --restore of a log dir that holds a copy of that save (fetched from the host by hand), start
// from the whole checkpoint: the ledger of the run before (carried on the host; kept here as
// .mlt-checkpoints and pushed with the restore) knows the cut one was never whole; it stays,
// named in a warning.
TEST_F(TrainCheckpointsTest, ANewRunOrARestoreStartsFromTheWholeCheckpointNotACutSave) {
    write_user_settings();
    write_shell_model("m",
                      "cd \"$MLT_LOG_DIR\" && mkdir -p ck\n"
                      "if [ -n \"$MLT_CHECKPOINT\" ]; then echo \"resumed from "
                      "[$MLT_CHECKPOINT]\"; exit 0; fi\n"
                      "printf 'whole\\n' > ck/e1.pt\n"
                      "until grep -q 'ck/e1.pt\t.*\t1\t[^\t]*\tkept$' "
                      "\"$MLT_JOB_DIR/ckpt.ledger\" 2>/dev/null; do sleep 0.05; done\n"
                      "printf 'torn' > ck/e2.pt; exit 3\n");
    write_model_settings("m",
                         "ssh:\n  train_cmd: \"sh {spec}\"\n  checkpoints: {pattern: 'ck/*.pt', "
                         "keep_last: 1, settle_seconds: 1}\n");
    ProcessResult r = mlt({"ssh", "train", "m"});
    ASSERT_EQ(r.exit_code, 1) << describe(r);  // the job failed, its last save cut
    ASSERT_EQ(checkpoints_in(local_ck()), std::vector<std::string>{"e1.pt"}) << r.out;
    r = mlt({"ssh", "train", "m"});  // a new run, nothing pushed
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(has_text(r.out, "resumed from [" + remote_logs_root() + "/m/ck/e1.pt]")) << r.out;
    EXPECT_TRUE(has_text(r.out, "mlt: warning: checkpoint ck/e2.pt is newer but not whole"))
        << r.out;
    // Its end with status 0 does not make the cut save whole: it stays there, not brought home.
    EXPECT_TRUE(has_text(r.out, "1 not brought home")) << r.out;
    EXPECT_EQ(checkpoints_in(local_ck()), std::vector<std::string>{"e1.pt"}) << r.out;
    // The cut save fetched by hand (as `scp -p` would), then the host's log dir gone.
    fs::copy_file(host_ck() + "/e2.pt", local_ck() + "/e2.pt");
    fs::last_write_time(local_ck() + "/e2.pt", fs::last_write_time(host_ck() + "/e2.pt"));
    fs::remove_all(remote_logs_root() + "/m");
    r = mlt({"ssh", "train", "m", "--restore"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(has_text(r.out, "resumed from [" + remote_logs_root() + "/m/ck/e1.pt]")) << r.out;
    EXPECT_TRUE(has_text(r.out, "mlt: warning: checkpoint ck/e2.pt is newer but not whole"))
        << r.out;
    EXPECT_EQ(read_or_empty(host_ck() + "/e2.pt"), "torn");
    EXPECT_EQ(read_or_empty(local_ck() + "/e2.pt"), "torn");
}

}  // namespace
}  // namespace mlt_test
