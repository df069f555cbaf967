// Incremental sync, both directions, through the real pipeline (libarchive here, GNU tar and
// find on the "remote", which is this machine via LocalRemote). "Not sent" is proved by the
// list of changed items, TransferStats, the number of remote commands, and a copy whose
// content was altered with its size and mtime kept: had it been sent, the alteration would
// be gone.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "../common/test_bytes.h"
#include "local_remote.h"
#include "mlt/transfer/transfer.h"
#include "mlt/transfer/workspace.h"
#include "mlt/util/error.h"
#include "transfer_fixtures.h"

namespace {

namespace fs = std::filesystem;
using mlt::test::LocalRemote;
using mlt::test::slurp;
using mlt::test::TempDir;
using mlt::test::write_file;

using Names = std::vector<std::string>;

// A fixed mtime (sec, nsec) so that "changed" never depends on the clock's granularity.
constexpr time_t kSec = 1600000000;
constexpr long kNsec = 250000000;

void set_mtime(const std::string& path, time_t sec, long nsec) {
    const timespec times[2] = {{0, UTIME_OMIT}, {sec, nsec}};
    if (::utimensat(AT_FDCWD, path.c_str(), times, AT_SYMLINK_NOFOLLOW) != 0)
        throw std::runtime_error("cannot set the mtime of " + path);
}

struct stat stat_of(const std::string& path) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) throw std::runtime_error("cannot stat " + path);
    return st;
}

int64_t mtime_ns(const std::string& path) {
    const struct stat st = stat_of(path);
    return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}

// Writes `path` with the fixed mtime, shifted by `delta_ns`.
void write_at(const std::string& path, const std::string& content, int64_t delta_ns = 0) {
    write_file(path, content);
    const int64_t ns = static_cast<int64_t>(kSec) * 1000000000 + kNsec + delta_ns;
    set_mtime(path, static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000));
}

// Replaces the content of `path` by `content` of the same size and restores its mtime: a
// copy that the size+mtime comparison cannot tell apart from the original.
void alter_keeping_size_and_mtime(const std::string& path, const std::string& content) {
    const struct stat before = stat_of(path);
    if (static_cast<size_t>(before.st_size) != content.size())
        throw std::logic_error("the altered content must keep the size of " + path);
    write_file(path, content);
    set_mtime(path, before.st_mtim.tv_sec, before.st_mtim.tv_nsec);
}

// Deterministic bytes, different at every offset.
std::string big_bytes(size_t size) {
    return mlt::test::noise_bytes(size, 0);
}

// Names that a shell, find, xargs or tar could mangle; some are directories on the way.
const Names& odd_names() {
    static const Names names = {
        "with space.txt",
        " leading space",
        "trailing space ",
        "single'quote",
        "double\"quote",
        "dollar $HOME $(id) ${x}",
        "back`tick`",
        "new\nline",
        "ends in newline\n",
        "tab\tbed",
        "-dash",
        "--help",
        "-d/-x",
        "~tilde",
        "back\\slash\\0",
        "star*?[x]",
        "percent %s %p",
        "not-utf8-\xff\xfe.bin",
        "\xc0\xaf-dir/f",
        "dir with space/'q'/\"$x\"`y`",
    };
    return names;
}

// The relative paths of `items`, in order.
Names paths_of(const std::vector<mlt::UploadItem>& items) {
    Names paths;
    for (const auto& item : items) paths.push_back(item.remote_path);
    return paths;
}

// One upload sync as `mlt ssh train` does it: compare, then send only what changed.
// Returns the paths sent; `stats` gets upload()'s totals.
Names sync_up(LocalRemote& remote, const std::string& base,
              const std::vector<mlt::UploadItem>& items, mlt::TransferStats* stats = nullptr) {
    const auto changed = mlt::changed_for_upload(remote, base, items);
    mlt::TransferStats s;
    if (!changed.empty()) s = mlt::upload(remote, base, changed);
    EXPECT_EQ(s.files, changed.size());
    if (stats) *stats = s;
    return paths_of(changed);
}

// The files under `dir` as upload items, the way an upload_files directory is expanded.
Names sync_up_dir(LocalRemote& remote, const std::string& base, const std::string& dir,
                  mlt::TransferStats* stats = nullptr) {
    return sync_up(remote, base, mlt::expand_local_glob(dir, "**"), stats);
}

// One download sync as the log dir pull does it: list, compare, fetch only what changed.
Names sync_down(LocalRemote& remote, const std::string& base, const std::string& local,
                mlt::TransferStats* stats = nullptr) {
    const Names changed =
        mlt::changed_for_download(mlt::list_remote_file_info(remote, base), local);
    mlt::TransferStats s;
    if (!changed.empty()) s = mlt::download(remote, base, changed, local);
    EXPECT_EQ(s.files, changed.size());
    if (stats) *stats = s;
    return changed;
}

TEST(TransferIncrementalUpload, FirstSyncSendsEverythingAndASecondSendsNothing) {
    TempDir local, remote_dir;
    const std::map<std::string, std::string> files = {
        {"a.txt", "alpha"}, {"empty", ""}, {"sub/b.txt", "beta"}, {"sub/deeper/c.bin", "gamma"}};
    for (const auto& [rel, content] : files) write_file(local / rel, content);
    LocalRemote remote;

    mlt::TransferStats stats;
    EXPECT_EQ(sync_up_dir(remote, remote_dir.path(), local.path(), &stats),
              (Names{"a.txt", "empty", "sub/b.txt", "sub/deeper/c.bin"}));
    EXPECT_EQ(stats.bytes, 14u);
    for (const auto& [rel, content] : files) {
        EXPECT_EQ(slurp(remote_dir / rel), content) << rel;
        EXPECT_EQ(mtime_ns(remote_dir / rel), mtime_ns(local / rel)) << rel;
    }

    alter_keeping_size_and_mtime(remote_dir / "a.txt", "ALPHA");
    const int commands = remote.commands_run;
    EXPECT_TRUE(sync_up_dir(remote, remote_dir.path(), local.path(), &stats).empty());
    EXPECT_EQ(stats.files, 0u);
    EXPECT_EQ(remote.commands_run, commands + 1) << "more than the one comparing round trip";
    EXPECT_EQ(slurp(remote_dir / "a.txt"), "ALPHA") << "an unchanged file was sent again";
}

// Whichever side is newer, a differing mtime is a change: the sync mirrors, it does not merge.
TEST(TransferIncrementalUpload, SameSizeWithANewerOrOlderMtimeIsSent) {
    TempDir local, remote_dir;
    for (const char* name : {"newer", "older", "remote-newer", "zero", "untouched"})
        write_at(local / name, name == std::string("zero") ? "" : "v1");
    LocalRemote remote;
    ASSERT_EQ(sync_up_dir(remote, remote_dir.path(), local.path()).size(), 5u);

    write_at(local / "newer", "v2", 1);  // one nanosecond later
    write_at(local / "older", "v0", -3600LL * 1000000000);
    write_at(local / "zero", "", 1000000000);        // a 0-byte file: only its mtime can change
    write_at(remote_dir / "remote-newer", "XX", 5);  // edited on the remote side
    EXPECT_EQ(sync_up_dir(remote, remote_dir.path(), local.path()),
              (Names{"newer", "older", "remote-newer", "zero"}));
    for (const char* name : {"newer", "older", "remote-newer", "zero"}) {
        EXPECT_EQ(slurp(remote_dir / name), slurp(local / name)) << name;
        EXPECT_EQ(mtime_ns(remote_dir / name), mtime_ns(local / name)) << name;
    }
    EXPECT_TRUE(sync_up_dir(remote, remote_dir.path(), local.path()).empty());
}

TEST(TransferIncrementalUpload, DifferentSizeWithTheSameMtimeIsSent) {
    TempDir local, remote_dir;
    write_at(local / "grows", "short");
    write_at(local / "empties", "something");
    write_at(local / "same", "same");
    LocalRemote remote;
    ASSERT_EQ(sync_up_dir(remote, remote_dir.path(), local.path()).size(), 3u);

    write_at(local / "grows", "much longer now");
    write_at(local / "empties", "");
    mlt::TransferStats stats;
    EXPECT_EQ(sync_up_dir(remote, remote_dir.path(), local.path(), &stats),
              (Names{"empties", "grows"}));
    EXPECT_EQ(stats.bytes, 15u);
    EXPECT_EQ(slurp(remote_dir / "grows"), "much longer now");
    EXPECT_EQ(slurp(remote_dir / "empties"), "");
    EXPECT_EQ(mtime_ns(remote_dir / "grows"), mtime_ns(local / "grows"));
}

TEST(TransferIncrementalUpload, ANewFileIsTheOnlyOneSent) {
    TempDir local, remote_dir;
    write_at(local / "old.txt", "old");
    LocalRemote remote;
    ASSERT_EQ(sync_up_dir(remote, remote_dir.path(), local.path()).size(), 1u);
    alter_keeping_size_and_mtime(remote_dir / "old.txt", "OLD");

    write_at(local / "new/dir/new.txt", "new");
    EXPECT_EQ(sync_up_dir(remote, remote_dir.path(), local.path()), Names{"new/dir/new.txt"});
    EXPECT_EQ(slurp(remote_dir / "new/dir/new.txt"), "new");
    EXPECT_EQ(slurp(remote_dir / "old.txt"), "OLD");
}

// A sync never deletes: the old name stays on the remote, the new one arrives.
TEST(TransferIncrementalUpload, ARenamedFileArrivesAndTheOldNameStays) {
    TempDir local, remote_dir;
    write_at(local / "old name.txt", "content");
    write_at(local / "other.txt", "other");
    LocalRemote remote;
    ASSERT_EQ(sync_up_dir(remote, remote_dir.path(), local.path()).size(), 2u);

    fs::create_directories(local / "moved");
    fs::rename(local / "old name.txt", local / "moved/new name.txt");  // keeps size and mtime
    EXPECT_EQ(sync_up_dir(remote, remote_dir.path(), local.path()), Names{"moved/new name.txt"});
    EXPECT_EQ(slurp(remote_dir / "moved/new name.txt"), "content");
    EXPECT_EQ(slurp(remote_dir / "old name.txt"), "content");
    EXPECT_TRUE(sync_up_dir(remote, remote_dir.path(), local.path()).empty());
}

// Only files are sent: a tree of empty directories gives no item, and no item needs no
// round trip (train then does not call upload at all, so the remote stays as it was).
TEST(TransferIncrementalUpload, AnEmptyDirectoryTreeHasNothingToSendAndNeedsNoRoundTrip) {
    TempDir local, remote_dir;
    fs::create_directories(local / "a/b/c");
    fs::create_directories(local / "d");
    LocalRemote remote;
    EXPECT_TRUE(mlt::expand_local_glob(local.path(), "**").empty());
    EXPECT_TRUE(mlt::collect_workspace(local.path()).empty());
    EXPECT_TRUE(sync_up_dir(remote, remote_dir / "base", local.path()).empty());
    EXPECT_EQ(remote.commands_run, 0);
    EXPECT_FALSE(fs::exists(remote_dir / "base"));
}

TEST(TransferIncrementalUpload, ALargeFileIsSentWholeOnceAndAgainAfterAOneByteChange) {
    TempDir local, remote_dir;
    std::string big = big_bytes(20 * 1024 * 1024 + 7);
    write_at(local / "big.bin", big);
    LocalRemote remote;
    mlt::TransferStats stats;
    ASSERT_EQ(sync_up_dir(remote, remote_dir.path(), local.path(), &stats), Names{"big.bin"});
    EXPECT_EQ(stats.bytes, big.size());
    EXPECT_TRUE(slurp(remote_dir / "big.bin") == big) << "the remote copy differs";
    EXPECT_TRUE(sync_up_dir(remote, remote_dir.path(), local.path()).empty());

    big[big.size() / 2] ^= 0x5a;
    write_at(local / "big.bin", big, 1000000000);
    EXPECT_EQ(sync_up_dir(remote, remote_dir.path(), local.path(), &stats), Names{"big.bin"});
    EXPECT_EQ(stats.bytes, big.size());
    EXPECT_TRUE(slurp(remote_dir / "big.bin") == big) << "the remote copy differs";
}

TEST(TransferIncrementalUpload, OddNamesAreComparedExactly) {
    TempDir local, remote_dir;
    for (const auto& name : odd_names()) write_at(local / name, "<" + name + ">");
    LocalRemote remote;
    Names sorted = odd_names();
    std::sort(sorted.begin(), sorted.end());
    ASSERT_EQ(sync_up_dir(remote, remote_dir.path(), local.path()), sorted);
    for (const auto& name : odd_names()) EXPECT_EQ(slurp(remote_dir / name), "<" + name + ">");
    // Each name is found again remotely, so nothing is sent twice.
    EXPECT_TRUE(sync_up_dir(remote, remote_dir.path(), local.path()).empty());

    write_at(local / "new\nline", "<changed>", 1);
    write_at(local / "-d/-x", "<-d/-x>", 1);
    EXPECT_EQ(sync_up_dir(remote, remote_dir.path(), local.path()), (Names{"-d/-x", "new\nline"}));
    EXPECT_EQ(slurp(remote_dir / "new\nline"), "<changed>");
}

TEST(TransferIncrementalUpload, MtimesArriveToTheNanosecondSoTheNextSyncIsANoOp) {
    TempDir local, remote_dir;
    const std::vector<std::pair<time_t, long>> times = {
        {1500000000, 0}, {1500000000, 1}, {1500000000, 999999999}, {1500000000, 123456780},
        {4102444800, 5},               // 2100-01-01
        {0, 0},          {-86400, 0},  // 1969-12-31
    };
    for (size_t i = 0; i < times.size(); ++i) {
        write_file(local / ("f" + std::to_string(i)), "x");
        set_mtime(local / ("f" + std::to_string(i)), times[i].first, times[i].second);
    }
    LocalRemote remote;
    ASSERT_EQ(sync_up_dir(remote, remote_dir.path(), local.path()).size(), times.size());
    const auto listed = mlt::list_remote_file_info(remote, remote_dir.path());
    ASSERT_EQ(listed.size(), times.size());
    for (size_t i = 0; i < times.size(); ++i) {
        const std::string name = "f" + std::to_string(i);
        const int64_t expected =
            static_cast<int64_t>(times[i].first) * 1000000000 + times[i].second;
        EXPECT_EQ(mtime_ns(remote_dir / name), expected) << name;
        EXPECT_EQ(listed[i].mtime_ns, expected) << name << " as listed by find";
    }
    EXPECT_TRUE(sync_up_dir(remote, remote_dir.path(), local.path()).empty());
}

// find prints an mtime before 1970 as tv_sec.tv_nsec ("-2.5" for -1.5 s): both directions
// must read that as the file system has it, or such a file is sent on every sync.
TEST(TransferIncrementalUpload, APreEpochMtimeWithAFractionIsComparedExactly) {
    TempDir local, remote_dir;
    for (const std::string& dir : {local.path(), remote_dir.path()}) {
        write_file(dir + "/old", "x");
        set_mtime(dir + "/old", -2, 500000000);  // 1969-12-31T23:59:58.5
    }
    LocalRemote remote;
    const auto listed = mlt::list_remote_file_info(remote, remote_dir.path());
    ASSERT_EQ(listed.size(), 1u);
    EXPECT_EQ(listed[0].mtime_ns, -1500000000);
    EXPECT_TRUE(sync_up_dir(remote, remote_dir.path(), local.path()).empty());
    EXPECT_TRUE(mlt::changed_for_download(listed, local.path()).empty());
}

// An mtime before 1970 with a fraction arrives as it is, so the next sync is a no-op.
TEST(TransferIncrementalUpload, APreEpochMtimeWithAFractionArrivesExactly) {
    TempDir local, remote_dir;
    write_file(local / "old", "x");
    set_mtime(local / "old", -2, 500000000);  // 1969-12-31T23:59:58.5
    LocalRemote remote;
    ASSERT_EQ(sync_up_dir(remote, remote_dir.path(), local.path()), Names{"old"});
    EXPECT_EQ(mtime_ns(remote_dir / "old"), -1500000000);
    EXPECT_TRUE(sync_up_dir(remote, remote_dir.path(), local.path()).empty());
}

// A sync never deletes, so it cannot turn a remote file into a directory: tar's error names
// the path, the remote file is kept, and the other files still arrive.
TEST(TransferIncrementalUpload, AFileReplacedByADirectoryIsARemoteErrorNamingIt) {
    TempDir local, remote_dir;
    write_at(local / "x", "file");
    LocalRemote remote;
    ASSERT_EQ(sync_up_dir(remote, remote_dir.path(), local.path()).size(), 1u);

    fs::remove(local / "x");
    write_at(local / "x/inner.txt", "inner");
    write_at(local / "y.txt", "y");
    try {
        sync_up_dir(remote, remote_dir.path(), local.path());
        FAIL() << "no error";
    } catch (const mlt::Error& e) {
        EXPECT_EQ(e.kind(), mlt::ErrorKind::remote);
        EXPECT_NE(std::string(e.what()).find("x/inner.txt"), std::string::npos) << e.what();
    }
    EXPECT_EQ(slurp(remote_dir / "x"), "file");
    EXPECT_EQ(slurp(remote_dir / "y.txt"), "y");
}

// The same the other way: a remote directory with files in it is not replaced by a file.
TEST(TransferIncrementalUpload, ADirectoryReplacedByAFileIsARemoteErrorNamingIt) {
    TempDir local, remote_dir;
    write_at(local / "y/inner.txt", "inner");
    LocalRemote remote;
    ASSERT_EQ(sync_up_dir(remote, remote_dir.path(), local.path()).size(), 1u);

    fs::remove_all(local / "y");
    write_at(local / "y", "now a file");
    try {
        sync_up_dir(remote, remote_dir.path(), local.path());
        FAIL() << "no error";
    } catch (const mlt::Error& e) {
        EXPECT_EQ(e.kind(), mlt::ErrorKind::remote);
        EXPECT_NE(std::string(e.what()).find("y: "), std::string::npos) << e.what();
    }
    EXPECT_EQ(slurp(remote_dir / "y/inner.txt"), "inner");
}

// The workspace path: collect_workspace gives the items; ignored files are never compared
// nor sent, whatever changes.
TEST(TransferIncrementalWorkspace, OnlyChangedAndNewFilesAreSent) {
    TempDir ws, remote_dir;
    write_at(ws / ".gitignore", "*.log\nbuild/\n");
    write_at(ws / "train.py", "print(1)\n");
    write_at(ws / "data/it's a \"set\".csv", "a,b\n");
    write_at(ws / "data/empty.csv", "");
    write_at(ws / "run.log", "ignored");
    write_at(ws / "build/out.o", "ignored");
    write_at(ws / ".env", "SECRET=1");
    LocalRemote remote;
    const auto sync = [&] {
        return sync_up(remote, remote_dir.path(), mlt::collect_workspace(ws.path()));
    };
    EXPECT_EQ(sync(),
              (Names{".gitignore", "data/empty.csv", "data/it's a \"set\".csv", "train.py"}));
    EXPECT_TRUE(sync().empty());

    write_at(ws / "train.py", "print(2)\n", 1);
    write_at(ws / "data/new.csv", "c,d\n");
    write_at(ws / "run.log", "changed but ignored", 1);
    write_at(ws / ".env", "SECRET=2", 1);
    EXPECT_EQ(sync(), (Names{"data/new.csv", "train.py"}));
    EXPECT_EQ(slurp(remote_dir / "train.py"), "print(2)\n");
    EXPECT_FALSE(fs::exists(remote_dir / "run.log"));
    EXPECT_FALSE(fs::exists(remote_dir / ".env"));
    EXPECT_FALSE(fs::exists(remote_dir / "build"));
    EXPECT_TRUE(sync().empty());
}

TEST(TransferIncrementalDownload, FirstSyncFetchesEverythingAndASecondFetchesNothing) {
    TempDir remote_dir, local;
    const std::map<std::string, std::string> files = {
        {"a.txt", "alpha"}, {"empty", ""}, {"sub/b.txt", "beta"}, {"sub/deeper/c.bin", "gamma"}};
    for (const auto& [rel, content] : files) write_file(remote_dir / rel, content);
    LocalRemote remote;

    mlt::TransferStats stats;
    EXPECT_EQ(sync_down(remote, remote_dir.path(), local.path(), &stats),
              (Names{"a.txt", "empty", "sub/b.txt", "sub/deeper/c.bin"}));
    EXPECT_EQ(stats.bytes, 14u);
    for (const auto& [rel, content] : files) {
        EXPECT_EQ(slurp(local / rel), content) << rel;
        EXPECT_EQ(mtime_ns(local / rel), mtime_ns(remote_dir / rel)) << rel;
    }

    alter_keeping_size_and_mtime(local / "a.txt", "ALPHA");
    const int commands = remote.commands_run;
    EXPECT_TRUE(sync_down(remote, remote_dir.path(), local.path(), &stats).empty());
    EXPECT_EQ(stats.files, 0u);
    EXPECT_EQ(remote.commands_run, commands + 1) << "more than the one listing round trip";
    EXPECT_EQ(slurp(local / "a.txt"), "ALPHA") << "an unchanged file was fetched again";
}

// A local copy edited since the last pull (newer) or restored from elsewhere (older) counts
// as changed too: the remote copy wins, as the pull mirrors the remote.
TEST(TransferIncrementalDownload, SameSizeWithANewerOrOlderMtimeIsFetched) {
    TempDir remote_dir, local;
    for (const char* name : {"newer", "older", "local-newer", "local-older", "zero", "untouched"})
        write_at(remote_dir / name, name == std::string("zero") ? "" : "v1");
    LocalRemote remote;
    ASSERT_EQ(sync_down(remote, remote_dir.path(), local.path()).size(), 6u);

    write_at(remote_dir / "newer", "v2", 1);  // one nanosecond later
    write_at(remote_dir / "older", "v0", -3600LL * 1000000000);
    write_at(remote_dir / "zero", "", 1000000000);  // a 0-byte file: only its mtime can change
    write_at(local / "local-newer", "L2", 1);
    write_at(local / "local-older", "L0", -1);
    EXPECT_EQ(sync_down(remote, remote_dir.path(), local.path()),
              (Names{"local-newer", "local-older", "newer", "older", "zero"}));
    for (const char* name : {"newer", "older", "local-newer", "local-older", "zero"}) {
        EXPECT_EQ(slurp(local / name), slurp(remote_dir / name)) << name;
        EXPECT_EQ(mtime_ns(local / name), mtime_ns(remote_dir / name)) << name;
    }
    EXPECT_TRUE(sync_down(remote, remote_dir.path(), local.path()).empty());
}

TEST(TransferIncrementalDownload, DifferentSizeWithTheSameMtimeIsFetched) {
    TempDir remote_dir, local;
    write_at(remote_dir / "grows", "short");
    write_at(remote_dir / "empties", "something");
    write_at(remote_dir / "same", "same");
    LocalRemote remote;
    ASSERT_EQ(sync_down(remote, remote_dir.path(), local.path()).size(), 3u);

    write_at(remote_dir / "grows", "much longer now");
    write_at(remote_dir / "empties", "");
    mlt::TransferStats stats;
    EXPECT_EQ(sync_down(remote, remote_dir.path(), local.path(), &stats),
              (Names{"empties", "grows"}));
    EXPECT_EQ(stats.bytes, 15u);
    EXPECT_EQ(slurp(local / "grows"), "much longer now");
    EXPECT_EQ(slurp(local / "empties"), "");
    EXPECT_EQ(mtime_ns(local / "grows"), mtime_ns(remote_dir / "grows"));
}

TEST(TransferIncrementalDownload, ANewRemoteFileIsTheOnlyOneFetched) {
    TempDir remote_dir, local;
    write_at(remote_dir / "old.txt", "old");
    LocalRemote remote;
    ASSERT_EQ(sync_down(remote, remote_dir.path(), local.path()).size(), 1u);
    alter_keeping_size_and_mtime(local / "old.txt", "OLD");

    write_at(remote_dir / "new/dir/new.txt", "new");
    EXPECT_EQ(sync_down(remote, remote_dir.path(), local.path()), Names{"new/dir/new.txt"});
    EXPECT_EQ(slurp(local / "new/dir/new.txt"), "new");
    EXPECT_EQ(slurp(local / "old.txt"), "OLD");
}

TEST(TransferIncrementalDownload, ARenamedRemoteFileArrivesAndTheOldLocalNameStays) {
    TempDir remote_dir, local;
    write_at(remote_dir / "old name.txt", "content");
    write_at(remote_dir / "other.txt", "other");
    LocalRemote remote;
    ASSERT_EQ(sync_down(remote, remote_dir.path(), local.path()).size(), 2u);

    fs::create_directories(remote_dir / "moved");
    fs::rename(remote_dir / "old name.txt", remote_dir / "moved/new name.txt");
    EXPECT_EQ(sync_down(remote, remote_dir.path(), local.path()), Names{"moved/new name.txt"});
    EXPECT_EQ(slurp(local / "moved/new name.txt"), "content");
    EXPECT_EQ(slurp(local / "old name.txt"), "content");
    EXPECT_TRUE(sync_down(remote, remote_dir.path(), local.path()).empty());
}

// Empty remote directories are not listed, so there is nothing to fetch, as from a remote
// dir that does not exist yet (a log dir before the first epoch); the local side stays as is.
TEST(TransferIncrementalDownload, AnEmptyOrMissingRemoteTreeFetchesNothing) {
    TempDir remote_dir, local;
    fs::create_directories(remote_dir / "logs/a/b");
    fs::create_directories(remote_dir / "logs/c");
    write_at(local / "kept.txt", "kept");
    LocalRemote remote;
    EXPECT_TRUE(sync_down(remote, remote_dir / "logs", local.path()).empty());
    EXPECT_TRUE(sync_down(remote, remote_dir / "missing", local.path()).empty());
    EXPECT_EQ(remote.commands_run, 2);
    EXPECT_FALSE(fs::exists(local / "a"));
    EXPECT_EQ(slurp(local / "kept.txt"), "kept");
}

TEST(TransferIncrementalDownload, ALargeFileIsFetchedWholeOnceAndAgainAfterAOneByteChange) {
    TempDir remote_dir, local;
    std::string big = big_bytes(20 * 1024 * 1024 + 7);
    write_at(remote_dir / "big.bin", big);
    LocalRemote remote;
    mlt::TransferStats stats;
    ASSERT_EQ(sync_down(remote, remote_dir.path(), local.path(), &stats), Names{"big.bin"});
    EXPECT_EQ(stats.bytes, big.size());
    EXPECT_TRUE(slurp(local / "big.bin") == big) << "the local copy differs";
    EXPECT_TRUE(sync_down(remote, remote_dir.path(), local.path()).empty());

    big[big.size() / 2] ^= 0x5a;
    write_at(remote_dir / "big.bin", big, 1000000000);
    EXPECT_EQ(sync_down(remote, remote_dir.path(), local.path(), &stats), Names{"big.bin"});
    EXPECT_EQ(stats.bytes, big.size());
    EXPECT_TRUE(slurp(local / "big.bin") == big) << "the local copy differs";
}

// The odd names a download accepts: those without control characters (the name gate,
// util/remote_name.h, refuses those as tampering).
Names downloadable_odd_names() {
    Names names;
    for (const auto& name : odd_names())
        if (std::none_of(name.begin(), name.end(),
                         [](char c) { return static_cast<unsigned char>(c) < 0x20; }))
            names.push_back(name);
    return names;
}

TEST(TransferIncrementalDownload, OddNamesAreComparedExactly) {
    TempDir remote_dir, local;
    for (const auto& name : downloadable_odd_names()) write_at(remote_dir / name, "<" + name + ">");
    LocalRemote remote;
    Names sorted = downloadable_odd_names();
    std::sort(sorted.begin(), sorted.end());
    ASSERT_EQ(sync_down(remote, remote_dir.path(), local.path()), sorted);
    for (const auto& name : downloadable_odd_names())
        EXPECT_EQ(slurp(local / name), "<" + name + ">");
    EXPECT_TRUE(sync_down(remote, remote_dir.path(), local.path()).empty());

    write_at(remote_dir / "tilde~", "<changed>", 1);
    write_at(remote_dir / "-d/-x", "<-d/-x>", 1);
    EXPECT_EQ(sync_down(remote, remote_dir.path(), local.path()), (Names{"-d/-x", "tilde~"}));
    EXPECT_EQ(slurp(local / "tilde~"), "<changed>");

    // A name with a control character is refused as a whole, before anything is written.
    write_at(remote_dir / "new\nline", "<nl>");
    write_at(remote_dir / "another.txt", "<another>");
    try {
        sync_down(remote, remote_dir.path(), local.path());
        ADD_FAILURE() << "a name with a newline was downloaded";
    } catch (const mlt::Error& e) {
        EXPECT_EQ(e.kind(), mlt::ErrorKind::tampered) << e.what();
    }
    EXPECT_FALSE(fs::exists(local / "another.txt"));
    EXPECT_FALSE(fs::exists(local / "new\nline"));
}

TEST(TransferIncrementalDownload, MtimesArriveToTheNanosecondSoTheNextSyncIsANoOp) {
    TempDir remote_dir, local;
    const std::vector<std::pair<time_t, long>> times = {
        {1500000000, 0}, {1500000000, 1}, {1500000000, 999999999}, {1500000000, 123456780},
        {4102444800, 5},               // 2100-01-01
        {0, 0},          {-86400, 0},  // 1969-12-31
    };
    for (size_t i = 0; i < times.size(); ++i) {
        write_file(remote_dir / ("f" + std::to_string(i)), "x");
        set_mtime(remote_dir / ("f" + std::to_string(i)), times[i].first, times[i].second);
    }
    LocalRemote remote;
    ASSERT_EQ(sync_down(remote, remote_dir.path(), local.path()).size(), times.size());
    for (size_t i = 0; i < times.size(); ++i) {
        const std::string name = "f" + std::to_string(i);
        EXPECT_EQ(mtime_ns(local / name),
                  static_cast<int64_t>(times[i].first) * 1000000000 + times[i].second)
            << name;
    }
    EXPECT_TRUE(sync_down(remote, remote_dir.path(), local.path()).empty());
}

TEST(TransferIncrementalDownload, APreEpochMtimeWithAFractionArrivesExactly) {
    TempDir remote_dir, local;
    write_file(remote_dir / "old", "x");
    set_mtime(remote_dir / "old", -2, 500000000);  // 1969-12-31T23:59:58.5
    LocalRemote remote;
    ASSERT_EQ(sync_down(remote, remote_dir.path(), local.path()), Names{"old"});
    EXPECT_EQ(mtime_ns(local / "old"), -1500000000);
    EXPECT_TRUE(sync_down(remote, remote_dir.path(), local.path()).empty());
}

// Up, down to a second machine, and up again from there: every hop keeps the mtimes exactly,
// so neither direction finds anything to move.
TEST(TransferIncrementalDownload, ARoundTripLeavesNothingToSyncInEitherDirection) {
    TempDir local, remote_dir, other;
    write_file(local / "a.txt", "a");  // the file system's own (nanosecond) mtime
    write_file(local / "sub/b.bin", big_bytes(100000));
    LocalRemote remote;
    ASSERT_EQ(sync_up_dir(remote, remote_dir.path(), local.path()).size(), 2u);
    ASSERT_EQ(sync_down(remote, remote_dir.path(), other.path()).size(), 2u);
    EXPECT_EQ(mtime_ns(other / "a.txt"), mtime_ns(local / "a.txt"));
    EXPECT_TRUE(sync_up_dir(remote, remote_dir.path(), other.path()).empty());
    EXPECT_TRUE(sync_down(remote, remote_dir.path(), local.path()).empty());
}

// Nothing local is removed to make room: a local file where the remote now has a directory
// is an io error naming it, and the local file is kept.
TEST(TransferIncrementalDownload, ARemoteFileReplacedByADirectoryIsAnIoErrorNamingIt) {
    TempDir remote_dir, local;
    write_at(remote_dir / "x", "file");
    LocalRemote remote;
    ASSERT_EQ(sync_down(remote, remote_dir.path(), local.path()).size(), 1u);

    fs::remove(remote_dir / "x");
    write_at(remote_dir / "x/inner.txt", "inner");
    try {
        sync_down(remote, remote_dir.path(), local.path());
        FAIL() << "no error";
    } catch (const mlt::Error& e) {
        EXPECT_EQ(e.kind(), mlt::ErrorKind::io);
        EXPECT_NE(std::string(e.what()).find(local / "x"), std::string::npos) << e.what();
    }
    EXPECT_EQ(slurp(local / "x"), "file");
    EXPECT_TRUE(mlt::test::part_files(local.path()).empty());
}

// The same the other way: a local directory is not replaced by the remote file.
TEST(TransferIncrementalDownload, ARemoteDirectoryReplacedByAFileIsAnIoErrorNamingIt) {
    TempDir remote_dir, local;
    write_at(remote_dir / "y/inner.txt", "inner");
    LocalRemote remote;
    ASSERT_EQ(sync_down(remote, remote_dir.path(), local.path()).size(), 1u);

    fs::remove_all(remote_dir / "y");
    write_at(remote_dir / "y", "now a file");
    try {
        sync_down(remote, remote_dir.path(), local.path());
        FAIL() << "no error";
    } catch (const mlt::Error& e) {
        EXPECT_EQ(e.kind(), mlt::ErrorKind::io);
        EXPECT_NE(std::string(e.what()).find(local / "y"), std::string::npos) << e.what();
    }
    EXPECT_EQ(slurp(local / "y/inner.txt"), "inner");
    EXPECT_TRUE(mlt::test::part_files(local.path()).empty());
}

}  // namespace
