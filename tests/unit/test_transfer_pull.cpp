// sync_down against a remote that changes while it is pulled: files removed or rewritten
// between the listing and the packing, or while they are read, names that cannot be copied
// here, and remote files named like mlt's own. The remote is this machine (LocalRemote);
// the changes are made by hooks at exactly the moment that matters.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "local_remote.h"
#include "mlt/transfer/ranges.h"
#include "mlt/transfer/sync.h"
#include "mlt/util/shell.h"
#include "transfer_fixtures.h"

namespace {

namespace fs = std::filesystem;
using mlt::test::CapturedLog;
using mlt::test::LocalRemote;
using mlt::test::slurp;
using mlt::test::TempDir;
using mlt::test::write_file;

// A LocalRemote that, for the first command containing `marker`, runs `before` ahead of it
// and `during` once more than `during_after` bytes of its output have arrived (a range
// command prints a marker line before its bytes: past it, the file is being read). Without
// root, or with `drop_read_override` as root, commands run as a user who cannot read a file
// of mode 000.
class HookedRemote : public LocalRemote {
  public:
    std::string marker;
    std::function<void()> before, during;
    size_t during_after = 0;
    bool drop_read_override = false;
    bool fired = false;

    int stream(const std::string& command, const mlt::InputSource& input,
               const mlt::OutputSink& on_stdout, const mlt::OutputSink& on_stderr) override {
        std::string run = command;
        if (drop_read_override && ::geteuid() == 0)
            run = "exec setpriv --bounding-set -dac_override,-dac_read_search -- sh -c " +
                  mlt::shell_quote(command);
        if (fired || marker.empty() || command.find(marker) == std::string::npos)
            return LocalRemote::stream(run, input, on_stdout, on_stderr);
        fired = true;
        if (before) before();
        size_t seen = 0;
        bool done = false;
        return LocalRemote::stream(
            run, input,
            [&](std::string_view d) {
                seen += d.size();
                if (!done && seen > during_after && during) {
                    done = true;
                    during();
                }
                on_stdout(d);
            },
            on_stderr);
    }
};

// Output bytes after which a range command is surely reading its file: more than its marker
// line, less than a pipe holds.
constexpr size_t kPastTheMarker = 4096;

// Rewrites `path` in place (truncate, then write) with `size` bytes of `byte`, as
// torch.save does.
void rewrite_in_place(const std::string& path, size_t size, char byte) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC);
    ASSERT_GE(fd, 0);
    const std::string chunk(1 << 20, byte);
    for (size_t done = 0; done < size;) {
        const size_t n = std::min(chunk.size(), size - done);
        ASSERT_EQ(::write(fd, chunk.data(), n), static_cast<ssize_t>(n));
        done += n;
    }
    ::close(fd);
}

// True when `content` is `size` bytes, all `byte`.
::testing::AssertionResult all_bytes(const std::string& content, size_t size, char byte) {
    if (content.size() != size)
        return ::testing::AssertionFailure() << "size " << content.size() << ", not " << size;
    const size_t other = content.find_first_not_of(byte);
    if (other != std::string::npos)
        return ::testing::AssertionFailure()
               << "byte " << other << " is '" << content[other] << "', not '" << byte << "'";
    return ::testing::AssertionSuccess();
}

TEST(TransferPull, AFileRemovedBetweenListingAndPackingIsSkippedAndTheRestArrives) {
    TempDir remote_dir, local;
    write_file(remote_dir / "a.txt", "a");
    write_file(remote_dir / "checkpoint-1.bin", "old checkpoint");
    write_file(remote_dir / "z.txt", "z");
    HookedRemote remote;
    remote.marker = "tar -cf";
    remote.before = [&] { fs::remove(remote_dir / "checkpoint-1.bin"); };
    CapturedLog log;
    const mlt::SyncResult r = mlt::sync_down(remote, remote_dir.path(), local.path());
    EXPECT_TRUE(remote.fired);
    EXPECT_EQ(slurp(local / "a.txt"), "a");
    EXPECT_EQ(slurp(local / "z.txt"), "z");
    EXPECT_FALSE(fs::exists(local / "checkpoint-1.bin"));
    EXPECT_EQ(r.moved.files, 2u);
    EXPECT_EQ(r.skipped, 1u);
    EXPECT_NE(log.text().find("skipped (vanished) 1: 'checkpoint-1.bin'"), std::string::npos)
        << log.text();
    EXPECT_FALSE(fs::exists(local / mlt::kPullStaging));
}

// A big file goes by itself (in ranges); rewritten while it is read, the copy is torn. It is
// fetched again and only the whole second version is published.
TEST(TransferPull, ABigFileRewrittenWhileItIsReadArrivesAsOneWholeVersion) {
    TempDir remote_dir, local;
    const size_t size = mlt::kResumableSize + 3 * 1024 * 1024;
    const std::string path = remote_dir / "model.ckpt";
    write_file(path, std::string(size, '1'));
    HookedRemote remote;
    remote.marker = "head -c";
    remote.during_after = kPastTheMarker;
    remote.during = [&] { rewrite_in_place(path, size, '2'); };
    CapturedLog log;
    const mlt::SyncResult r = mlt::sync_down(remote, remote_dir.path(), local.path());
    EXPECT_TRUE(remote.fired);
    EXPECT_TRUE(all_bytes(slurp(local / "model.ckpt"), size, '2'));
    EXPECT_EQ(r.moved.files, 1u);
    EXPECT_NE(log.text().find("fetched again (changed while read) 1: 'model.ckpt'"),
              std::string::npos)
        << log.text();
}

// A range whose bytes change on the sender while it moves (its first 16 MiB rewritten in
// place, same size): the second hash on the sender does not match what arrived, so the
// range is moved again; the local file is renamed into place only as the sender's bytes now.
TEST(TransferRanges, ARangeWhoseBytesChangedOnTheSenderIsMovedAgainNeverTaken) {
    TempDir remote_dir, local;
    const size_t size = 40 * 1024 * 1024;
    const std::string path = remote_dir / "model.ckpt";
    write_file(path, std::string(size, '1'));
    HookedRemote remote;
    remote.marker = "head -c";
    remote.during_after = kPastTheMarker;
    remote.during = [&] {
        const int fd = ::open(path.c_str(), O_WRONLY);
        ASSERT_GE(fd, 0);
        const std::string twos(mlt::range_size_for(size), '2');
        ASSERT_EQ(::pwrite(fd, twos.data(), twos.size(), 0), static_cast<ssize_t>(twos.size()));
        ::close(fd);
    };
    const auto listed = mlt::stat_remote_files(remote, remote_dir.path(), {"model.ckpt"});
    ASSERT_EQ(listed.size(), 1u);
    const mlt::RangeStats stats =
        mlt::download_ranges(remote, path, listed.front(), local / "model.ckpt");
    EXPECT_TRUE(remote.fired);
    EXPECT_GE(stats.moved_again, 1u);
    EXPECT_EQ(slurp(local / "model.ckpt"), slurp(path));
    EXPECT_TRUE(mlt::test::part_files(local.path()).empty());
}

// A big file that grows while it is read (a checkpoint still being written): the copy
// published is one whole version, the grown one, never the listed size with new bytes.
TEST(TransferPull, ABigFileThatGrowsWhileItIsReadArrivesAsOneWholeVersion) {
    TempDir remote_dir, local;
    const size_t size = mlt::kResumableSize + 1024 * 1024;
    const std::string path = remote_dir / "live.ckpt";
    write_file(path, std::string(size, 'a'));
    HookedRemote remote;
    remote.marker = "head -c";
    remote.during_after = kPastTheMarker;
    remote.during = [&] {
        std::ofstream(path, std::ios::app) << std::string(5 * 1024 * 1024, 'b');
    };
    CapturedLog log;
    const mlt::SyncResult r = mlt::sync_down(remote, remote_dir.path(), local.path());
    EXPECT_TRUE(remote.fired);
    EXPECT_EQ(r.moved.files, 1u);
    EXPECT_EQ(slurp(local / "live.ckpt"), slurp(path));
    EXPECT_TRUE(mlt::test::part_files(local.path()).empty());
}

// The same for a file in the tar stream (tar says "file changed as we read it").
TEST(TransferPull, ASmallFileRewrittenWhileItIsPackedArrivesAsOneWholeVersion) {
    TempDir remote_dir, local;
    const size_t size = 8 * 1024 * 1024;
    const std::string path = remote_dir / "events.bin";
    write_file(path, std::string(size, 'a'));
    write_file(remote_dir / "other.txt", "other");
    HookedRemote remote;
    remote.marker = "tar -cf";
    remote.during = [&] { rewrite_in_place(path, size, 'b'); };
    CapturedLog log;
    mlt::sync_down(remote, remote_dir.path(), local.path());
    EXPECT_TRUE(remote.fired);
    EXPECT_TRUE(all_bytes(slurp(local / "events.bin"), size, 'b'));
    EXPECT_EQ(slurp(local / "other.txt"), "other");
    EXPECT_NE(log.text().find("'events.bin'"), std::string::npos) << log.text();
}

// mlt's own files in the local log dir (the console copy) and its staging dir are never
// replaced by remote files of the same name: those are stored aside.
TEST(TransferPull, RemoteFilesNamedLikeMltsOwnAreStoredAside) {
    TempDir remote_dir, local;
    const std::string console = "mltk_ssh_train_m.log";
    write_file(remote_dir / console, "remote file");
    fs::create_directories(remote_dir / mlt::kPullStaging);
    write_file(remote_dir / (std::string(mlt::kPullStaging) + "/x"), "x");
    write_file(remote_dir / "plain.txt", "plain");
    write_file(local / console, "the console copy");
    LocalRemote remote;
    CapturedLog log;
    const mlt::SyncResult r = mlt::sync_down(remote, remote_dir.path(), local.path(),
                                             [] { return mlt::Compression::none; }, {console});
    EXPECT_EQ(slurp(local / console), "the console copy");
    EXPECT_EQ(slurp(local / (console + ".remote")), "remote file");
    EXPECT_EQ(slurp(local / (std::string(mlt::kPullStaging) + ".remote/x")), "x");
    EXPECT_EQ(slurp(local / "plain.txt"), "plain");
    EXPECT_EQ(r.moved.files, 3u);
    EXPECT_NE(log.text().find("'" + console + "' as '" + console + ".remote'"), std::string::npos)
        << log.text();
    // Stored aside, the copies compare equal next time: nothing moves, no warning again. A
    // staging dir left by a pull cut off earlier goes.
    write_file(local / (std::string(mlt::kPullStaging) + "/leftover"), "cut off");
    CapturedLog again;
    EXPECT_EQ(mlt::sync_down(remote, remote_dir.path(), local.path(),
                             [] { return mlt::Compression::none; }, {console})
                  .moved.files,
              0u);
    EXPECT_EQ(again.text(), "");
    EXPECT_FALSE(fs::exists(local / mlt::kPullStaging));
}

// A remote path longer than PATH_MAX (17 names of 250 bytes) cannot be packed by tar nor
// stored here: it is skipped and named; the rest arrives.
TEST(TransferPull, APathTooLongForThisMachineIsSkippedAndNamed) {
    TempDir remote_dir, local;
    write_file(remote_dir / "ok.txt", "ok");
    const std::string name(250, 'd');
    int dir = ::open(remote_dir.path().c_str(), O_RDONLY | O_DIRECTORY);
    ASSERT_GE(dir, 0);
    for (int i = 0; i < 17; ++i) {
        ASSERT_EQ(::mkdirat(dir, name.c_str(), 0755), 0);
        const int next = ::openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY);
        ::close(dir);
        dir = next;
        ASSERT_GE(dir, 0);
    }
    const int fd = ::openat(dir, "deep.txt", O_WRONLY | O_CREAT, 0644);
    ASSERT_GE(fd, 0);
    ::close(fd);
    ::close(dir);
    LocalRemote remote;
    CapturedLog log;
    const mlt::SyncResult r = mlt::sync_down(remote, remote_dir.path(), local.path());
    EXPECT_EQ(slurp(local / "ok.txt"), "ok");
    EXPECT_EQ(r.skipped, 1u);
    EXPECT_NE(log.text().find("path too long here 1: 'ddd"), std::string::npos) << log.text();
    EXPECT_NE(log.text().find("deep.txt'"), std::string::npos) << log.text();
    // TempDir's remove_all cannot take paths this long; rm can.
    EXPECT_EQ(std::system(("rm -rf " + mlt::shell_quote(remote_dir / name)).c_str()), 0);
}

// A file the remote user cannot read is skipped and named; the rest arrives.
TEST(TransferPull, AnUnreadableRemoteFileIsSkippedAndNamed) {
    TempDir remote_dir, local;
    write_file(remote_dir / "ok.txt", "ok");
    write_file(remote_dir / "secret.bin", "secret");
    ASSERT_EQ(::chmod((remote_dir / "secret.bin").c_str(), 0), 0);
    HookedRemote remote;
    remote.drop_read_override = true;
    CapturedLog log;
    const mlt::SyncResult r = mlt::sync_down(remote, remote_dir.path(), local.path());
    EXPECT_EQ(slurp(local / "ok.txt"), "ok");
    EXPECT_FALSE(fs::exists(local / "secret.bin"));
    EXPECT_EQ(r.skipped, 1u);
    EXPECT_NE(log.text().find("unreadable 1: 'secret.bin'"), std::string::npos) << log.text();
}

// A LocalRemote whose link has a known round trip.
class TimedRemote : public LocalRemote {
  public:
    explicit TimedRemote(double rtt) : rtt_(rtt) {}
    double round_trip_s() const override { return rtt_; }

  private:
    double rtt_;
};

// A LinkPool of no links: `auto` or a number.
class NoLinks : public mlt::LinkPool {
  public:
    explicit NoLinks(bool tuning) : tuning_(tuning) {}
    size_t limit() const override { return 0; }
    bool tuning() const override { return tuning_; }
    mlt::Remote* link(size_t) override { return nullptr; }
    void drop(size_t) override {}

  private:
    bool tuning_;
};

// The commands of `remote` that moved ranges (each moves a run of them): down, a `for` loop
// over the ranges it was given; up, a `while read` loop over those it is sent.
size_t range_commands(const LocalRemote& remote) {
    size_t n = 0;
    for (const auto& c : remote.commands)
        n += c.find("for r in ") != std::string::npos ||
             c.find("while IFS=: read -r") != std::string::npos;
    return n;
}

TEST(TransferRanges, RangesPayFrom32MiBOverAFarLinkAndFrom256MiBOverANearOneWithAuto) {
    const uint64_t mib = 1024 * 1024;
    const TimedRemote near(0.002), far(0.05), unknown(-1);
    const NoLinks tuning(true), fixed(false);
    EXPECT_FALSE(mlt::ranges_pay(far, 32 * mib - 1, &tuning));
    EXPECT_TRUE(mlt::ranges_pay(far, 32 * mib, &tuning));
    EXPECT_TRUE(mlt::ranges_pay(unknown, 32 * mib, nullptr));
    EXPECT_FALSE(mlt::ranges_pay(near, 255 * mib, &tuning));
    EXPECT_FALSE(mlt::ranges_pay(near, 255 * mib, nullptr));
    EXPECT_TRUE(mlt::ranges_pay(near, 256 * mib, &tuning));
    // A number of connections asked for is used from 32 MiB, near or far.
    EXPECT_TRUE(mlt::ranges_pay(near, 32 * mib, &fixed));
}

// The remote hashes with openssl when it is there and answers right, else with sha256sum;
// each PATH here holds only the tools it names, so the choice is the setup's own.
TEST(TransferRanges, TheRemoteHashIsOpensslWhenItHashesRightElseSha256sum) {
    TempDir dir;
    LocalRemote local;
    const std::string tools = local.run("command -v sha256sum; command -v cut").out;
    const size_t nl = tools.find('\n');
    ASSERT_NE(nl, std::string::npos) << tools;
    const std::string sha256sum = tools.substr(0, nl);
    const std::string cut = tools.substr(nl + 1, tools.find('\n', nl + 1) - nl - 1);
    const std::string abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
    const std::map<std::string, std::string> openssl_by_case = {
        {"none", ""},
        {"broken", "#!/bin/sh\necho 0000 \"*stdin\"\n"},
        {"good",
         "#!/bin/sh\n: > \"${0%/*}/used\"; h=$(" + sha256sum + "); echo \"${h%% *} *stdin\"\n"},
    };
    for (const auto& [name, openssl] : openssl_by_case) {
        const std::string bin = dir / name;
        ASSERT_TRUE(std::filesystem::create_directory(bin));
        std::filesystem::create_symlink(sha256sum, bin + "/sha256sum");
        std::filesystem::create_symlink(cut, bin + "/cut");
        if (!openssl.empty()) {
            write_file(bin + "/openssl", openssl);
            ::chmod((bin + "/openssl").c_str(), 0755);
        }
        const mlt::RemoteOutput got =
            local.run("PATH=" + mlt::shell_quote(bin) + "; " + mlt::remote_hash_setup() +
                      "echo \"$hash_cmd\"; printf abc | $hash_cmd | cut -c1-64");
        const bool used = name == "good";
        EXPECT_EQ(got.out,
                  std::string(used ? "openssl dgst -sha256 -r" : "sha256sum") + "\n" + abc + "\n")
            << name << ": " << got.err;
        EXPECT_EQ(std::filesystem::exists(bin + "/used"), used) << name;
    }
}

// Over a near link a 40 MiB file does not pay for ranges: it is one range, one remote
// command, each way, and still arrives whole.
TEST(TransferRanges, AFileThatDoesNotPayIsOneRangeInOneCommandEachWay) {
    TempDir remote_dir, local;
    const std::string path = remote_dir / "model.ckpt";
    write_file(path, std::string(40 * 1024 * 1024, '7'));
    TimedRemote remote(0.001);
    NoLinks links(true);
    mlt::RangeOptions options;
    options.links = &links;
    const auto listed = mlt::stat_remote_files(remote, remote_dir.path(), {"model.ckpt"});
    ASSERT_EQ(listed.size(), 1u);
    const mlt::RangeStats down =
        mlt::download_ranges(remote, path, listed.front(), local / "model.ckpt", options);
    EXPECT_EQ(down.ranges, 1u);
    EXPECT_EQ(range_commands(remote), 1u);
    EXPECT_EQ(slurp(local / "model.ckpt"), slurp(path));
    const mlt::RangeStats up =
        mlt::upload_ranges(remote, local / "model.ckpt", remote_dir / "back.ckpt", options);
    EXPECT_EQ(up.ranges, 1u);
    EXPECT_EQ(range_commands(remote), 2u);
    EXPECT_EQ(slurp(remote_dir / "back.ckpt"), slurp(path));
}

// A TimedRemote that keeps the commands sent ahead (and runs each when it is asked for).
class AheadRemote : public TimedRemote {
  public:
    explicit AheadRemote(double rtt) : TimedRemote(rtt) {}
    void run_ahead(const std::string& command, std::string) override { aheads.push_back(command); }
    std::vector<std::string> aheads;
};

// The first of `remote`'s commands that contains `text`; commands.size() when none does.
size_t first_with(const LocalRemote& remote, const std::string& text) {
    size_t i = 0;
    while (i < remote.commands.size() && remote.commands[i].find(text) == std::string::npos) ++i;
    return i;
}

// An upload of a big file and a small one: over a far link the small file's stream goes
// first, with the big file's preparing command sent ahead (the same command, asked for next);
// over a near link that command goes first on its own, and nothing is sent ahead.
TEST(TransferRanges, OverAFarLinkTheSmallStreamGoesFirstWithTheBigFilesPreparingCommand) {
    for (const double rtt : {0.1, 0.002}) {
        SCOPED_TRACE(rtt);
        TempDir remote_dir, local;
        write_file(local / "big.bin", std::string(33 * 1024 * 1024, 'b'));
        write_file(local / "small.txt", "small");
        AheadRemote remote(rtt);
        NoLinks links(false);  // a number of connections: ranges from 32 MiB either way
        const std::map<std::string, std::vector<mlt::UploadItem>> plan = {
            {remote_dir.path(),
             {{local / "big.bin", "big.bin"}, {local / "small.txt", "small.txt"}}}};
        mlt::sync_up(
            remote, plan, [] { return mlt::Compression::none; }, &links);
        EXPECT_EQ(slurp(remote_dir / "big.bin"), slurp(local / "big.bin"));
        EXPECT_EQ(slurp(remote_dir / "small.txt"), "small");
        const size_t stream = first_with(remote, "tar -x");
        const size_t prepare = first_with(remote, "\"$d/id\"");
        ASSERT_LT(stream, remote.commands.size());
        ASSERT_LT(prepare, remote.commands.size());
        if (rtt > 0.05) {
            EXPECT_LT(stream, prepare);
            ASSERT_EQ(remote.aheads.size(), 1u);
            EXPECT_EQ(remote.aheads.front(), remote.commands[prepare]);
        } else {
            EXPECT_LT(prepare, stream);
            EXPECT_EQ(remote.aheads.size(), 0u);
        }
    }
}

// A LinkPool of no links that counts the links it was asked to open ahead.
class CountingLinks : public NoLinks {
  public:
    CountingLinks() : NoLinks(true) {}
    size_t limit() const override { return 3; }
    void open_ahead() override { ++opened_ahead; }
    void open_first() override { ++opened_first; }
    int opened_ahead = 0;
    int opened_first = 0;
};

// The upload's listings go ahead with the lock. Over a far link a local file big enough for
// links also starts the first one connecting then (whether it changed is known only from the
// listing); over a near link, or with small files only, nothing connects.
TEST(TransferRanges, AFarUploadOfABigLocalFileStartsItsFirstLinkWithTheListings) {
    TempDir local;
    write_file(local / "big.bin", "");
    std::filesystem::resize_file(local / "big.bin", 200ull * 1024 * 1024);  // sparse
    write_file(local / "small.txt", "small");
    for (const double rtt : {0.1, 0.002}) {
        for (const bool big : {true, false}) {
            SCOPED_TRACE(std::to_string(rtt) + (big ? " big" : " small"));
            std::vector<mlt::UploadItem> items = {{local / "small.txt", "small.txt"}};
            if (big) items.push_back({local / "big.bin", "big.bin"});
            AheadRemote remote(rtt);
            CountingLinks links;
            mlt::sync_up_ahead(remote, {{"/nowhere", items}}, &links);
            EXPECT_EQ(remote.aheads.size(), 1u);  // the listing
            EXPECT_TRUE(remote.commands.empty());
            EXPECT_EQ(links.opened_first, big && rtt > 0.05 ? 1 : 0);
            EXPECT_EQ(links.opened_ahead, 0);
        }
    }
}

// A remote whose writes of range 1 land with their first byte wrong, the first time: the
// hash of what landed differs from what was sent.
class CorruptingRemote : public TimedRemote {
  public:
    explicit CorruptingRemote(std::string flag) : TimedRemote(0.05), flag_(std::move(flag)) {}
    int stream(const std::string& command, const mlt::InputSource& input,
               const mlt::OutputSink& on_stdout, const mlt::OutputSink& on_stderr) override {
        const std::string write = "head -c \"$n\" | dd of=";
        std::string c = command;
        const size_t at = c.find(write);
        if (at != std::string::npos)
            c.replace(at, write.size(),
                      "head -c \"$n\" | { if [ \"$i\" = 1 ] && [ ! -e " + flag_ + " ]; then : > " +
                          flag_ + "; head -c 1 >/dev/null; printf X; fi; cat; } | dd of=");
        return TimedRemote::stream(c, input, on_stdout, on_stderr);
    }

  private:
    std::string flag_;
};

// Up, a range that lands with other bytes than were sent (its remote hash differs) is dealt
// again (to a command still taking ranges, or to a new one), and the file is put in place
// only whole.
TEST(TransferRanges, AnUploadedRangeThatLandedWrongIsSentAgainNeverTaken) {
    TempDir remote_dir, local;
    const std::string source = local / "model.ckpt";
    write_file(source, std::string(72 * 1024 * 1024, '7'));
    CorruptingRemote remote(remote_dir / "corrupted-once");
    const mlt::RangeStats up = mlt::upload_ranges(remote, source, remote_dir / "back.ckpt");
    EXPECT_TRUE(fs::exists(remote_dir / "corrupted-once"));
    EXPECT_EQ(up.ranges, 5u);
    EXPECT_EQ(up.moved_again, 1u);
    EXPECT_EQ(slurp(remote_dir / "back.ckpt"), slurp(source));
    EXPECT_TRUE(mlt::test::part_files(remote_dir.path()).empty());
}

// Where ranges pay, one remote command moves several, one after the other, and every byte
// lands at its place. The 9 ranges of a 130 MiB file: down, a run fixed when each command
// starts, 3 commands side by side (3 ranges each); up, each of the far link's 8 commands
// takes its next range as it is ready for one (this fake runs them one after the other, so
// the first takes the ninth).
TEST(TransferRanges, OneCommandMovesARunOfRangesEachWay) {
    TempDir remote_dir, local;
    const std::string path = remote_dir / "model.ckpt";
    std::string bytes(130 * 1024 * 1024, '\0');
    for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>((i * 7919) >> 13);
    write_file(path, bytes);
    TimedRemote remote(0.05);
    const auto listed = mlt::stat_remote_files(remote, remote_dir.path(), {"model.ckpt"});
    ASSERT_EQ(listed.size(), 1u);
    const mlt::RangeStats down =
        mlt::download_ranges(remote, path, listed.front(), local / "model.ckpt");
    EXPECT_EQ(down.ranges, 9u);
    EXPECT_EQ(range_commands(remote), 3u);
    EXPECT_EQ(slurp(local / "model.ckpt"), bytes);
    const mlt::RangeStats up =
        mlt::upload_ranges(remote, local / "model.ckpt", remote_dir / "back.ckpt");
    EXPECT_EQ(up.ranges, 9u);
    EXPECT_EQ(range_commands(remote), 11u);
    EXPECT_EQ(slurp(remote_dir / "back.ckpt"), bytes);
    EXPECT_TRUE(mlt::test::part_files(local.path()).empty());
    EXPECT_TRUE(mlt::test::part_files(remote_dir.path()).empty());
}

}  // namespace
