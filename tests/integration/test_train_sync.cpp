// Incremental sync through a real sshd: a workspace is sent once and then only what changed,
// and the log dir pull of a --resume fetches only new and changed files. "Not sent" is
// proved by mlt's own counts and by a copy altered with its size and mtime kept: had it been
// sent again, the alteration would be gone.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "../common/test_bytes.h"
#include "harness/expect.h"
#include "harness/files.h"
#include "harness/train_fixture.h"

namespace mlt_test {
namespace {

const std::string kShellSidecar = "ssh:\n  train_cmd: \"sh {spec}\"\n";
// transfer.connections as a number: the fixed rules of streams and channels, not the cost
// model's (which opens one stream over a near link).
const char* const kFixedStreams = "  transfer: {connections: 1}\n";

using Tree = std::vector<std::pair<std::string, std::string>>;  // relative path, content

void write_tree(const std::string& root, const Tree& files) {
    for (const auto& [rel, content] : files) {
        std::filesystem::create_directories(std::filesystem::path(root + "/" + rel).parent_path());
        write_file(root + "/" + rel, content);
    }
}

// Each file of `files` under `root` has the same content.
void expect_tree(const std::string& root, const Tree& files) {
    for (const auto& [rel, content] : files)
        EXPECT_TRUE(read_or_empty(root + "/" + rel) == content) << rel << " differs";
}

class TrainSyncTest : public TrainTest {
  protected:
    std::string workspace() const { return sshd().dir() + "/ws"; }
    // Writes `files` as workspace() of a shell model `model` that echoes, and trains it
    // with `mlt ssh -v train MODEL --workspace WS`; `settings`: more lines of its sidecar.
    ProcessResult train_workspace(const std::string& model, const Tree& files,
                                  const std::string& settings = "") {
        write_tree(workspace(), files);
        write_shell_model(model, "echo trained\n");
        write_model_settings(model, kShellSidecar + settings);
        write_user_settings();
        return mlt({"ssh", "-v", "train", model, "--workspace", workspace()});
    }
};

// Rewrites `path` with `content` (same size) and puts its mtime back, so that only the
// content tells whether it was transferred again.
void alter_keeping_size_and_mtime(const std::string& path, const std::string& content) {
    struct stat st {};
    ASSERT_EQ(lstat(path.c_str(), &st), 0) << path;
    ASSERT_EQ(static_cast<size_t>(st.st_size), content.size()) << path;
    const timespec times[2] = {{0, UTIME_OMIT}, st.st_mtim};
    write_file(path, content, st.st_mode & 07777);
    ASSERT_EQ(utimensat(AT_FDCWD, path.c_str(), times, 0), 0) << path;
}

// More than SessionRemote::kInlineInput, so the first upload takes an exec channel and the
// later small ones the control shell: both paths carry the odd names.
std::string big_content() {
    std::string s(300 * 1024, '\0');
    for (size_t i = 0; i < s.size(); ++i) s[i] = static_cast<char>((i * 7919) >> 3);
    return s;
}

TEST_F(TrainSyncTest, ASecondWorkspaceRunUploadsNothingAndAThirdOnlyTheEdit) {
    const std::string ws = sshd().dir() + "/work space";
    const std::vector<std::string> names = {
        "it's \"q\" $x `y`.txt", "new\nline.txt", "-dash", "tab\there",
        "raw-\xff\xfe",          "sub/empty"};
    make_dir(ws, 0755);
    make_dir(ws + "/sub", 0755);
    for (const auto& n : names) write_file(ws + "/" + n, n == "sub/empty" ? "" : "<" + n + ">");
    write_file(ws + "/sub/big.bin", big_content());
    write_file(ws + "/.gitignore", "*.log\n");
    write_file(ws + "/skip.log", "ignored\n");
    write_shell_model("synced", "echo trained\n");
    write_model_settings("synced", kShellSidecar);
    write_user_settings();
    const std::vector<std::string> train = {"ssh", "train", "synced", "--workspace", ws};

    // The spec, the odd names, big.bin and .gitignore: 9 files.
    ProcessResult r = mlt(train);
    ASSERT_EQ(r.exit_code, 0) << describe(r) << job_state("synced");
    EXPECT_TRUE(has_text(r.out, "uploaded 9 file(s)")) << describe(r);
    for (const auto& n : names)
        EXPECT_EQ(read_or_empty(remote() + "/" + n), read_file(ws + "/" + n)) << n;
    EXPECT_TRUE(read_or_empty(remote() + "/sub/big.bin") == big_content()) << "big.bin differs";
    EXPECT_FALSE(path_exists(remote() + "/skip.log"));

    alter_keeping_size_and_mtime(remote() + "/new\nline.txt", "<NEW\nLINE.TXT>");
    r = mlt(train);
    ASSERT_EQ(r.exit_code, 0) << describe(r) << job_state("synced");
    EXPECT_TRUE(has_text(r.out, "uploaded 0 file(s), 0 bytes (9 unchanged)")) << describe(r);
    EXPECT_EQ(read_or_empty(remote() + "/new\nline.txt"), "<NEW\nLINE.TXT>")
        << "an unchanged file was sent again";

    write_file(ws + "/it's \"q\" $x `y`.txt", "edited, and longer than before");
    write_file(ws + "/skip.log", "changed, still ignored\n");
    r = mlt(train);
    ASSERT_EQ(r.exit_code, 0) << describe(r) << job_state("synced");
    EXPECT_TRUE(has_text(r.out, "uploaded 1 file(s), 30 bytes (8 unchanged)")) << describe(r);
    EXPECT_EQ(read_or_empty(remote() + "/it's \"q\" $x `y`.txt"), "edited, and longer than before");
    auto runs = history();
    ASSERT_EQ(runs.size(), 3u) << read_or_empty(history_path());
    EXPECT_EQ(runs[1]["bytes_up"], "0") << read_or_empty(history_path());
    EXPECT_EQ(runs[2]["bytes_up"], "30") << read_or_empty(history_path());
}

size_t occurrences(const std::string& text, const std::string& part) {
    size_t n = 0;
    for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
    return n;
}

// What -vv names as replies sent ahead (docs/remote-protocol.md, "Commands sent ahead"): each
// such command up to the next log line.
std::vector<std::string> replies_sent_ahead(const std::string& err) {
    std::vector<std::string> ahead;
    for (size_t at = err.find("(sent ahead): "); at != std::string::npos;
         at = err.find("(sent ahead): ", at + 1))
        ahead.push_back(err.substr(at, err.find("\nmlt: ", at) - at));
    return ahead;
}

// The start on the condition that nothing is to be uploaded, the check for the compressor
// and the upload's listing go with the lock's command; the first follow segment with the
// start's, with the collection's listing on a guess (a short job ends within that segment).
// A first run uploads, so its conditional start does not start the job: the start goes after
// the upload. A second run with nothing to upload starts the job in the lock's round trip:
// its listing, sent on a guess, is not asked for (the follow goes without waiting for its
// reply), and the control shell is kept.
TEST_F(TrainSyncTest, TheStartTheCompressorCheckTheListingsAndTheFirstFollowAreSentAhead) {
    write_tree(workspace(), {{"a.txt", "a"}, {"sub/b.txt", "b"}});
    write_shell_model("ahead", "echo trained\n");
    write_model_settings("ahead", kShellSidecar);
    write_user_settings();
    const std::vector<std::string> train = {"ssh",   "-vv",         "train",
                                            "ahead", "--workspace", workspace()};
    ProcessResult r = mlt(train);
    ASSERT_EQ(r.exit_code, 0) << describe(r) << job_state("ahead");
    std::vector<std::string> ahead = replies_sent_ahead(r.err);
    ASSERT_EQ(ahead.size(), 5u) << describe(r);
    // The link's round trip is known before the lock's command goes (what goes ahead with it
    // depends on it): measured by the authentication service's answer, before any channel.
    const size_t measured = r.err.find("(the authentication service's answer)");
    ASSERT_NE(measured, std::string::npos) << describe(r);
    EXPECT_LT(measured, r.err.find("starting the control shell")) << describe(r);
    EXPECT_TRUE(has_text(ahead[0], "start.ticket.")) << ahead[0];      // the start
    EXPECT_TRUE(has_text(ahead[1], "c=zstd\n")) << ahead[1];           // the check
    EXPECT_TRUE(has_text(ahead[2], "xargs -0 -r sh -c")) << ahead[2];  // the listing
    EXPECT_TRUE(has_text(ahead[3], "mlt_send")) << ahead[3];           // the follow
    EXPECT_TRUE(has_text(ahead[4], "find . -type f")) << ahead[4];     // the log dir's
    EXPECT_TRUE(has_text(r.out, "uploaded 3 file(s)")) << describe(r);
    EXPECT_EQ(occurrences(r.err, "mlt_phase starting"), 3u) << describe(r);  // and start_job's
    EXPECT_FALSE(has_text(r.err, "on a guess is not asked for")) << describe(r);
    EXPECT_FALSE(has_text(r.err, "dropping the control shell")) << describe(r);

    r = mlt(train);
    ASSERT_EQ(r.exit_code, 0) << describe(r) << job_state("ahead");
    ahead = replies_sent_ahead(r.err);
    ASSERT_EQ(ahead.size(), 3u) << describe(r);
    EXPECT_TRUE(has_text(ahead[0], "start.ticket.")) << ahead[0];
    EXPECT_TRUE(has_text(ahead[1], "c=zstd\n")) << ahead[1];
    EXPECT_TRUE(has_text(ahead[2], "find . -type f")) << ahead[2];  // with the follow
    EXPECT_TRUE(has_text(r.err, "on a guess is not asked for: B=")) << describe(r);
    EXPECT_FALSE(has_text(r.err, "dropping the control shell")) << describe(r);
    // No start of its own: the one with the lock started the job (its text is logged when it
    // is sent and when its reply is read).
    EXPECT_EQ(occurrences(r.err, "mlt_phase starting"), 2u) << describe(r);
    EXPECT_TRUE(has_text(r.out, "uploaded 0 file(s), 0 bytes (3 unchanged)")) << describe(r);
    EXPECT_EQ(lines_starting(r.out, "trained").size(), 1u) << describe(r);
    EXPECT_EQ(
        lines_starting(read_file(local_logs("ahead") + "/mltk_ssh_train_ahead.log"), "trained")
            .size(),
        1u);
}

TEST_F(TrainSyncTest, TheLogDirPullOfAResumeFetchesOnlyNewAndChangedFiles) {
    // The first collection fails on a download whose local side cannot be written yet; the
    // log dir was pulled before it, and the lock stays for --resume.
    write_shell_model("logged",
                      "set -e\n"
                      "mkdir -p \"$MLT_LOG_DIR/ckpt dir\"\n"
                      "printf 'metrics v1\\n' > \"$MLT_LOG_DIR/metrics.csv\"\n"
                      "printf 'c1' > \"$MLT_LOG_DIR/ckpt dir/c1.bin\"\n"
                      "printf 'late\\n' > late.txt\n");
    write_model_settings("logged", std::string(kShellSidecar) +
                                       "  download_files: [\"late.txt|blocked/got.txt\"]\n");
    write_user_settings();
    write_file(project() + "/blocked", "a file, not a directory\n");
    ProcessResult r = mlt({"ssh", "train", "logged"});
    ASSERT_EQ(r.exit_code, 1) << describe(r) << job_state("logged");
    const std::string logs = local_logs("logged");
    const std::string remote_logs = remote_logs_root() + "/logged";
    ASSERT_EQ(read_or_empty(logs + "/metrics.csv"), "metrics v1\n") << describe(r);
    ASSERT_EQ(read_or_empty(logs + "/ckpt dir/c1.bin"), "c1") << describe(r);

    alter_keeping_size_and_mtime(logs + "/metrics.csv", "METRICS V1\n");
    append_file(remote_logs + "/ckpt dir/c1.bin", "+more");  // 7 bytes now
    write_file(remote_logs + "/new 'one'.txt", "new\n");     // 4 bytes
    // late.txt (5 bytes), as the job wrote it: only that version is taken.
    ::unlink((project() + "/blocked").c_str());
    r = mlt({"ssh", "train", "logged", "--resume"});
    ASSERT_EQ(r.exit_code, 0) << describe(r) << job_state("logged");
    EXPECT_EQ(read_or_empty(logs + "/metrics.csv"), "METRICS V1\n")
        << "an unchanged log file was fetched again";
    EXPECT_EQ(read_or_empty(logs + "/ckpt dir/c1.bin"), "c1+more");
    EXPECT_EQ(read_or_empty(logs + "/new 'one'.txt"), "new\n");
    EXPECT_EQ(read_or_empty(project() + "/blocked/got.txt"), "late\n");
    auto runs = history();
    ASSERT_EQ(runs.size(), 1u) << read_or_empty(history_path());
    EXPECT_EQ(runs[0]["bytes_down"], "16") << read_or_empty(history_path());
}

// A relative remote_log_dir is relative to the remote dir, where the job runs: the pull
// must look there too, not in the login directory.
TEST_F(TrainSyncTest, ARelativeRemoteLogDirIsPulledFromTheRemoteDir) {
    write_shell_model("rel",
                      "mkdir -p \"$MLT_LOG_DIR\" && echo 42 > \"$MLT_LOG_DIR/metric.txt\"\n");
    write_model_settings("rel", std::string(kShellSidecar) + "  remote_log_dir: \"out/{model}\"\n");
    write_user_settings();
    ProcessResult r = mlt({"ssh", "train", "rel"});
    ASSERT_EQ(r.exit_code, 0) << describe(r) << job_state("rel");
    EXPECT_EQ(read_or_empty(remote() + "/out/rel/metric.txt"), "42\n");
    EXPECT_EQ(read_or_empty(local_logs("rel") + "/metric.txt"), "42\n") << describe(r);
}

// Enough to send (37 MiB) for four tar streams on four channels of the one connection:
// three of incompressible files and one compressed (the text file and the small ones).
// Everything lands; a stream that fails is reported with tar's words after the others end.
TEST_F(TrainSyncTest, ABigWorkspaceGoesInParallelStreams) {
    const std::string ws = workspace();
    Tree files;
    for (int i = 0; i < 3; ++i)
        files.push_back(
            {"data/weights" + std::to_string(i) + ".bin", mlt::test::noise_bytes(9 << 20, 7 + i)});
    std::string text;
    for (int row = 0; text.size() < (9u << 20); ++row)
        text += "step," + std::to_string(row) + ",loss,0.5\n";
    files.push_back({"data/metrics.csv", text});
    for (int i = 0; i < 40; ++i)
        files.push_back(
            {"src/m" + std::to_string(i) + " 'q'.py", "print(" + std::to_string(i) + ")\n"});
    // A number of connections: the fixed rules, one stream per 8 MiB (with auto, a near link
    // takes one: more would not pay for their logins).
    ProcessResult r = train_workspace("wide", files, kFixedStreams);
    ASSERT_EQ(r.exit_code, 0) << describe(r) << job_state("wide");
    EXPECT_TRUE(has_text(r.out, "uploaded 45 file(s)")) << describe(r);
    EXPECT_TRUE(has_text(r.err, "in 4 stream(s)")) << describe(r);
    expect_tree(remote(), files);

    // A remote directory where a stream has a file: that stream fails, the run stops before
    // the job with tar's complaint, the other streams still land, and no lock is left
    // behind: the next run (once the obstacle is gone) goes ahead.
    for (const auto& [rel, content] : files) write_file(ws + "/" + rel, content + "v2");
    ASSERT_EQ(::unlink((remote() + "/data/metrics.csv").c_str()), 0);
    make_dir(remote() + "/data/metrics.csv", 0755);
    write_file(remote() + "/data/metrics.csv/inside", "keeps the directory non-empty\n");
    r = mlt({"ssh", "train", "wide", "--workspace", ws});
    // A remote command that failed, not the link: exit 1 (255 is for connection failures).
    EXPECT_EQ(r.exit_code, 1) << describe(r);
    EXPECT_TRUE(has_text(r.err, "unpacking the upload into")) << describe(r);
    EXPECT_TRUE(has_text(r.err, "metrics.csv")) << describe(r);
    EXPECT_TRUE(is_one_error_line(r.err)) << describe(r);
    EXPECT_TRUE(read_or_empty(remote() + "/data/weights0.bin") == files[0].second + "v2")
        << "a stream that did not fail should have landed";
    EXPECT_FALSE(has_text(r.out, "started wide")) << "no job should have started: " << describe(r);
    EXPECT_FALSE(path_exists(job_file("wide", "lock"))) << job_state("wide");

    ASSERT_EQ(::unlink((remote() + "/data/metrics.csv/inside").c_str()), 0);
    ASSERT_EQ(::rmdir((remote() + "/data/metrics.csv").c_str()), 0);
    r = mlt({"ssh", "train", "wide", "--workspace", ws});
    ASSERT_EQ(r.exit_code, 0) << describe(r) << job_state("wide");
    EXPECT_TRUE(read_or_empty(remote() + "/data/metrics.csv") == files[3].second + "v2");
}

// A server that allows two channels per connection (the control shell and one more):
// the streams of a big upload run one after another, and everything lands. It forwards no
// unix sockets: channels to the channel listener, which a login measured slow on a loaded
// machine would ask for, do not count against MaxSessions.
class TrainSyncFewChannelsTest : public TrainSyncTest {
  protected:
    std::string sshd_extra_config() const override {
        return "MaxSessions 2\nAllowStreamLocalForwarding no\n";
    }
};

TEST_F(TrainSyncFewChannelsTest, ParallelStreamsQueueWhenTheServerLimitsChannels) {
    Tree files;
    for (int i = 0; i < 3; ++i)
        files.push_back(
            {"w" + std::to_string(i) + ".bin", mlt::test::noise_bytes(9 << 20, 11 + i)});
    ProcessResult r = train_workspace("narrow", files, kFixedStreams);
    ASSERT_EQ(r.exit_code, 0) << describe(r) << job_state("narrow");
    EXPECT_TRUE(has_text(r.err, "in 3 stream(s)")) << describe(r);
    EXPECT_TRUE(has_text(r.err, "refused another channel; at most 1 side by side")) << describe(r);
    expect_tree(remote(), files);
}

}  // namespace
}  // namespace mlt_test
