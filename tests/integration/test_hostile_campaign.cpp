// A campaign of attacks from a hostile host that the other hostile suites do not make: the
// job's download_files record as mlt reads it (forged, huge, pointing a pair elsewhere, names
// with escapes), escapes in names `status` shows and in a recorded log dir, mlt's own names in
// the log dir, an archive sent with bytes after it, a `date` that lies about the clock, and a
// tar stream whose symlink entry precedes a file through it. Each test states the property
// (docs/security.md) it guards.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

#include "harness/expect.h"
#include "harness/files.h"
#include "harness/hostile_fixture.h"

namespace mlt_test {
namespace {

// The sha256 of no bytes: any well-formed hash will do for a forged record.
const char* const kSomeSha = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

const char* const kLogTraining =
    "mkdir -p \"$MLT_LOG_DIR\" && echo 'a log line' > \"$MLT_LOG_DIR/train.txt\"\n"
    "echo trained\n";

// The lines of `text` that start with "mlt:" and hold a raw control byte of a terminal
// sequence (ESC, BEL, CSI as one byte); empty when there is none.
std::string own_lines_with_escapes(const std::string& text) {
    std::string found;
    for (const auto& line : split_lines(text))
        if (line.rfind("mlt:", 0) == 0 && line.find_first_of("\x1b\x07\x9b") != std::string::npos)
            found += line.substr(0, 200) + "\n";
    return found;
}

// Any raw ESC or BEL in `text` (for output that is mlt's own from end to end).
bool has_raw_escape(const std::string& text) {
    return text.find_first_of("\x1b\x07") != std::string::npos;
}

class HostileCampaignTest : public HostileTrainTest {
  protected:
    // A `head` that, when it reads the download_files record of `model` (the collection's
    // `head -c N -- .../.mlt/<model>/download_files`), sends the record as it is, then runs
    // the sh `more` (which prints more NUL-terminated records).
    void record_adding(const std::string& model, const std::string& more) const {
        host().wrap_tool("head", args_contain("/.mlt/" + model + "/download_files"), "",
                         "  " + more);
    }
};

// (c) A million `p I SHA` records after the honest one, each a pair index of its own (~74
// bytes each, ~288 bytes each once parsed): this took mlt to 266 MiB before the record was
// refused. Now an index beyond the settings' pairs is no record at once; and a flood of
// well-formed `f` records (each a name of its own) is read up to 16 MiB: either way mlt
// stays within the memory bound.
TEST_F(HostileCampaignTest, AHugeDownloadFilesRecordStaysWithinTheMemoryBound) {
    for (const char* kind : {"p %d ", "f "}) {
        SCOPED_TRACE(kind);
        const std::string name = std::string(kind) == "f " ? " results/flood%d" : "";
        record_adding("m", std::string("awk 'BEGIN { for (i = 0; i < 1000000; i++) printf \"") +
                               kind + kSomeSha + name + "\\n\", i" + (name.empty() ? "" : ", i") +
                               " }' | tr '\\n' '\\000'");
        shell_model("m", "mkdir -p results && echo result > results/out.bin\necho trained\n",
                    deep_log_setting(), "  download_files: [\"results/out.bin|got.bin\"]\n");
        const LaptopSnapshot before = snapshot({"m"}, {"got.bin"});
        ProcessResult r = mlt({"ssh", "train", "m", "--force"}, kHostileWait);
        EXPECT_TRUE(host().triggered("head")) << host().describe();
        RecordProperty(std::string("peak_rss_kib_") + kind[0], std::to_string(r.peak_rss_kib));
        expect_contained(r, before);
        EXPECT_NE(r.exit_code, 0) << brief(r);
        EXPECT_TRUE(contains_icase(r.err, "tamper")) << brief(r);
    }
}

// (a) A forged glob record whose name climbs out of the remote dir (and, kept as it is, out
// of the spec dir to ~/.bashrc): the record's gate refuses it, nothing is written.
TEST_F(HostileCampaignTest, AGlobRecordClimbingOutIsTamperingAndWritesNothing) {
    const std::string bashrc = plant_bashrc();
    record_adding("m", std::string("printf 'f ") + kSomeSha + " ../../../.bashrc\\0'");
    shell_model("m", "mkdir -p results && echo result > results/out.txt\necho trained\n",
                deep_log_setting(), "  download_files: [\"results/*.txt\"]\n");
    const LaptopSnapshot before = snapshot({"m"}, {"results"});
    ProcessResult r = mlt({"ssh", "train", "m"}, kHostileWait);
    EXPECT_TRUE(host().triggered("head")) << host().describe();
    expect_contained(r, before);
    EXPECT_EQ(read_or_empty(env().home() + "/.bashrc"), bashrc) << brief(r);
    EXPECT_NE(r.exit_code, 0) << brief(r);
    EXPECT_TRUE(contains_icase(r.err, "tamper")) << brief(r);
}

// (d)+(b) An `x` record (a pair's remote side, not gated as a name) with an OSC title write
// and a newline followed by a forged "mlt: archive: ..." line. No raw escape may reach mlt's
// own lines, and no line may claim an archive this run never recorded.
TEST_F(HostileCampaignTest, APairRecordWithEscapesAndANewlineForgesNoLine) {
    record_adding("m", std::string("printf 'x 0 /nonexistent\\033]0;owned\\007\\nmlt: archive: ") +
                           local_archive("m") + "\\0p 0 " + kSomeSha + "\\0'");
    shell_model("m", "mkdir -p results && echo result > results/out.bin\necho trained\n",
                deep_log_setting(), "  download_files: [\"results/out.bin|got.bin\"]\n");
    const LaptopSnapshot before = snapshot({"m"}, {"got.bin"});
    ProcessResult r = mlt({"ssh", "-v", "train", "m"}, kHostileWait);
    EXPECT_TRUE(host().triggered("head")) << host().describe();
    expect_contained(r, before);
    EXPECT_EQ(own_lines_with_escapes(r.out + "\n" + r.err), "") << brief(r);
    EXPECT_TRUE(lines_starting(r.out + "\n" + r.err, "mlt: archive:").empty())
        << "a line claims an archive that run never recorded\n"
        << brief(r);
    EXPECT_FALSE(path_exists(project() + "/got.bin")) << brief(r);
    EXPECT_NE(r.exit_code, 0) << brief(r);
}

// (a) An `x` record points a pair at a directory outside the remote dir (the remote user's
// secrets, say) with a `p` record for a file there: whatever comes, it may land only under
// the pair's own target. (A `p` name that climbs, `../../.ssh/id_rsa`, is refused by the
// record's gate as tampering: checked by hand, not kept as a test of its own.)
TEST_F(HostileCampaignTest, APairRecordPointingElsewhereWritesOnlyUnderItsTarget) {
    const std::string secret = remote_logs_root() + "/secret";
    make_dir(secret, 0755);
    write_file(secret + "/id_rsa", "the remote's key\n");
    const std::string sha = sha256_of(secret + "/id_rsa");
    record_adding("m", "printf 'x 0 " + secret + "\\0p 0 " + sha + " id_rsa\\0'");
    // The pair's own file is never written: the honest record holds no `p 0`.
    shell_model("m", "echo trained\n", deep_log_setting(),
                "  download_files: [\"results/none.bin|got\"]\n");
    const LaptopSnapshot before = snapshot({"m"}, {"got"});
    ProcessResult r = mlt({"ssh", "train", "m"}, kHostileWait);
    EXPECT_TRUE(host().triggered("head")) << host().describe();
    expect_contained(r, before);
    EXPECT_FALSE(path_exists(env().home() + "/.ssh/id_rsa")) << brief(r);
    // The pair's remote side is the host's to say (the job's expansion of `from`): what it
    // names may come, into the pair's target only.
    if (path_exists(project() + "/got/id_rsa")) {
        EXPECT_EQ(read_or_empty(project() + "/got/id_rsa"), "the remote's key\n") << brief(r);
    }
}

// (d) `status` shows the names of the remote's model dirs and the run ids of their locks:
// a model dir and a run id that carry a screen clear, an OSC title and a cursor move.
TEST_F(HostileCampaignTest, StatusOfNamesWithEscapesPrintsNoEscape) {
    const std::string evil = "m\x1b]0;owned\x07\x1b[2J";
    make_finished_job("m", 0);
    make_finished_job(evil, 0);
    write_file(
        job_file(evil, "lock"),
        "owner=test@localhost\nstarted=1700000000\nrun=\x1b[H\x1b[2Jrun\x1b]52;c;cHduZWQ=\x07\n");
    write_file(job_file(evil, "run_id"), "\x1b[H\x1b[2Jrun\x1b]52;c;cHduZWQ=\x07\n");
    write_user_settings();
    host().wrap_tool("date", has_arg("+%s"), "");
    const LaptopSnapshot before = snapshot({"m"});
    ProcessResult r = mlt({"ssh", "status"}, kHostileWait);
    EXPECT_TRUE(host().triggered("date")) << host().describe();
    expect_contained(r, before);
    EXPECT_FALSE(has_raw_escape(r.out)) << brief(r);
    EXPECT_EQ(own_lines_with_escapes(r.err), "") << brief(r);
    EXPECT_TRUE(has_text(r.out, "\\x1b") || has_text(r.out, "\\033") || has_text(r.out, "\\e"))
        << "the model with escapes is not shown at all\n"
        << brief(r);
}

// (d) The job's recorded log dir is rewritten to a dir whose name holds an OSC title write,
// and its listing holds a record that climbs: the tampering message names that dir.
TEST_F(HostileCampaignTest, ALogDirRecordWithEscapesStaysEscapedInTheTamperingMessage) {
    shell_model("m", kLogTraining, deep_log_setting());
    ASSERT_EQ(mlt({"ssh", "train", "m"}).exit_code, 0);
    const std::string dir = remote_logs_root() + "/esc\x1b]0;owned\x07\x1b[2Jdir";
    make_dir(dir, 0755);
    write_file(dir + "/train.txt", "a log line\n");
    write_file(remote_logs_root() + "/.bashrc", "echo 'the remote ran this'\n");
    write_file(job_file("m", "log_dir"), dir + "\n");
    host().find_adding_paths(in_dir(dir), {"./../.bashrc"});
    const std::string bashrc = plant_bashrc();
    const LaptopSnapshot before = snapshot({"m"});
    ProcessResult r = mlt({"ssh", "download", "m"}, kHostileWait);
    EXPECT_TRUE(host().triggered("find")) << host().describe();
    expect_contained(r, before);
    EXPECT_EQ(read_or_empty(env().home() + "/.bashrc"), bashrc) << brief(r);
    EXPECT_EQ(own_lines_with_escapes(r.out + "\n" + r.err), "") << brief(r);
    EXPECT_NE(r.exit_code, 0) << brief(r);
    EXPECT_TRUE(contains_icase(r.err, "tamper")) << brief(r);
}

// (b) The log dir holds mlt's own console copy name and that name + ".remote": the first is
// stored aside as the second, which the remote also has. The console copy must stay the
// console's, and neither remote file may vanish silently in a run that says the logs came.
TEST_F(HostileCampaignTest, NamesCollidingAfterTheRemoteRenamingLoseNothingSilently) {
    host().wrap_tool("find", in_dir(deep_log_dir("m")), "");
    shell_model("m",
                "mkdir -p \"$MLT_LOG_DIR\"\n"
                "echo 'A: the remote file named as the console copy' > "
                "\"$MLT_LOG_DIR/mltk_ssh_train_m.log\"\n"
                "echo 'B: the remote file named as its renaming' > "
                "\"$MLT_LOG_DIR/mltk_ssh_train_m.log.remote\"\n"
                "echo trained\n",
                deep_log_setting());
    const LaptopSnapshot before = snapshot({"m"});
    ProcessResult r = mlt({"ssh", "train", "m"}, kHostileWait);
    EXPECT_TRUE(host().triggered("find")) << host().describe();
    expect_contained(r, before);
    const std::string console = read_or_empty(local_console("m"));
    EXPECT_TRUE(has_text(console, "trained")) << console << brief(r);
    EXPECT_TRUE(lacks_text(console, "A: the remote")) << console << brief(r);
    std::string local_text;
    for (const auto& name : {"/mltk_ssh_train_m.log.remote", "/mltk_ssh_train_m.log.remote.remote",
                             "/mltk_ssh_train_m.log.remote.1"})
        local_text += read_or_empty(local_logs("m") + name);
    const bool both =
        has_text(local_text, "A: the remote") && has_text(local_text, "B: the remote");
    EXPECT_TRUE(both || r.exit_code != 0 || contains_icase(r.err, "mltk_ssh_train_m.log.remote"))
        << "one of the two remote files was lost without a word, exit " << r.exit_code
        << "; local .remote holds: " << local_text << "\n"
        << brief(r);
}

// (b) The `head` that sends the archive sends 1 MiB more after it. Either the archive is
// exactly the remote one, or the run fails and names no archive; an older local one stays.
TEST_F(HostileCampaignTest, AnArchiveSentWithExtraBytesIsNoLie) {
    write_file(local_archive("m"), "an archive of an earlier run");
    host().wrap_tool("head", args_contain("m.mltk.zip"), "",
                     "  " + HostileHost::real("head") + " -c 1048576 /dev/zero");
    shell_model("m", "printf 'the archive of this run' > \"$MLT_ARCHIVE\"\necho trained\n",
                deep_log_setting());
    const LaptopSnapshot before = snapshot({"m"});
    ProcessResult r = mlt({"ssh", "train", "m"}, kHostileWait);
    EXPECT_TRUE(host().triggered("head")) << host().describe();
    expect_contained(r, before);
    const std::string local = read_or_empty(local_archive("m"));
    if (r.exit_code == 0) {
        EXPECT_EQ(local, "the archive of this run") << brief(r);
    } else {
        EXPECT_TRUE(lacks_text(r.out + r.err, "archive: " + local_archive("m"))) << brief(r);
        EXPECT_EQ(local, "an archive of an earlier run") << brief(r);
    }
}

// (c) A `date` that says it is 2001 whenever mlt reads the clock with nanoseconds (the
// listing's clock, against which a file's ctime is waited for): the files look written 20
// years in the future. The pull may wait a bounded while, not until the clock catches up.
TEST_F(HostileCampaignTest, ADateFarInThePastDoesNotHoldThePull) {
    host().add_tool("date", "if " + args_contain("%N") +
                                "; then hostile_mark date; echo 1000000000.000000000; exit 0; fi\n"
                                "exec " +
                                HostileHost::real("date") + " \"$@\"\n");
    shell_model("m",
                "mkdir -p \"$MLT_LOG_DIR\"\n"
                "for i in 1 2 3 4 5; do echo \"log $i\" > \"$MLT_LOG_DIR/f$i.txt\"; done\n"
                "echo trained\n",
                deep_log_setting());
    const LaptopSnapshot before = snapshot({"m"});
    ProcessResult r = mlt({"ssh", "train", "m"}, kHostileWait);
    EXPECT_TRUE(host().triggered("date")) << host().describe();
    // Among what this checks: mlt ended by itself, not killed at the end of the wait, which
    // a wait for the clock to catch up (20 years) would have come to.
    expect_contained(r, before);
    if (r.exit_code == 0) {
        EXPECT_EQ(read_or_empty(local_logs("m") + "/f5.txt"), "log 5\n");
    }
}

// (a) The log pull's tar stream holds a symlink entry `sub` -> ../../../.. (from the staging
// dir: HOME) and then `sub/.bashrc`, a name the listing did hold. Nothing may be written
// through the link.
TEST_F(HostileCampaignTest, ATarSymlinkEntryThenAFileThroughItWritesNothingOutside) {
    const std::string bashrc = plant_bashrc();
    const std::string py =
        "import io, sys, tarfile\n"
        "t = tarfile.open(fileobj=sys.stdout.buffer, mode='w|')\n"
        "i = tarfile.TarInfo('sub'); i.type = tarfile.SYMTYPE; i.linkname = '../../../..'\n"
        "t.addfile(i)\n"
        "for name, data in (('sub/.bashrc', b'pwned\\n'), ('train.txt', b'a log line\\n')):\n"
        "    i = tarfile.TarInfo(name); i.size = len(data); i.mode = 0o644\n"
        "    t.addfile(i, io.BytesIO(data))\n"
        "t.close()\n";
    write_file(host().dir() + "/evil_tar.py", py);
    host().add_tool("tar", "if " + in_dir(deep_log_dir("m")) + " && " + has_arg("-cf") +
                               "; then\n"
                               "  hostile_mark tar\n"
                               "  " +
                               HostileHost::real("cat") +
                               " > /dev/null\n"
                               "  exec python3 '" +
                               host().dir() +
                               "/evil_tar.py'\n"
                               "fi\n"
                               "exec " +
                               HostileHost::real("tar") + " \"$@\"\n");
    shell_model("m",
                "mkdir -p \"$MLT_LOG_DIR/sub\" && echo 'a log line' > \"$MLT_LOG_DIR/train.txt\"\n"
                "echo pwned > \"$MLT_LOG_DIR/sub/.bashrc\"\necho trained\n",
                deep_log_setting());
    const LaptopSnapshot before = snapshot({"m"});
    ProcessResult r = mlt({"ssh", "train", "m"}, kHostileWait);
    EXPECT_TRUE(host().triggered("tar")) << host().describe();
    expect_contained(r, before);
    EXPECT_EQ(read_or_empty(env().home() + "/.bashrc"), bashrc) << brief(r);
    EXPECT_NE(r.exit_code, 0) << brief(r);
    EXPECT_TRUE(contains_icase(r.err, "tamper")) << brief(r);
}

// (b) After the job ended, a process that escaped it rewrites `run_id` to another run: the
// follow's result then names another run, which must not be collected as this one's.
TEST_F(HostileCampaignTest, ARunIdRewrittenAfterTheJobEndedIsNoResult) {
    write_file(local_archive("m"), "an archive of an earlier run");
    shell_model(
        "m",
        "printf 'the archive of this run' > \"$MLT_ARCHIVE\"\n" +
            escaping_process("i=0; while [ ! -s '" + job_file("m", "exit_status") +
                             "' ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done\n"
                             "printf 'deadbeef-000000\\n' > '" +
                             job_file("m", "run_id") + "' && " + host().mark("swapped") + "\n") +
            "echo trained\n",
        deep_log_setting());
    const std::string hold = sshd().dir() + "/hold";
    env().set("MLT_TEST_HOLD", "collecting the results:" + hold);
    const LaptopSnapshot before = snapshot({"m"});
    auto run = start_mlt({"ssh", "train", "m"});
    const bool swapped =
        wait_until([&] { return path_exists(host().state_file("swapped")); }, kTrainTimeout);
    // The hold is let go whenever it comes: on a loaded machine mlt may reach the collection
    // only after a first wait has given up on it, and would then hold there for good.
    wait_until(
        [&] {
            ::unlink(hold.c_str());
            return !process_alive(run->pid());
        },
        kHostileWait);
    // Killed if still running; one that has exited (a zombie to process_alive) is reaped
    // and its output read to the end, which a zero wait could cut short under load.
    ProcessResult r =
        run->wait(process_alive(run->pid()) ? std::chrono::milliseconds(0) : kEffectTimeout);
    ASSERT_TRUE(swapped) << job_state("m") << brief(r);
    expect_contained(r, before);
    if (r.exit_code == 0) {
        EXPECT_EQ(read_or_empty(local_archive("m")), "the archive of this run") << brief(r);
    } else {
        EXPECT_TRUE(lacks_text(r.out + r.err, "archive: " + local_archive("m"))) << brief(r);
    }
}

}  // namespace
}  // namespace mlt_test
