// Resumable single-file pulls (download_file) and sync_down, through the real pipeline: GNU
// find, tail and cat on the "remote" (this machine, via LocalRemote). A cut link is a Remote
// wrapper whose stdout sink throws after N bytes; a kill -9 is a forked child stopped while
// it writes. "Only the rest was fetched" is proved by counting the stdout bytes of the next
// call, and the content by comparing it with the remote bytes.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "local_remote.h"
#include "mlt/transfer/progress.h"
#include "mlt/transfer/ranges.h"
#include "mlt/transfer/sync.h"
#include "mlt/transfer/transfer.h"
#include "mlt/util/error.h"
#include "mlt/util/reporter.h"
#include "mlt/util/sha256.h"
#include "transfer_fixtures.h"

namespace {

namespace fs = std::filesystem;
using mlt::test::LocalRemote;
using mlt::test::slurp;
using mlt::test::TempDir;
using mlt::test::write_file;

// A fixed remote mtime, with a fraction, so that "same mtime" never depends on the clock.
constexpr int64_t kMtime = 1600000000LL * 1000000000 + 123456789;
constexpr size_t kSize = 1024 * 1024 + 123;
constexpr uint64_t kCut = 300000;  // stdout bytes (header line included) before the cut

void set_mtime(const std::string& path, int64_t ns) {
    const timespec times[2] = {
        {0, UTIME_OMIT},
        {static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)}};
    if (::utimensat(AT_FDCWD, path.c_str(), times, AT_SYMLINK_NOFOLLOW) != 0)
        throw std::runtime_error("cannot set the mtime of " + path);
}

int64_t mtime_ns(const std::string& path) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) throw std::runtime_error("cannot stat " + path);
    return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}

// Writes `path` with `content` and the mtime `ns`.
void write_at(const std::string& path, const std::string& content, int64_t ns = kMtime) {
    write_file(path, content);
    set_mtime(path, ns);
}

// Deterministic bytes that differ at every offset; `seed` gives another file of that size.
std::string pattern_bytes(size_t size, uint32_t seed = 12345) {
    std::string s(size, '\0');
    uint32_t x = seed;
    for (size_t i = 0; i < size; ++i) {
        x = x * 1103515245u + 12345u;
        s[i] = static_cast<char>(x >> 24);
    }
    return s;
}

// The names (not paths) of the resume files directly in `dir`, sorted.
std::vector<std::string> resume_files(const std::string& dir) {
    std::vector<std::string> found;
    for (const auto& e : fs::directory_iterator(dir)) {
        const std::string name = e.path().filename().string();
        if (name.find(".mlt-resume-") != std::string::npos) found.push_back(name);
    }
    std::sort(found.begin(), found.end());
    return found;
}

const std::vector<std::string> kNone;

// Passes everything to `inner`; the stdout sink of each stream() hands on at most
// `cut_after` bytes and then throws the error of a lost link.
class CuttingRemote : public mlt::Remote {
  public:
    CuttingRemote(mlt::Remote& inner, uint64_t cut_after) : inner_(inner), cut_after_(cut_after) {}
    const std::string& name() const override { return inner_.name(); }
    mlt::RemoteOutput run(const std::string& command, std::string_view input) override {
        return inner_.run(command, input);
    }
    // Counts stdout over all streams (a file in ranges is several); cuts once.
    int stream(const std::string& command, const mlt::InputSource& input,
               const mlt::OutputSink& on_stdout, const mlt::OutputSink& on_stderr) override {
        return inner_.stream(
            command, input,
            [&](std::string_view d) {
                const uint64_t room = cuts > 0 ? d.size() + 1 : cut_after_ - seen_;
                if (d.size() < room) {
                    seen_ += d.size();
                    on_stdout(d);
                    return;
                }
                on_stdout(d.substr(0, room));
                ++cuts;
                throw mlt::Error(
                    mlt::ErrorKind::disconnected,
                    "simulated lost link after " + std::to_string(cut_after_) + " bytes");
            },
            on_stderr);
    }

    int cuts = 0;

  private:
    mlt::Remote& inner_;
    uint64_t cut_after_;
    uint64_t seen_ = 0;
};

// Passes everything to `inner` and counts the stdout bytes of stream().
class CountingRemote : public mlt::Remote {
  public:
    explicit CountingRemote(mlt::Remote& inner) : inner_(inner) {}
    const std::string& name() const override { return inner_.name(); }
    mlt::RemoteOutput run(const std::string& command, std::string_view input) override {
        return inner_.run(command, input);
    }
    int stream(const std::string& command, const mlt::InputSource& input,
               const mlt::OutputSink& on_stdout, const mlt::OutputSink& on_stderr) override {
        commands.push_back(command);
        return inner_.stream(
            command, input,
            [&](std::string_view d) {
                stdout_bytes += d.size();
                on_stdout(d);
            },
            on_stderr);
    }

    uint64_t stdout_bytes = 0;
    std::vector<std::string> commands;

  private:
    mlt::Remote& inner_;
};

// A remote file of kSize pattern bytes with kMtime, and the local dir it is pulled into.
struct CutDownload {
    TempDir remote_dir, local_dir;
    LocalRemote remote;
    std::string content = pattern_bytes(kSize);
    std::string remote_path = remote_dir / "model.bin";
    std::string local_path = local_dir / "model.bin";

    CutDownload() { write_at(remote_path, content); }

    // One download_file cut off after kCut stdout bytes; returns the kept byte count.
    uint64_t cut() {
        CuttingRemote cutting(remote, kCut);
        try {
            mlt::download_file(cutting, remote_path, local_path);
            ADD_FAILURE() << "the cut download did not throw";
        } catch (const mlt::Error& e) {
            EXPECT_EQ(e.kind(), mlt::ErrorKind::disconnected) << e.what();
        }
        EXPECT_EQ(cutting.cuts, 1);
        const auto kept = resume_files(local_dir.path());
        if (kept.size() != 1) {
            ADD_FAILURE() << "resume files after the cut: " << kept.size();
            return 0;
        }
        return fs::file_size(local_dir / kept[0]);
    }

    std::string only_resume_file() const {
        const auto kept = resume_files(local_dir.path());
        if (kept.size() != 1) throw std::runtime_error("not exactly one resume file");
        return local_dir / kept[0];
    }
};

TEST(TransferResume, ACutDownloadKeepsItsBytesAndTheNextCallFetchesOnlyTheRest) {
    CutDownload d;
    const uint64_t kept = d.cut();
    ASSERT_GT(kept, 0u);
    ASSERT_LT(kept, kCut);  // the header line is not part of the file
    EXPECT_FALSE(fs::exists(d.local_path));
    EXPECT_TRUE(slurp(d.only_resume_file()) == d.content.substr(0, kept)) << "kept bytes differ";

    CountingRemote counting(d.remote);
    EXPECT_EQ(mlt::download_file(counting, d.remote_path, d.local_path), kSize);
    EXPECT_LT(counting.stdout_bytes, kSize) << "fetched whole again";
    // The rest plus the "<size> <mtime>" header line, nothing more.
    EXPECT_GE(counting.stdout_bytes, kSize - kept);
    EXPECT_LE(counting.stdout_bytes, kSize - kept + 64);
    EXPECT_EQ(counting.commands.size(), 1u);
    EXPECT_TRUE(slurp(d.local_path) == d.content) << "content differs";
    EXPECT_EQ(mtime_ns(d.local_path), kMtime);
    EXPECT_EQ(resume_files(d.local_dir.path()), kNone);
}

TEST(TransferResume, TwoCutsInARowStillEndInTheWholeFile) {
    CutDownload d;
    const uint64_t first = d.cut();
    ASSERT_GT(first, 0u);
    // The second attempt is cut too: it resumes and appends kCut-ish more bytes.
    const uint64_t second = d.cut();
    EXPECT_GT(second, first);
    EXPECT_TRUE(slurp(d.only_resume_file()) == d.content.substr(0, second)) << "kept bytes differ";

    CountingRemote counting(d.remote);
    EXPECT_EQ(mlt::download_file(counting, d.remote_path, d.local_path), kSize);
    EXPECT_LE(counting.stdout_bytes, kSize - second + 64);
    EXPECT_TRUE(slurp(d.local_path) == d.content) << "content differs";
    EXPECT_EQ(resume_files(d.local_dir.path()), kNone);
}

TEST(TransferResume, AProcessKilledMidwayLeavesAResumeFileThatTheNextCallContinues) {
    CutDownload d;
    int ready[2];
    ASSERT_EQ(::pipe2(ready, O_CLOEXEC), 0);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        // The child pulls and, after kCut bytes have reached download_file, says so and
        // waits to be killed: a kill -9 in the middle of a transfer.
        ::close(ready[0]);
        LocalRemote inner;
        uint64_t seen = 0;
        struct Stalling : LocalRemote {
            LocalRemote* inner;
            uint64_t* seen;
            int ready_fd;
            int stream(const std::string& command, const mlt::InputSource& input,
                       const mlt::OutputSink& on_stdout,
                       const mlt::OutputSink& on_stderr) override {
                return inner->stream(
                    command, input,
                    [&](std::string_view part) {
                        const uint64_t room = kCut - *seen;
                        on_stdout(part.substr(0, std::min<uint64_t>(room, part.size())));
                        *seen += std::min<uint64_t>(room, part.size());
                        if (*seen < kCut) return;
                        (void)!::write(ready_fd, "x", 1);
                        for (;;) ::pause();
                    },
                    on_stderr);
            }
        } stalling;
        stalling.inner = &inner;
        stalling.seen = &seen;
        stalling.ready_fd = ready[1];
        try {
            mlt::download_file(stalling, d.remote_path, d.local_path);
        } catch (...) {
            // Whatever went wrong, the parent sees the missing "x" and fails.
        }
        ::_exit(0);
    }
    ::close(ready[1]);
    pollfd pfd{ready[0], POLLIN, 0};
    char c = 0;
    const bool stalled = ::poll(&pfd, 1, 20000) == 1 && ::read(ready[0], &c, 1) == 1;
    ::close(ready[0]);
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    ASSERT_TRUE(stalled) << "the child never reached the middle of the transfer";

    EXPECT_FALSE(fs::exists(d.local_path));
    const std::string resume = d.only_resume_file();
    const uint64_t kept = fs::file_size(resume);
    ASSERT_GT(kept, 0u);
    EXPECT_TRUE(slurp(resume) == d.content.substr(0, kept)) << "kept bytes differ";

    CountingRemote counting(d.remote);
    EXPECT_EQ(mlt::download_file(counting, d.remote_path, d.local_path), kSize);
    EXPECT_LE(counting.stdout_bytes, kSize - kept + 64) << "fetched whole again";
    EXPECT_TRUE(slurp(d.local_path) == d.content) << "content differs";
    EXPECT_EQ(mtime_ns(d.local_path), kMtime);
    EXPECT_EQ(resume_files(d.local_dir.path()), kNone);
}

TEST(TransferResume, ACompleteResumeFileIsOnlyRenamedIntoPlace) {
    // Killed after the last byte but before the rename: nothing is left to fetch.
    CutDownload d;
    write_file(d.local_dir / (".model.bin.mlt-resume-" + std::to_string(kMtime)), d.content);
    CountingRemote counting(d.remote);
    EXPECT_EQ(mlt::download_file(counting, d.remote_path, d.local_path), kSize);
    EXPECT_LE(counting.stdout_bytes, 64u) << "fetched again";
    EXPECT_TRUE(slurp(d.local_path) == d.content) << "content differs";
    EXPECT_EQ(mtime_ns(d.local_path), kMtime);
    EXPECT_EQ(resume_files(d.local_dir.path()), kNone);
}

TEST(TransferResume, LongNamesThatShareTheirStartDoNotShareAResumeFile) {
    // Resume names are shortened to fit NAME_MAX; two such names cut to the same start
    // must not take each other's bytes, even with the same remote mtime.
    CutDownload d;
    const std::string stem(240, 'n');
    const std::string first = stem + "-first.bin", second = stem + "-second.bin";
    const std::string other = pattern_bytes(kSize, 4242);
    write_at(d.remote_dir / first, d.content);
    write_at(d.remote_dir / second, other);
    CuttingRemote cutting(d.remote, kCut);
    EXPECT_THROW(mlt::download_file(cutting, d.remote_dir / first, d.local_dir / first),
                 mlt::Error);
    ASSERT_EQ(resume_files(d.local_dir.path()).size(), 1u);

    EXPECT_EQ(mlt::download_file(d.remote, d.remote_dir / second, d.local_dir / second), kSize);
    EXPECT_TRUE(slurp(d.local_dir / second) == other) << "content differs";
    // The cut download of the first name is still there to resume.
    CountingRemote counting(d.remote);
    EXPECT_EQ(mlt::download_file(counting, d.remote_dir / first, d.local_dir / first), kSize);
    EXPECT_LT(counting.stdout_bytes, kSize) << "fetched whole again";
    EXPECT_TRUE(slurp(d.local_dir / first) == d.content) << "content differs";
    EXPECT_EQ(resume_files(d.local_dir.path()), kNone);
}

TEST(TransferResume, ARemoteSymlinkToAFileIsFetchedAsThatFile) {
    // As `cat` and scp do: a download_files entry may name a link such as best.ckpt.
    CutDownload d;
    fs::create_symlink("model.bin", d.remote_dir / "best.bin");
    EXPECT_EQ(mlt::download_file(d.remote, d.remote_dir / "best.bin", d.local_dir / "best.bin"),
              kSize);
    EXPECT_TRUE(slurp(d.local_dir / "best.bin") == d.content) << "content differs";
    EXPECT_FALSE(fs::is_symlink(d.local_dir / "best.bin"));
    EXPECT_EQ(mtime_ns(d.local_dir / "best.bin"), kMtime);
    // A dangling link is a missing file.
    fs::create_symlink("nowhere.bin", d.remote_dir / "dangling.bin");
    EXPECT_EQ(mlt::download_file_if_present(d.remote, d.remote_dir / "dangling.bin",
                                            d.local_dir / "dangling.bin"),
              std::nullopt);
}

TEST(TransferResume, ARemoteFileChangedSinceTheCutIsFetchedWholeAgain) {
    for (const size_t new_size : {kSize, kSize + 4096}) {
        SCOPED_TRACE("new size " + std::to_string(new_size));
        CutDownload d;
        ASSERT_GT(d.cut(), 0u);
        // New content and a new mtime; the old bytes must not end up in the result.
        const std::string fresh = pattern_bytes(new_size, 777);
        write_at(d.remote_path, fresh, kMtime + 1000000000);

        CountingRemote counting(d.remote);
        EXPECT_EQ(mlt::download_file(counting, d.remote_path, d.local_path), new_size);
        EXPECT_GE(counting.stdout_bytes, new_size);
        EXPECT_TRUE(slurp(d.local_path) == fresh) << "content differs";
        EXPECT_EQ(mtime_ns(d.local_path), kMtime + 1000000000);
        EXPECT_EQ(resume_files(d.local_dir.path()), kNone);
    }
}

TEST(TransferResume, ARemoteFileThatShrankBelowTheKeptBytesIsFetchedWholeAgain) {
    CutDownload d;
    const uint64_t kept = d.cut();
    ASSERT_GT(kept, 1000u);
    // Smaller than what was kept, with the very same mtime: only the size tells.
    const std::string small = pattern_bytes(1000, 99);
    write_at(d.remote_path, small, kMtime);

    EXPECT_EQ(mlt::download_file(d.remote, d.remote_path, d.local_path), 1000u);
    EXPECT_TRUE(slurp(d.local_path) == small) << "content differs";
    EXPECT_EQ(mtime_ns(d.local_path), kMtime);
    EXPECT_EQ(resume_files(d.local_dir.path()), kNone);
}

TEST(TransferResume, AResumeFileReplacedByASymlinkIsNotFollowed) {
    CutDownload d;
    ASSERT_GT(d.cut(), 0u);
    TempDir elsewhere;
    // The link points at a file that looks like a good resume file (a prefix of the
    // content): followed, it would be appended to. A second, dangling link under another
    // resume name would create its target if opened.
    const std::string victim = elsewhere / "victim.bin";
    const std::string victim_content = d.content.substr(0, 5000);
    write_file(victim, victim_content);
    const std::string resume = d.only_resume_file();
    fs::remove(resume);
    fs::create_symlink(victim, resume);
    const std::string dangling = d.local_dir / ".model.bin.mlt-resume-1";
    fs::create_symlink(elsewhere / "created.bin", dangling);

    EXPECT_EQ(mlt::download_file(d.remote, d.remote_path, d.local_path), kSize);
    EXPECT_TRUE(slurp(d.local_path) == d.content) << "content differs";
    EXPECT_FALSE(fs::is_symlink(d.local_path));
    EXPECT_TRUE(slurp(victim) == victim_content) << "the link target was written to";
    EXPECT_FALSE(fs::exists(elsewhere / "created.bin"));
    EXPECT_FALSE(fs::is_symlink(resume));
    EXPECT_FALSE(fs::is_symlink(dangling));
    EXPECT_EQ(resume_files(d.local_dir.path()), kNone);
}

TEST(TransferResume, StaleResumeFilesAreRemovedAndOtherFilesResumeFilesKept) {
    CutDownload d;
    // Resume files of this name cut from older versions of the file (other mtimes), one of
    // them bigger than the remote file; and one of another file in the same dir.
    write_file(d.local_dir / (".model.bin.mlt-resume-" + std::to_string(kMtime - 5)),
               "stale bytes of an older version");
    write_file(d.local_dir / ".model.bin.mlt-resume-1500000000000000000",
               pattern_bytes(kSize + 10, 5));
    const std::string other = d.local_dir / (".other.bin.mlt-resume-" + std::to_string(kMtime));
    write_file(other, "another file's cut");

    EXPECT_EQ(mlt::download_file(d.remote, d.remote_path, d.local_path), kSize);
    EXPECT_TRUE(slurp(d.local_path) == d.content) << "content differs";
    EXPECT_EQ(resume_files(d.local_dir.path()),
              std::vector<std::string>{fs::path(other).filename().string()});
    EXPECT_EQ(slurp(other), "another file's cut");
}

TEST(TransferResume, AMissingRemoteFileWritesNothing) {
    TempDir remote_dir, local_dir;
    LocalRemote remote;
    const std::string missing = remote_dir / "no such file.zip";
    EXPECT_EQ(mlt::download_file_if_present(remote, missing, local_dir / "out.zip"), std::nullopt);
    EXPECT_TRUE(fs::is_empty(local_dir.path()));
    try {
        mlt::download_file(remote, missing, local_dir / "out.zip");
        FAIL() << "no error";
    } catch (const mlt::Error& e) {
        EXPECT_EQ(e.kind(), mlt::ErrorKind::remote);
        EXPECT_NE(std::string(e.what()).find("no such file.zip"), std::string::npos) << e.what();
    }
    EXPECT_TRUE(fs::is_empty(local_dir.path()));
    // A directory is not a regular file either.
    fs::create_directories(remote_dir / "a dir");
    EXPECT_EQ(mlt::download_file_if_present(remote, remote_dir / "a dir", local_dir / "out.zip"),
              std::nullopt);
    EXPECT_TRUE(fs::is_empty(local_dir.path()));
    // Nor are the local directories it would have gone into left behind.
    EXPECT_EQ(mlt::download_file_if_present(remote, missing, local_dir / "new/sub/out.zip"),
              std::nullopt);
    EXPECT_TRUE(fs::is_empty(local_dir.path()));
    // They stay when the file arrives.
    write_file(remote_dir / "there.zip", "zip");
    EXPECT_EQ(mlt::download_file_if_present(remote, remote_dir / "there.zip",
                                            local_dir / "new/sub/there.zip"),
              3u);
    EXPECT_EQ(slurp(local_dir / "new/sub/there.zip"), "zip");
}

TEST(TransferResume, FetchFileTellsDirectoriesAndUnfollowedSymlinksApart) {
    TempDir remote_dir, local_dir;
    LocalRemote remote;
    write_file(remote_dir / "target.zip", "private");
    fs::create_symlink(remote_dir / "target.zip", remote_dir / "link.zip");
    fs::create_directories(remote_dir / "a dir");
    mlt::FetchOptions no_links;
    no_links.follow_links = false;
    auto got = mlt::fetch_file(remote, remote_dir / "link.zip", local_dir / "out.zip", no_links);
    EXPECT_EQ(got.found, mlt::RemoteEntry::symlink);
    EXPECT_TRUE(fs::is_empty(local_dir.path()));
    got = mlt::fetch_file(remote, remote_dir / "a dir", local_dir / "out.zip");
    EXPECT_EQ(got.found, mlt::RemoteEntry::directory);
    EXPECT_TRUE(fs::is_empty(local_dir.path()));
    // Followed by default (download_files may name a link).
    got = mlt::fetch_file(remote, remote_dir / "link.zip", local_dir / "out.zip");
    EXPECT_EQ(got.found, mlt::RemoteEntry::file);
    EXPECT_EQ(got.size, 7u);
    EXPECT_EQ(slurp(local_dir / "out.zip"), "private");
}

TEST(TransferResume, AFileThatFailsItsHashLeavesTheLocalOneAsItWas) {
    TempDir remote_dir, local_dir;
    LocalRemote remote;
    write_file(remote_dir / "a.zip", "new bytes");
    write_file(local_dir / "a.zip", "old bytes");
    mlt::FetchOptions check;
    check.expect_sha256 = std::string(64, '0');
    EXPECT_THROW(mlt::fetch_file(remote, remote_dir / "a.zip", local_dir / "a.zip", check),
                 mlt::Error);
    EXPECT_EQ(slurp(local_dir / "a.zip"), "old bytes");
    EXPECT_TRUE(resume_files(local_dir.path()).empty());
    check.expect_sha256 = mlt::sha256_file(remote_dir / "a.zip");
    EXPECT_EQ(mlt::fetch_file(remote, remote_dir / "a.zip", local_dir / "a.zip", check).size, 9u);
    EXPECT_EQ(slurp(local_dir / "a.zip"), "new bytes");
}

TEST(TransferResume, AnEmptyRemoteFileArrivesEmptyWithItsMtime) {
    TempDir remote_dir, local_dir;
    LocalRemote remote;
    write_at(remote_dir / "empty", "");
    // A leftover of an earlier, non-empty version does not end up in it.
    write_file(local_dir / ".empty.mlt-resume-" + std::to_string(kMtime), "old");
    EXPECT_EQ(mlt::download_file(remote, remote_dir / "empty", local_dir / "empty"), 0u);
    EXPECT_EQ(fs::file_size(local_dir / "empty"), 0u);
    EXPECT_EQ(mtime_ns(local_dir / "empty"), kMtime);
    EXPECT_EQ(resume_files(local_dir.path()), kNone);
}

// A TransferProgress that writes its (non-interactive) summary into a temporary file.
struct QuietProgress {
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> out{std::tmpfile(), &std::fclose};
    mlt::TerminalReporter reporter{out.get(), out.get(), false};
    mlt::TransferProgress progress{"archive", 1, 0, reporter, false};
};

TEST(TransferResume, ProgressCountsTheFileAndEveryByteAlsoTheKeptOnes) {
    {
        CutDownload d;
        QuietProgress p;
        EXPECT_EQ(mlt::download_file(d.remote, d.remote_path, d.local_path, &p.progress), kSize);
        EXPECT_EQ(p.progress.bytes_done(), kSize);
        EXPECT_EQ(p.progress.files_done(), 1u);
    }
    {
        SCOPED_TRACE("resumed");
        CutDownload d;
        ASSERT_GT(d.cut(), 0u);
        QuietProgress p;
        EXPECT_EQ(mlt::download_file(d.remote, d.remote_path, d.local_path, &p.progress), kSize);
        EXPECT_EQ(p.progress.bytes_done(), kSize);
        EXPECT_EQ(p.progress.files_done(), 1u);
    }
    {
        SCOPED_TRACE("started over after a change");
        CutDownload d;
        ASSERT_GT(d.cut(), 0u);
        write_at(d.remote_path, pattern_bytes(kSize, 3), kMtime + 1);
        QuietProgress p;
        EXPECT_EQ(mlt::download_file(d.remote, d.remote_path, d.local_path, &p.progress), kSize);
        EXPECT_EQ(p.progress.bytes_done(), kSize);
        EXPECT_EQ(p.progress.files_done(), 1u);
    }
}

// A remote tree of small files and one of kResumableSize bytes (sparse), all with mtimes.
struct SyncTree {
    TempDir remote_dir, local_dir;
    LocalRemote remote;
    std::map<std::string, std::string> small = {
        {"a.txt", "alpha\n"}, {"sub/b.txt", "beta"}, {"sub/deeper/c.bin", pattern_bytes(70000)}};
    std::string big = "big/huge.bin";
    uint64_t big_size = mlt::kResumableSize + 5;

    SyncTree() {
        int64_t ns = kMtime;
        for (const auto& [rel, content] : small) write_at(remote_dir / rel, content, ns += 1111);
        fs::create_directories(remote_dir / "big");
        write_file(remote_dir / big, "head");
        fs::resize_file(remote_dir / big, big_size);
        set_mtime(remote_dir / big, kMtime + 7);
    }

    // The big file's expected content: "head" and zeros.
    std::string big_content() const {
        std::string s(big_size, '\0');
        s.replace(0, 4, "head");
        return s;
    }

    void expect_all_arrived() const {
        for (const auto& [rel, content] : small) {
            EXPECT_TRUE(slurp(local_dir / rel) == content) << rel << " differs";
            EXPECT_EQ(mtime_ns(local_dir / rel), mtime_ns(remote_dir / rel)) << rel;
        }
        EXPECT_TRUE(slurp(local_dir / big) == big_content()) << "big file differs";
        EXPECT_EQ(mtime_ns(local_dir / big), kMtime + 7);
        EXPECT_TRUE(mlt::test::part_files(local_dir.path()).empty());
    }
};

TEST(TransferResume, SyncDownPullsSmallAndBigFilesAndASecondSyncMovesNothing) {
    SyncTree t;
    CountingRemote counting(t.remote);
    const mlt::SyncResult first = mlt::sync_down(counting, t.remote_dir.path(), t.local_dir.path());
    EXPECT_EQ(first.moved.files, 4u);
    EXPECT_EQ(first.moved.bytes, t.big_size + 6 + 4 + 70000);
    EXPECT_EQ(first.unchanged, 0u);
    t.expect_all_arrived();
    // The big file came on its own (in ranges: commands naming it), the rest in one tar
    // stream that does not name it.
    int naming_big = 0;
    for (const auto& c : counting.commands) {
        if (c.find("huge.bin") == std::string::npos) continue;
        ++naming_big;
        EXPECT_EQ(c.find("tar "), std::string::npos) << c;
    }
    EXPECT_GE(naming_big, 1);

    const mlt::SyncResult second =
        mlt::sync_down(t.remote, t.remote_dir.path(), t.local_dir.path());
    EXPECT_EQ(second.moved.files, 0u);
    EXPECT_EQ(second.moved.bytes, 0u);
    EXPECT_EQ(second.unchanged, 4u);
}

TEST(TransferResume, SyncDownCutInsideABigFileMovesOnlyTheRangesNotDoneNextTime) {
    SyncTree t;
    const uint64_t range = mlt::range_size_for(t.big_size);
    {
        // The first range arrives whole, the second is cut.
        CuttingRemote cutting(t.remote, range + 4 * 1024 * 1024);
        EXPECT_THROW(mlt::sync_down(cutting, t.remote_dir.path(), t.local_dir.path()), mlt::Error);
        ASSERT_EQ(cutting.cuts, 1);
    }
    // The pull stages files in .mlt-pull; the partial file and its done ranges stay there
    // for the next pull.
    const std::string staged_big = t.local_dir / (std::string(mlt::kPullStaging) + "/big");
    ASSERT_EQ(mlt::test::part_files(staged_big).size(), 2u);  // the partial file, its state

    CountingRemote counting(t.remote);
    const mlt::SyncResult r = mlt::sync_down(counting, t.remote_dir.path(), t.local_dir.path());
    EXPECT_EQ(r.moved.files, 4u);
    EXPECT_LT(counting.stdout_bytes, t.big_size - range + 70000 + 64 * 1024)
        << "the range that had arrived was moved again";
    t.expect_all_arrived();
    EXPECT_FALSE(fs::exists(staged_big));
}

// A local symlinked directory where remote files go is never written through: those files
// are skipped and named, the rest arrives.
TEST(TransferResume, SyncDownDoesNotWriteThroughALocalSymlinkedDirectory) {
    SyncTree t;
    TempDir elsewhere;
    // The remote big/ holds the big file; locally big is a link to another directory.
    fs::create_directory_symlink(elsewhere.path(), t.local_dir / "big");
    mlt::test::CapturedLog log;
    const mlt::SyncResult r = mlt::sync_down(t.remote, t.remote_dir.path(), t.local_dir.path());
    EXPECT_EQ(r.skipped, 1u);
    EXPECT_EQ(r.moved.files, 3u);
    EXPECT_NE(log.text().find("in the way 1: 'big/huge.bin'"), std::string::npos) << log.text();
    EXPECT_TRUE(fs::is_empty(elsewhere.path()));
    EXPECT_TRUE(fs::is_symlink(t.local_dir / "big"));
}

TEST(TransferResume, SyncDownDoesNotWriteASmallFileThroughALocalSymlinkedDirectory) {
    SyncTree t;
    TempDir elsewhere;
    fs::create_directory_symlink(elsewhere.path(), t.local_dir / "sub");
    const mlt::SyncResult r = mlt::sync_down(t.remote, t.remote_dir.path(), t.local_dir.path());
    EXPECT_EQ(r.skipped, 2u);
    EXPECT_TRUE(fs::is_empty(elsewhere.path()));
}

}  // namespace
