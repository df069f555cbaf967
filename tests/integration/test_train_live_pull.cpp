// Collecting a log dir that is still being written (by a process that is not the job's, or
// while `download` runs during a run): a writer rewrites big and small files in place, as
// torch.save does, and a rotator creates and deletes checkpoints, while mlt pulls. Every file mlt
// publishes is one whole version; the collection completes and says what it skipped. Also:
// names this machine cannot hold, unreadable files, and remote files named like mlt's own.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "harness/expect.h"
#include "harness/files.h"
#include "harness/train_fixture.h"

namespace mlt_test {
namespace {

namespace fs = std::filesystem;

const char* const kShellSidecar = "ssh:\n  train_cmd: \"sh {spec}\"\n";

// As root, the remote commands run without the capabilities that let root read a file of
// mode 000, so that "unreadable" is real there too.
class LivePullTest : public TrainTest {
  protected:
    std::string sshd_extra_config() const override {
        if (::geteuid() != 0) return {};
        return "ForceCommand exec setpriv --bounding-set -dac_override,-dac_read_search -- "
               "/bin/sh -c \"$SSH_ORIGINAL_COMMAND\"\n";
    }
};

// The content of every regular file under `dir` (but mlt's console copy and its samples of
// the host): success when each is all one letter (one version of the writer: a torn copy
// shows two) and as long as that file's versions are.
::testing::AssertionResult each_file_one_version(const std::string& dir, const std::string& skip) {
    size_t checked = 0;
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
        if (!e.is_regular_file() || e.path().filename() == skip ||
            e.path().filename() == "mlt-metrics.jsonl")
            continue;
        const std::string name = e.path().filename().string();
        const std::string content = read_or_empty(e.path().string());
        size_t expected = 0;
        if (name == "model.ckpt" || name == "stable.ckpt")
            expected = 40u << 20;
        else if (name == "events.bin")
            expected = 4u << 20;
        else if (name.rfind("checkpoint-", 0) == 0)
            expected = 256u << 10;
        else
            return ::testing::AssertionFailure() << "unexpected local file " << e.path();
        if (content.size() != expected)
            return ::testing::AssertionFailure()
                   << e.path() << " has " << content.size() << " bytes, not " << expected;
        const size_t other = content.find_first_not_of(content[0]);
        if (other != std::string::npos)
            return ::testing::AssertionFailure()
                   << e.path() << " is torn: byte 0 is '" << content[0] << "', byte " << other
                   << " is '" << content[other] << "'";
        ++checked;
    }
    return ::testing::AssertionSuccess() << checked << " files checked";
}

// The training starts a writer and a rotator that are not the job's (their own session,
// without the run's MLT_RUN_ID, as a sync tool or another program of the user would be), so
// they still run when mlt collects: model.ckpt (40 MiB, over the one-by-one size) and
// events.bin (4 MiB, in the tar stream) are rewritten in place without pause, each version
// all one letter; checkpoint-N.bin files come and go. stable.ckpt (40 MiB) is written once.
// The rewrites do not truncate (dd conv=notrunc): a truncating writer that a loaded machine
// stalls for more than the pull's 0.1 s of quiet between its truncation and its first write
// leaves an empty file that is, by every look, a settled version of its own.
TEST_F(LivePullTest, APullDuringWritesAndRotationsPublishesOnlyWholeVersions) {
    write_shell_model(
        "live",
        "set -e\n"
        "cat > \"$MLT_REMOTE_DIR/writers.sh\" <<'EOF'\n"
        "cd \"$MLT_LOG_DIR\"\n"
        "letter() { echo abcdefghijklmnopqrstuvwxyz | cut -c $(( $1 % 26 + 1 )); }\n"
        "fill() { head -c \"$2\" /dev/zero | tr '\\000' \"$3\" > \"$1\"; }\n"
        "refill() { head -c \"$2\" /dev/zero | tr '\\000' \"$3\" |\n"
        "   dd of=\"$1\" bs=1M conv=notrunc 2>/dev/null; }\n"
        "fill stable.ckpt 41943040 s\n"
        "fill model.ckpt 41943040 a\n"
        "fill events.bin 4194304 a\n"
        "(v=0; while [ ! -e stop ]; do v=$((v+1)); c=$(letter $v);\n"
        "   refill model.ckpt 41943040 $c; refill events.bin 4194304 $c; done) &\n"
        "(n=0; while [ ! -e stop ]; do n=$((n+1));\n"
        "   fill checkpoint-$n.bin 262144 $(letter $n); rm -f checkpoint-$((n-2)).bin;\n"
        "   sleep 0.02; done) &\n"
        ": > \"$MLT_REMOTE_DIR/writers.up\"\n"
        "EOF\n"
        "(unset MLT_RUN_ID; exec setsid sh \"$MLT_REMOTE_DIR/writers.sh\") >/dev/null 2>&1 &\n"
        "i=0; while [ ! -e \"$MLT_REMOTE_DIR/writers.up\" ] && [ $i -lt 1200 ]; do sleep 0.05; "
        "i=$((i+1)); done\n"
        "echo writers started\n");
    write_model_settings("live", kShellSidecar);
    write_user_settings();
    ProcessResult r = mlt({"ssh", "train", "live"}, std::chrono::seconds(120));
    write_file(remote_logs_root() + "/live/stop", "");
    ASSERT_EQ(r.exit_code, 0) << describe(r) << job_state("live");
    EXPECT_TRUE(has_text(r.err, "while it changed: ")) << describe(r);
    EXPECT_EQ(lines_starting(r.err, "mlt: warning: pulling ").size(), 1u) << describe(r);
    const std::string logs = local_logs("live");
    EXPECT_EQ(read_or_empty(logs + "/stable.ckpt"), std::string(40u << 20, 's'));
    EXPECT_TRUE(each_file_one_version(logs, "mltk_ssh_train_live.log")) << describe(r);
    EXPECT_FALSE(fs::exists(logs + "/.mlt-pull")) << describe(r);
}

// A path longer than PATH_MAX (17 names of 250 bytes), a file of mode 000, and a file named
// like the local console copy: the collection completes, the first two are named in one
// warning, the third is stored aside, and the console copy is the console log.
TEST_F(LivePullTest, NamesThatCannotBeCopiedAreSkippedAndMltsOwnNamesAreStoredAside) {
    write_shell_model(
        "odd",
        "set -e\n"
        "cd \"$MLT_LOG_DIR\"\n"
        "echo ok > ok.txt\n"
        "echo secret > secret.bin && chmod 000 secret.bin\n"
        "echo 'from the log dir' > mltk_ssh_train_odd.log\n"
        // sh's cd gives up on a cwd past PATH_MAX; chdir(2) with a relative name does not.
        "python3 -c \"import os\nfor i in range(17): os.mkdir('0' * 250); os.chdir('0' * 250)\n"
        "open('deep.txt', 'w').write('deep')\"\n"
        "echo trained\n");
    write_model_settings("odd", kShellSidecar);
    write_user_settings();
    ProcessResult r = mlt({"ssh", "train", "odd"});
    ASSERT_EQ(r.exit_code, 0) << describe(r) << job_state("odd");
    const std::string logs = local_logs("odd");
    EXPECT_EQ(read_or_empty(logs + "/ok.txt"), "ok\n");
    EXPECT_FALSE(fs::exists(logs + "/secret.bin"));
    const auto skipped = lines_starting(r.err, "mlt: warning: skipped files of ");
    ASSERT_EQ(skipped.size(), 1u) << describe(r);
    EXPECT_TRUE(has_text(skipped[0], "unreadable 1: 'secret.bin'"));
    EXPECT_TRUE(has_text(skipped[0], "path too long here 1: '0000"));
    EXPECT_TRUE(has_text(skipped[0], "/deep.txt'"));
    EXPECT_TRUE(
        has_text(r.err, "stored 'mltk_ssh_train_odd.log' as 'mltk_ssh_train_odd.log.remote'"))
        << describe(r);
    EXPECT_EQ(read_or_empty(logs + "/mltk_ssh_train_odd.log.remote"), "from the log dir\n");
    EXPECT_TRUE(has_text(read_or_empty(local_console("odd")), "trained\n"));
    EXPECT_EQ(read_or_empty(local_console("odd")), read_or_empty(job_file("odd", "console.log")));
    // The temp dir's cleanup cannot take paths this long; rm can.
    EXPECT_EQ(std::system(("rm -rf '" + remote_logs_root() + "/odd'").c_str()), 0);
}

// A symlink at the local console copy's place: one clear error before anything remote, and
// the link's target is never written.
TEST_F(LivePullTest, ASymlinkAtTheConsoleCopyIsRefusedAndItsTargetIsNotWritten) {
    write_shell_model("linked", "echo trained\n");
    write_model_settings("linked", kShellSidecar);
    write_user_settings();
    const std::string victim = sshd().dir() + "/victim.txt";
    write_file(victim, "keep me\n");
    fs::create_directories(local_logs("linked"));
    fs::create_symlink(victim, local_console("linked"));
    ProcessResult r = mlt({"ssh", "train", "linked"});
    EXPECT_EQ(r.exit_code, 2) << describe(r);
    EXPECT_TRUE(is_one_error_line(r.err)) << describe(r);
    EXPECT_TRUE(has_text(r.err, "is a symlink")) << describe(r);
    EXPECT_EQ(read_or_empty(victim), "keep me\n");
    EXPECT_FALSE(fs::exists(job_dir("linked"))) << "something was done remotely";
}

}  // namespace
}  // namespace mlt_test
