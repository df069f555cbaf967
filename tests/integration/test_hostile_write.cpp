// A hostile host writes or deletes files outside the model's dirs (issue 37, "write any
// file", "delete any file", "plant files beside the spec"): names from its listings and tar
// streams that climb out of the dir they were asked for. Nothing outside the model's local
// dirs may change; the run fails and names the tampering.
#include <gtest/gtest.h>

#include <string>

#include "harness/expect.h"
#include "harness/files.h"
#include "harness/hostile_fixture.h"

namespace mlt_test {
namespace {

constexpr std::uint64_t kMiB = 1024 * 1024;
// The size from which a file of a log pull goes by the ranged download path (kResumableSize).
constexpr std::uint64_t kRanged = 32 * kMiB;

// A training that leaves one log file in its log dir.
const char* const kLogTraining =
    "mkdir -p \"$MLT_LOG_DIR\" && echo 'a log line' > \"$MLT_LOG_DIR/train.txt\"\n"
    "echo trained\n";

class HostileWriteTest : public HostileTrainTest {
  protected:
    // The host's ~/.bashrc payload at <remote_logs_root>/.bashrc (`size` bytes; the first
    // line a command), and a `find` that adds the record `record` to every listing of the
    // log dir of `model` (`levels` below the root) for which `also` holds.
    void bashrc_record(const std::string& model, std::uint64_t size,
                       const std::string& record = "./../../../.bashrc", int levels = 3,
                       const std::string& also = {}) const {
        write_padded(remote_logs_root() + "/.bashrc", "echo 'the remote ran this'\n", size);
        host().find_adding_paths(in_dir(deep_log_dir(model, levels)) + also, {record});
    }

    // The checks of the "write any file" tests: ~/.bashrc is what it was, the run failed,
    // and it said why.
    void expect_refused(const ProcessResult& r, const LaptopSnapshot& before,
                        const std::string& bashrc) const {
        EXPECT_TRUE(host().triggered("find")) << "the attack never ran\n" << host().describe();
        expect_contained(r, before);
        const std::string now = read_or_empty(env().home() + "/.bashrc");
        EXPECT_TRUE(now == bashrc)
            << "~/.bashrc is now " << now.size() << " bytes: " << now.substr(0, 80) << "\n"
            << brief(r);
        EXPECT_NE(r.exit_code, 0) << brief(r);
        EXPECT_TRUE(contains_icase(r.err, "tamper"));
    }
};

// Critical: the record `./../../../.bashrc` (32 MiB: the ranged path) in the final log pull
// of `train` wrote ~/.bashrc through <log dir>/.mlt-pull/../.. and published it.
TEST_F(HostileWriteTest, TrainRangedRecordClimbingToBashrcWritesNothing) {
    const std::string bashrc = plant_bashrc();
    bashrc_record("m", kRanged);
    shell_model("m", kLogTraining, deep_log_setting());
    const LaptopSnapshot before = snapshot({"m"});
    ProcessResult r = mlt({"ssh", "train", "m"}, kHostileWait);
    expect_refused(r, before, bashrc);
}

// The same record for a small file, which goes through the tar stream.
TEST_F(HostileWriteTest, TrainSmallRecordClimbingToBashrcWritesNothing) {
    const std::string bashrc = plant_bashrc();
    bashrc_record("m", 64);
    shell_model("m", kLogTraining, deep_log_setting());
    const LaptopSnapshot before = snapshot({"m"});
    ProcessResult r = mlt({"ssh", "train", "m"}, kHostileWait);
    expect_refused(r, before, bashrc);
}

// `download` pulls with the same code: the record arrives after an honest run.
TEST_F(HostileWriteTest, DownloadRangedRecordClimbingToBashrcWritesNothing) {
    shell_model("m", kLogTraining, deep_log_setting());
    ASSERT_EQ(mlt({"ssh", "train", "m"}).exit_code, 0);
    const std::string bashrc = plant_bashrc();
    bashrc_record("m", kRanged);
    const LaptopSnapshot before = snapshot({"m"});
    ProcessResult r = mlt({"ssh", "download", "m"}, kHostileWait);
    expect_refused(r, before, bashrc);
}

// `--sync-every`: the record is listed only while the job runs (never to the final
// collection); the training ends once two pulls beside the follow have listed it (so the
// first of them was whole).
TEST_F(HostileWriteTest, SyncEveryPullOfARecordClimbingToBashrcWritesNothing) {
    const std::string bashrc = plant_bashrc();
    bashrc_record("m", kRanged, "./../../../.bashrc", 3,
                  " && [ ! -e '" + job_file("m", "exit_status") + "' ]");
    shell_model("m",
                "mkdir -p \"$MLT_LOG_DIR\" && echo 'a log line' > \"$MLT_LOG_DIR/train.txt\"\n"
                "i=0; while [ \"$(grep -c find '" +
                    host().state_file("triggered") +
                    "')\" -lt 2 ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done\n"
                    "echo trained\n",
                deep_log_setting());
    const LaptopSnapshot before = snapshot({"m"});
    ProcessResult r = mlt({"ssh", "train", "m", "--sync-every", "1"}, kHostileWait);
    // The pulls beside the training refuse the listing and say so; the final collection's
    // listing no longer holds the record, yet the run ends as failed: the host lied.
    EXPECT_TRUE(host().triggered("find")) << "the attack never ran\n" << host().describe();
    expect_contained(r, before);
    EXPECT_EQ(read_or_empty(env().home() + "/.bashrc"), bashrc) << brief(r);
    EXPECT_TRUE(contains_icase(r.err, "looks tampered with")) << brief(r);
    EXPECT_EQ(r.exit_code, 1) << brief(r);
}

// New: the climb hidden after a first component (`./x/../../../../.bashrc`, x a real dir on
// the host), which a check of the name's start alone would let through.
TEST_F(HostileWriteTest, RecordClimbingAfterAFirstComponentWritesNothing) {
    const std::string bashrc = plant_bashrc();
    bashrc_record("m", kRanged, "./x/../../../../.bashrc");
    shell_model("m",
                "mkdir -p \"$MLT_LOG_DIR/x\" && echo 'a log line' > \"$MLT_LOG_DIR/train.txt\"\n",
                deep_log_setting());
    const LaptopSnapshot before = snapshot({"m"});
    ProcessResult r = mlt({"ssh", "train", "m"}, kHostileWait);
    expect_refused(r, before, bashrc);
}

// High: the pull unlinked the staged copy of every pending record before any check: a
// record `../../../../victim.txt` deleted ~/victim.txt (and mlt blamed the user).
TEST_F(HostileWriteTest, RecordClimbingToAVictimDeletesNothing) {
    write_file(env().home() + "/victim.txt", "the user's file\n");
    write_file(remote_logs_root() + "/victim.txt", "the host's file\n");
    host().find_adding_paths(in_dir(deep_log_dir("m", 4)), {"./../../../../victim.txt"});
    shell_model("m", kLogTraining, deep_log_setting(4));
    const LaptopSnapshot before = snapshot({"m"});
    ProcessResult r = mlt({"ssh", "train", "m"}, kHostileWait);
    EXPECT_TRUE(host().triggered("find")) << host().describe();
    expect_contained(r, before);
    EXPECT_EQ(read_or_empty(env().home() + "/victim.txt"), "the user's file\n") << brief(r);
    EXPECT_NE(r.exit_code, 0) << brief(r);
    EXPECT_TRUE(contains_icase(r.err, "tamper"));
    EXPECT_TRUE(lacks_text(r.err, "fix the download_files entry")) << "the user is not to blame";
}

// High: a download_files glob's tar stream carried more entries than the glob matched: the
// model's sidecar (with a provision_cmd, run locally at the next failover), the spec (run
// by the spec loader) and a git hook. None may be written; the tampering is named.
TEST_F(HostileWriteTest, DownloadFilesTarWithExtraEntriesPlantsNothingBesideTheSpec) {
    make_dir(project() + "/.git", 0755);
    make_dir(project() + "/.git/hooks", 0755);
    host().tar_adding_names(in_dir(remote()), {"m.ssh.yaml", "m.py", ".git/hooks/pre-commit"});
    shell_model("m",
                "mkdir -p results .git/hooks\n"
                "echo result > results/out.txt\n"
                "printf 'ssh:\\n  provision_cmd: \"touch /tmp/pwned\"\\n' > m.ssh.yaml\n"
                "echo 'import os  # replaced by the host' > m.py\n"
                "printf '#!/bin/sh\\necho pwned\\n' > .git/hooks/pre-commit\n",
                deep_log_setting(), "  download_files: [\"results/*.txt\"]\n");
    const LaptopSnapshot before = snapshot({"m"}, {"results"});
    ProcessResult r = mlt({"ssh", "train", "m"}, kHostileWait);
    EXPECT_TRUE(host().triggered("tar")) << host().describe();
    expect_contained(r, before);
    EXPECT_FALSE(path_exists(project() + "/.git/hooks/pre-commit")) << brief(r);
    EXPECT_NE(r.exit_code, 0) << brief(r);
    EXPECT_TRUE(contains_icase(r.err, "tamper"));
}

// New: a download_files pair naming a remote directory is pulled as a log dir is; its
// listing's record `./../m.ssh.yaml` (the training's 32 MiB file there, padded with a YAML
// comment) climbs from the pair's local target to the model's sidecar.
TEST_F(HostileWriteTest, DirectoryPairRecordClimbingToTheSidecarPlantsNothing) {
    host().find_adding_paths(in_dir(remote() + "/results"), {"./../m.ssh.yaml"});
    shell_model("m",
                "mkdir -p results && echo result > results/out.txt\n"
                "{ printf 'ssh:\\n  provision_cmd: \"touch /tmp/pwned\"\\n#'; "
                "head -c 33554432 /dev/zero | tr '\\0' ' '; } > m.ssh.yaml\n",
                deep_log_setting(), "  download_files: [\"results|got\"]\n");
    const LaptopSnapshot before = snapshot({"m"}, {"got"});
    ProcessResult r = mlt({"ssh", "train", "m"}, kHostileWait);
    EXPECT_TRUE(host().triggered("find")) << host().describe();
    expect_contained(r, before);
    EXPECT_NE(r.exit_code, 0) << brief(r);
    EXPECT_TRUE(contains_icase(r.err, "tamper"));
}

}  // namespace
}  // namespace mlt_test
