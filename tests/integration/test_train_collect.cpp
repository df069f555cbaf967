// What collection brings back, and what it refuses: a download_files pair naming a remote
// directory, a remote dir whose name sha256sum would escape, and an archive that is a
// symlink (left by the job, or put there before the collection).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "harness/expect.h"
#include "harness/files.h"
#include "harness/train_fixture.h"

namespace mlt_test {
namespace {

using TrainCollectTest = TrainTest;

const char* const kShellSidecar = "ssh:\n  train_cmd: \"sh {spec}\"\n";

bool is_hex_sha256(const std::string& text) {
    return text.size() == 64 && text.find_first_not_of("0123456789abcdef") == std::string::npos;
}

TEST_F(TrainCollectTest, ADownloadFilesPairNamingADirectoryCopiesTheDirectory) {
    write_shell_model("dirs",
                      "set -e\n"
                      "mkdir -p results/sub 'results/with space'\n"
                      "echo top > results/top.txt\n"
                      "echo deep > results/sub/deep.txt\n"
                      "echo spaced > 'results/with space/s.txt'\n");
    write_model_settings("dirs", std::string(kShellSidecar) +
                                     "  download_files: [\"results|got_dir\", \"results/sub|" +
                                     sshd().dir() + "/abs_dir\"]\n");
    write_user_settings();
    ProcessResult r = mlt({"ssh", "train", "dirs"});
    ASSERT_EQ(r.exit_code, 0) << describe(r) << job_state("dirs");
    EXPECT_FALSE(has_text(r.err, "is not on the remote")) << describe(r);
    EXPECT_EQ(read_or_empty(project() + "/got_dir/top.txt"), "top\n") << describe(r);
    EXPECT_EQ(read_or_empty(project() + "/got_dir/sub/deep.txt"), "deep\n");
    EXPECT_EQ(read_or_empty(project() + "/got_dir/with space/s.txt"), "spaced\n");
    EXPECT_EQ(read_or_empty(sshd().dir() + "/abs_dir/deep.txt"), "deep\n") << describe(r);
    // A missing one is still a warning, not the run's failure.
    write_model_settings(
        "dirs", std::string(kShellSidecar) + "  download_files: [\"nothing_here|got_nothing\"]\n");
    ProcessResult again = mlt({"ssh", "train", "dirs"});
    ASSERT_EQ(again.exit_code, 0) << describe(again);
    EXPECT_TRUE(has_text(again.err, "'nothing_here|got_nothing' is not on the remote"))
        << describe(again);
    EXPECT_FALSE(path_exists(project() + "/got_nothing"));
}

// MLTK expands `$VAR` in a download_files path on the remote (expandvars there), relative to
// the remote dir: so does mlt, with the remote's environment.
TEST_F(TrainCollectTest, ADownloadFilesPairExpandsRemoteVariables) {
    write_shell_model("vars",
                      "echo mine > \"$LOGNAME.dl\"\n"
                      "echo braced > \"braced-$LOGNAME.dl\"\n");
    write_model_settings("vars", std::string(kShellSidecar) +
                                     "  download_files: ['$LOGNAME.dl|out.txt', "
                                     "'braced-${LOGNAME}.dl|braced.txt']\n");
    write_user_settings();
    ProcessResult r = mlt({"ssh", "train", "vars"});
    ASSERT_EQ(r.exit_code, 0) << describe(r) << job_state("vars");
    EXPECT_FALSE(has_text(r.err, "is not on the remote")) << describe(r);
    EXPECT_EQ(read_or_empty(project() + "/out.txt"), "mine\n") << describe(r);
    EXPECT_EQ(read_or_empty(project() + "/braced.txt"), "braced\n") << describe(r);
}

// sha256sum escapes its output line when the file name holds a backslash or a newline
// ("\<hash>  <name>"): the recorded hash must be the bare hash all the same.
TEST_F(TrainCollectTest, ARemoteDirWithABackslashAndANewlineCollectsTheArchive) {
    const std::string odd_dir = remote() + "/odd \\ dir\nhere";
    write_shell_model("odd", "printf 'the archive' > \"$MLT_ARCHIVE\"\n");
    // YAML double quotes: \\ is a backslash, \n a newline.
    write_model_settings("odd", std::string(kShellSidecar) + "  remote_dir: \"" + remote() +
                                    "/odd \\\\ dir\\nhere\"\n");
    write_user_settings();
    ProcessResult r = mlt({"ssh", "train", "odd"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    const std::string recorded = trim(read_or_empty(odd_dir + "/.mlt/odd/sha256"));
    EXPECT_TRUE(is_hex_sha256(recorded)) << "recorded: " << recorded;
    EXPECT_EQ(read_or_empty(local_archive("odd")), "the archive") << describe(r);
    EXPECT_EQ(sha256_of(local_archive("odd")), recorded);
}

// The training leaves <model>.mltk.zip as a symlink to a file it may not hand out: the job
// records no hash for it and mlt fetches nothing through it, says so, and collects the rest.
TEST_F(TrainCollectTest, AnArchiveTheJobLeftAsASymlinkIsNotCollectedButTheRestIs) {
    write_file(sshd().dir() + "/private.txt", "not for the archive\n");
    write_shell_model("linked",
                      "echo result > result.txt\n"
                      "ln -s '" +
                          sshd().dir() + "/private.txt' \"$MLT_ARCHIVE\"\n");
    write_model_settings("linked",
                         std::string(kShellSidecar) + "  download_files: [\"result.txt\"]\n");
    write_user_settings();
    ProcessResult r = mlt({"ssh", "train", "linked"});
    ASSERT_EQ(r.exit_code, 0) << describe(r) << job_state("linked");
    EXPECT_FALSE(path_exists(local_archive("linked"))) << describe(r);
    EXPECT_EQ(read_or_empty(job_file("linked", "sha256")), "") << job_state("linked");
    EXPECT_EQ(count_occurrences(r.out + r.err, "linked.mltk.zip is a symlink"), 1u) << describe(r);
    EXPECT_EQ(read_or_empty(project() + "/result.txt"), "result\n") << describe(r);
    EXPECT_TRUE(path_exists(local_logs("linked"))) << describe(r);
}

// The job wrote and hashed a real archive; before mlt collects it, it is replaced by a
// symlink to a file with the same bytes: collection does not follow it either, and the run
// says so first and fails; the older local archive beside the spec is never named as this
// run's result.
TEST_F(TrainCollectTest, AnArchiveReplacedByASymlinkBeforeCollectionIsNotFollowed) {
    write_shell_model("swapped",
                      "echo result > result.txt\n"
                      "printf 'archive bytes' > \"$MLT_ARCHIVE\"\n");
    write_model_settings("swapped",
                         std::string(kShellSidecar) + "  download_files: [\"result.txt\"]\n");
    write_user_settings();
    write_file(local_archive("swapped"), "last week's archive");
    const std::string hold = sshd().dir() + "/hold";
    env().set("MLT_TEST_HOLD", "collecting the results:" + hold);
    auto run = start_mlt({"ssh", "train", "swapped"});
    ASSERT_TRUE(wait_until([&] { return path_exists(hold); }, kEffectTimeout))
        << run->out() << run->err();
    const std::string archive = remote() + "/swapped.mltk.zip";
    const std::string elsewhere = sshd().dir() + "/elsewhere.zip";
    ASSERT_EQ(::rename(archive.c_str(), elsewhere.c_str()), 0);
    ASSERT_EQ(::symlink(elsewhere.c_str(), archive.c_str()), 0);
    ::unlink(hold.c_str());
    ProcessResult r = run->wait(kTrainTimeout);
    ASSERT_EQ(r.exit_code, 1) << describe(r) << job_state("swapped");
    EXPECT_EQ(read_or_empty(local_archive("swapped")), "last week's archive") << describe(r);
    EXPECT_TRUE(has_text(r.err, "swapped.mltk.zip of run "));
    EXPECT_TRUE(has_text(r.err,
                         "looks tampered with: it became a symlink after the job "
                         "recorded its sha256"))
        << describe(r);
    EXPECT_FALSE(has_text(r.out + r.err, "archive: " + local_archive("swapped"))) << describe(r);
    // The summary starts with what happened.
    const size_t summary = r.out.find("summary of run ");
    ASSERT_NE(summary, std::string::npos) << describe(r);
    const std::string first = r.out.substr(summary, r.out.find('\n', summary) - summary);
    EXPECT_NE(first.find("swapped: failed: "), std::string::npos) << first;
    EXPECT_NE(first.find("tampered"), std::string::npos) << first;
    EXPECT_EQ(read_or_empty(project() + "/result.txt"), "result\n") << describe(r);
}

// At its end the job records the sha256 of every file download_files name; what changed
// or appeared after that (here while mlt holds before the collection) is not this run's:
// a changed file is not placed (the local copy stays, and the run fails saying so), a new
// one is not fetched (a warning); the rest comes.
TEST_F(TrainCollectTest, DownloadFilesThatChangedAfterTheJobEndedAreNotPlaced) {
    write_shell_model("rec",
                      "set -e\n"
                      "mkdir -p out/dir\n"
                      "echo g1 > out/a.txt\n"
                      "echo g2 > out/b.txt\n"
                      "echo p1 > one.txt\n"
                      "echo d1 > out/dir/x.txt\n"
                      "echo d2 > out/dir/y.txt\n");
    write_model_settings("rec", std::string(kShellSidecar) +
                                    "  download_files: ['out/*.txt', 'one.txt|got_one.txt', "
                                    "'out/dir|got_dir']\n");
    write_user_settings();
    make_dir(project() + "/out", 0755);
    write_file(project() + "/out/b.txt", "last week's b\n");
    write_file(project() + "/got_one.txt", "last week's one\n");
    const std::string hold = sshd().dir() + "/hold";
    env().set("MLT_TEST_HOLD", "collecting the results:" + hold);
    auto run = start_mlt({"ssh", "train", "rec"});
    ASSERT_TRUE(wait_until([&] { return path_exists(hold); }, kEffectTimeout))
        << run->out() << run->err();
    write_file(remote() + "/out/b.txt", "changed\n");
    write_file(remote() + "/out/c.txt", "new\n");
    write_file(remote() + "/one.txt", "changed\n");
    write_file(remote() + "/out/dir/x.txt", "changed\n");
    write_file(remote() + "/out/dir/z.txt", "new\n");
    ::unlink(hold.c_str());
    ProcessResult r = run->wait(kTrainTimeout);
    ASSERT_EQ(r.exit_code, 1) << describe(r) << job_state("rec");
    EXPECT_TRUE(has_text(r.err, "3 file(s) of run ")) << describe(r);
    EXPECT_TRUE(has_text(r.err, "are not as its job recorded them")) << describe(r);
    EXPECT_EQ(read_or_empty(project() + "/out/a.txt"), "g1\n") << describe(r);
    EXPECT_EQ(read_or_empty(project() + "/out/b.txt"), "last week's b\n");
    EXPECT_FALSE(path_exists(project() + "/out/c.txt"));
    EXPECT_EQ(read_or_empty(project() + "/got_one.txt"), "last week's one\n");
    EXPECT_EQ(read_or_empty(project() + "/got_dir/y.txt"), "d2\n");
    EXPECT_FALSE(path_exists(project() + "/got_dir/x.txt"));
    EXPECT_FALSE(path_exists(project() + "/got_dir/z.txt"));
    EXPECT_EQ(count_occurrences(r.err, "were not there when the job of run"), 2u) << describe(r);
    EXPECT_TRUE(path_exists(local_logs("rec")));
    // `download` checks against the same record.
    env().unset("MLT_TEST_HOLD");
    ProcessResult again = mlt({"ssh", "download", "rec"});
    EXPECT_EQ(again.exit_code, 1) << describe(again);
    EXPECT_EQ(read_or_empty(project() + "/out/b.txt"), "last week's b\n") << describe(again);
}

}  // namespace
}  // namespace mlt_test
