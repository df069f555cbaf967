// download() against hostile or broken tar streams (hand-built, served by CannedRemote).

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "mlt/transfer/transfer.h"
#include "mlt/util/error.h"
#include "transfer_fixtures.h"

namespace {

namespace fs = std::filesystem;
using mlt::test::CannedRemote;
using mlt::test::slurp;
using mlt::test::TarBuilder;
using mlt::test::TempDir;
using mlt::test::write_file;

// Runs download() of a canned archive and returns the error message ("" when none).
std::string download_error(CannedRemote& remote, const std::string& local_base) {
    try {
        mlt::download(remote, "base", {"."}, local_base);
    } catch (const mlt::Error& e) {
        return e.what();
    }
    return {};
}

TEST(TransferSafety, RefusesAbsoluteNames) {
    TempDir outside, local;
    const std::string target = outside / "evil";
    CannedRemote remote(TarBuilder().add(target, '0', "pwned").finish());
    std::string err = download_error(remote, local.path());
    EXPECT_NE(err.find("absolute"), std::string::npos) << err;
    EXPECT_FALSE(fs::exists(target));
    EXPECT_TRUE(fs::is_empty(local.path()));
}

TEST(TransferSafety, RefusesDotDotComponents) {
    TempDir root;
    fs::create_directories(root / "local/a");
    for (const char* name : {"../evil", "a/../../evil", "./a/b/../../../evil", ".."}) {
        CannedRemote remote(TarBuilder().add(name, '0', "pwned").finish());
        std::string err = download_error(remote, root / "local");
        EXPECT_NE(err.find(".."), std::string::npos) << name << ": " << err;
        EXPECT_FALSE(fs::exists(root / "evil")) << name;
    }
}

TEST(TransferSafety, RefusesWritingThroughAnExistingDirectorySymlink) {
    TempDir outside, local;
    fs::create_directory_symlink(outside.path(), local / "link");
    CannedRemote remote(TarBuilder().add("link/evil", '0', "pwned").finish());
    std::string err = download_error(remote, local.path());
    EXPECT_NE(err.find("symlink"), std::string::npos) << err;
    EXPECT_FALSE(fs::exists(outside / "evil"));
    // Deeper entries and directory entries are refused the same way.
    CannedRemote deeper(TarBuilder().add("link/x/y", '0', "pwned").finish());
    EXPECT_NE(download_error(deeper, local.path()).find("symlink"), std::string::npos);
    EXPECT_FALSE(fs::exists(outside / "x"));
    CannedRemote dir(TarBuilder().add("link/d/", '5').finish());
    EXPECT_NE(download_error(dir, local.path()).find("symlink"), std::string::npos);
    EXPECT_FALSE(fs::exists(outside / "d"));
}

TEST(TransferSafety, RefusesReplacingASymlinkedFile) {
    TempDir outside, local;
    write_file(outside / "target", "keep me");
    fs::create_symlink(outside / "target", local / "model.bin");
    CannedRemote remote(TarBuilder().add("model.bin", '0', "pwned").finish());
    std::string err = download_error(remote, local.path());
    EXPECT_NE(err.find("symlink"), std::string::npos) << err;
    EXPECT_EQ(slurp(outside / "target"), "keep me");
    EXPECT_TRUE(fs::is_symlink(local / "model.bin"));
}

TEST(TransferSafety, SymlinkEntriesAreSkippedSoTheyCannotBeFollowedLater) {
    TempDir outside, local;
    CannedRemote remote(
        TarBuilder().add("link", '2', "", outside.path()).add("link/evil", '0', "pwned").finish());
    EXPECT_EQ(download_error(remote, local.path()), "");
    EXPECT_FALSE(fs::exists(outside / "evil"));
    EXPECT_FALSE(fs::is_symlink(local / "link"));
    EXPECT_EQ(slurp(local / "link/evil"), "pwned");  // an ordinary directory now
}

TEST(TransferSafety, SkipsLinksDevicesAndFifos) {
    TempDir local;
    CannedRemote remote(TarBuilder()
                            .add("ok.txt", '0', "fine")
                            .add("sym", '2', "", "/etc/passwd")
                            .add("hard", '1', "", "ok.txt")
                            .add("dev", '3')
                            .add("fifo", '6')
                            .add("dir/", '5', "", "", 0750)
                            .finish());
    mlt::TransferStats s = mlt::download(remote, "base", {"."}, local.path());
    EXPECT_EQ(s.files, 1u);
    EXPECT_EQ(s.bytes, 4u);
    EXPECT_EQ(slurp(local / "ok.txt"), "fine");
    for (const char* skipped : {"sym", "hard", "dev", "fifo"})
        EXPECT_FALSE(fs::exists(fs::symlink_status(local / skipped))) << skipped;
    struct stat st {};
    ASSERT_EQ(::stat((local / "dir").c_str(), &st), 0);
    EXPECT_TRUE(S_ISDIR(st.st_mode));
    EXPECT_EQ(st.st_mode & 0777, 0750u);
}

TEST(TransferSafety, FilesGetTheArchivesModeAndMtime) {
    TempDir local;
    CannedRemote remote(
        TarBuilder().add("a/b/run.sh", '0', "#!/bin/sh\n", "", 0755, 1234567890).finish());
    mlt::download(remote, "base", {"."}, local.path());
    struct stat st {};
    ASSERT_EQ(::stat((local / "a/b/run.sh").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0755u);
    EXPECT_EQ(st.st_mtim.tv_sec, 1234567890);
}

TEST(TransferSafety, CutOffStreamLeavesNoPartFileAndKeepsTheOldFile) {
    TempDir local;
    write_file(local / "data/big.bin", "old complete version");
    const std::string data(300 * 1024, 'x');
    // The header promises 1 MiB but the stream ends after 300 KiB, as when the remote tar
    // dies midway.
    const std::string cut = TarBuilder()
                                .add("data/small.txt", '0', "s")
                                .add("data/big.bin", '0', data, "", 0644, 1500000000, 1024 * 1024)
                                .partial();
    CannedRemote failed(cut, 2,
                        "tar: data/big.bin: Read error at byte 307200: Input/output error\n");
    std::string err = download_error(failed, local.path());
    // The remote's own message wins over "damaged stream".
    EXPECT_NE(err.find("Read error at byte 307200"), std::string::npos) << err;
    EXPECT_EQ(slurp(local / "data/big.bin"), "old complete version");
    EXPECT_EQ(slurp(local / "data/small.txt"), "s");
    EXPECT_TRUE(mlt::test::part_files(local.path()).empty());

    // Cut off although the remote claims success: still an error, still no part file.
    CannedRemote lying(cut, 0);
    err = download_error(lying, local.path());
    EXPECT_NE(err.find("damaged"), std::string::npos) << err;
    EXPECT_EQ(slurp(local / "data/big.bin"), "old complete version");
    EXPECT_TRUE(mlt::test::part_files(local.path()).empty());
}

TEST(TransferSafety, FilesChangedWhileReadIsAWarning) {
    TempDir local;
    // GNU tar exits 1 when a file changed while it was archived (a log being written): the
    // archive is still complete.
    CannedRemote remote(TarBuilder().add("log.txt", '0', "partial log").finish(), 1,
                        "tar: log.txt: file changed as we read it\n");
    mlt::TransferStats s = mlt::download(remote, "base", {"."}, local.path());
    EXPECT_EQ(s.files, 1u);
    EXPECT_EQ(slurp(local / "log.txt"), "partial log");
}

TEST(TransferSafety, GarbageIsAnError) {
    TempDir local;
    CannedRemote remote(std::string(4096, 'g'), 0);
    EXPECT_NE(download_error(remote, local.path()), "");
    CannedRemote empty("", 2, "sh: cd: can't cd to base\n");
    EXPECT_NE(download_error(empty, local.path()).find("can't cd"), std::string::npos);
}

TEST(TransferSafety, ARefusalStopsTheTransferEarly) {
    TempDir local;
    TarBuilder tar;
    tar.add("../evil", '0', "pwned");
    for (int i = 0; i < 20; ++i) tar.add("f" + std::to_string(i), '0', std::string(1 << 20, 'z'));
    const std::string archive = tar.finish();
    CannedRemote remote(archive);
    EXPECT_NE(download_error(remote, local.path()).find(".."), std::string::npos);
    // The reader failed at the first header; the channel was abandoned long before the end
    // (at most the queue's capacity plus a chunk or two went through).
    EXPECT_LT(remote.delivered, archive.size() / 2);
    EXPECT_TRUE(fs::is_empty(local.path()));
}

// A stream may hold only what was asked for: the named files, each once, and what lies under
// a named directory. Anything else is tampering, and nothing of it is written.
TEST(TransferSafety, EntriesThatWereNotAskedForAreTampering) {
    TempDir local;
    write_file(local / "model.py", "the spec");
    CannedRemote remote(TarBuilder()
                            .add("out.txt", '0', "asked")
                            .add("model.py", '0', "import os; os.system('pwn')")
                            .finish());
    try {
        mlt::download(remote, "base", {"out.txt"}, local.path());
        FAIL() << "no throw";
    } catch (const mlt::Error& e) {
        EXPECT_EQ(e.kind(), mlt::ErrorKind::tampered) << e.what();
        EXPECT_NE(std::string(e.what()).find("'model.py', which was not asked for"),
                  std::string::npos)
            << e.what();
    }
    EXPECT_EQ(slurp(local / "model.py"), "the spec");

    CannedRemote twice(
        TarBuilder().add("out.txt", '0', "first").add("out.txt", '0', "second").finish());
    const std::vector<mlt::RemoteFileInfo> listed = {{"out.txt", 5, 0, 0, 1, true}};
    EXPECT_THROW(mlt::download_listed(twice, "base", listed, local.path()), mlt::Error);

    // Under a named directory, anything goes (where the gate lets it).
    CannedRemote tree(TarBuilder().add("results/a/b.txt", '0', "deep").finish());
    EXPECT_EQ(mlt::download(tree, "base", {"results"}, local.path()).files, 1u);
    EXPECT_EQ(slurp(local / "results/a/b.txt"), "deep");
    CannedRemote beside(TarBuilder().add("resultsX/c.txt", '0', "no").finish());
    EXPECT_THROW(mlt::download(beside, "base", {"results"}, local.path()), mlt::Error);
    EXPECT_FALSE(fs::exists(local / "resultsX"));
}

TEST(TransferSafety, ModesLoseSetuidSetgidStickyAndWorldWrite) {
    TempDir local;
    CannedRemote remote(TarBuilder()
                            .add("run.sh", '0', "#!/bin/sh\n", "", 07777)
                            .add("d/", '5', "", "", 07777)
                            .finish());
    mlt::download(remote, "base", {"."}, local.path());
    struct stat st {};
    ASSERT_EQ(::stat((local / "run.sh").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0775u);
    ASSERT_EQ(::stat((local / "d").c_str(), &st), 0);  // created under the umask
    EXPECT_EQ(st.st_mode & (S_ISUID | S_ISGID | S_ISVTX | S_IWOTH), 0u);
}

// A listed file is written at most at its listed size: a larger entry (grown since, or a lie)
// is skipped, so that no stream fills the disk past what was announced.
TEST(TransferSafety, AListedFileLargerThanListedIsNotWritten) {
    TempDir local;
    CannedRemote remote(TarBuilder()
                            .add("small.txt", '0', "ok")
                            .add("big.bin", '0', std::string(64 * 1024, 'b'))
                            .finish());
    const std::vector<mlt::RemoteFileInfo> listed = {{"big.bin", 10, 0, 0, 1, true},
                                                     {"small.txt", 2, 0, 0, 2, true}};
    const mlt::TransferStats s = mlt::download_listed(remote, "base", listed, local.path());
    EXPECT_EQ(s.files, 1u);
    EXPECT_EQ(slurp(local / "small.txt"), "ok");
    EXPECT_FALSE(fs::exists(local / "big.bin"));
    EXPECT_TRUE(mlt::test::part_files(local.path()).empty());
}

TEST(TransferSafety, RejectsEscapingRequestPaths) {
    TempDir local;
    CannedRemote remote(TarBuilder().finish());
    EXPECT_THROW(mlt::download(remote, "base", {"../x"}, local.path()), mlt::Error);
    EXPECT_THROW(mlt::download(remote, "base", {"/etc"}, local.path()), mlt::Error);
    EXPECT_TRUE(remote.commands.empty());
}

TEST(TransferSafety, RemoteCommandsQuoteEveryValue) {
    TempDir local;
    CannedRemote remote(TarBuilder().finish());
    mlt::download(remote, "~/a b/$(id)", {"x"}, local.path());
    ASSERT_EQ(remote.commands.size(), 1u);
    EXPECT_EQ(remote.commands[0].rfind("B=\"$HOME\"/'a b/$(id)'\n", 0), 0u) << remote.commands[0];
}

}  // namespace
