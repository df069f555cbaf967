// The remote scripts of the transfer layer (src/transfer/sh/), each run as mlt sends it under
// dash and under BusyBox's sh on temporary files, and compared with what the C++ side
// expects: the same bytes and hashes, the same listings under both shells.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "mlt/transfer/transfer.h"
#include "mlt/util/sha256.h"
#include "mlt/util/shell.h"
#include "sh_check.h"
#include "transfer/commands.h"
#include "transfer/range_commands.h"
#include "transfer_fixtures.h"

namespace {

namespace fs = std::filesystem;
using mlt::test::slurp;
using mlt::test::TempDir;
using mlt::test::write_file;
using mlt::transfer_detail::Range;

constexpr uint64_t kBlock = 64 * 1024;  // mlt::kRangeBlock

// What one command printed on stdout and on stderr, and its status.
struct Ran {
    int status = -1;
    std::string out, err;
};

// `command` run by `shell` with `input` on its stdin; its output goes through files in `io`.
Ran run_command(const std::vector<std::string>& shell, const std::string& command,
                const TempDir& io, const std::string& input = "") {
    write_file(io / "in", input);
    const std::string text = "{\n" + command + "\n} < " + mlt::shell_quote(io / "in") + " > " +
                             mlt::shell_quote(io / "out") + " 2> " + mlt::shell_quote(io / "err") +
                             "\n";
    const mlt::sh_check::Run r = mlt::sh_check::run_script(shell, text);
    EXPECT_EQ(r.output, "") << "the wrapper itself said something";
    return {r.status, slurp(io / "out"), slurp(io / "err")};
}

std::string sha256(std::string_view bytes) {
    mlt::Sha256 hash;
    hash.update(bytes);
    return hash.hex_digest();
}

// Bytes that differ from block to block and within one.
std::string pattern(size_t size) {
    std::string bytes(size, '\0');
    for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<char>((i * 7919) >> 9);
    return bytes;
}

// The NUL-terminated records of `text`.
std::vector<std::string> records(const std::string& text) {
    std::vector<std::string> out;
    for (size_t at = 0; at < text.size();) {
        const size_t end = text.find('\0', at);
        out.push_back(text.substr(at, end - at));
        at = end == std::string::npos ? text.size() : end + 1;
    }
    return out;
}

// Names that a shell, find, xargs or tar could mangle.
const std::vector<std::string>& odd_names() {
    static const std::vector<std::string> names{"it's a b.txt", "-n", "sub dir/\"q\" $x.bin",
                                                "new\nline", "plain"};
    return names;
}

TEST(TransferScripts, RangeHashesAreTheSha256OfEachRangeUnderBothShells) {
    TempDir dir, io;
    const std::string path = dir / "it's a b.bin";
    const std::string bytes = pattern(3 * kBlock + 1000);
    write_file(path, bytes);
    const std::vector<Range> ranges{{0, 0, kBlock}, {1, kBlock, 2 * kBlock}, {2, 3 * kBlock, 1000}};
    std::string specs;
    for (const Range& r : ranges) specs += mlt::transfer_detail::range_word(r) + "\n";
    for (const auto& shell : mlt::sh_check::shells()) {
        SCOPED_TRACE(mlt::sh_check::shell_name(shell));
        const Ran ran =
            run_command(shell, mlt::transfer_detail::range_hashes_command(path), io, specs);
        EXPECT_EQ(ran.status, 0) << ran.err;
        const auto hashes = mlt::transfer_detail::hash_lines(ran.out);
        ASSERT_EQ(hashes.size(), ranges.size()) << ran.out;
        for (const Range& r : ranges)
            EXPECT_EQ(hashes.at(r.index),
                      sha256(std::string_view(bytes).substr(r.offset, r.length)))
                << r.index;
    }
}

TEST(TransferScripts, SentRangesAreTheirBytesThenTheirHashesUnderBothShells) {
    TempDir dir, io;
    const std::string path = dir / "sub dir/it's.bin";
    const std::string bytes = pattern(3 * kBlock + 1000);
    write_file(path, bytes);
    // The last range lies past the end (a file that shrank): zeros, with the empty file's hash.
    const std::vector<Range> ranges{{2, 3 * kBlock, 1000}, {0, 0, kBlock}, {3, 4 * kBlock, 500}};
    std::string expected = "mlt-marker\n", hashes;
    for (const Range& r : ranges) {
        const std::string_view in = r.offset < bytes.size()
                                        ? std::string_view(bytes).substr(r.offset, r.length)
                                        : std::string_view();
        expected += std::string(in) + std::string(r.length - in.size(), '\0');
        hashes += std::to_string(r.index) + " " + sha256(in) + "\n";
    }
    for (const auto& shell : mlt::sh_check::shells()) {
        SCOPED_TRACE(mlt::sh_check::shell_name(shell));
        const Ran ran = run_command(
            shell, mlt::transfer_detail::send_ranges_command("mlt-marker", path, ranges), io);
        EXPECT_EQ(ran.status, 0) << ran.err;
        EXPECT_TRUE(ran.out == expected) << ran.out.size() << " bytes, not " << expected.size();
        // Only the hash lines: where SIGPIPE is ignored (as here), the head that pads a range
        // says that its pipe closed.
        std::string said;
        std::istringstream lines(ran.err);
        size_t index = 0;
        std::string hash;
        for (std::string line; std::getline(lines, line);)
            if (mlt::transfer_detail::hash_line(line, index, hash)) said += line + "\n";
        EXPECT_EQ(said, hashes) << ran.err;
    }
}

TEST(TransferScripts, ReceivedRangesLandAtTheirOffsetsWithTheirHashesUnderBothShells) {
    const std::string bytes = pattern(3 * kBlock + 1000);
    const std::vector<Range> ranges{{1, kBlock, 2 * kBlock}, {2, 3 * kBlock, 1000}, {0, 0, kBlock}};
    std::string input, said;
    for (const Range& r : ranges) {
        const std::string part = bytes.substr(r.offset, r.length);
        input += mlt::transfer_detail::range_word(r) + "\n" + part;
        said += std::to_string(r.index) + " " + sha256(part) + "\n";
    }
    for (const auto& shell : mlt::sh_check::shells()) {
        SCOPED_TRACE(mlt::sh_check::shell_name(shell));
        TempDir dir, io;
        const std::string partial = dir / ".it's a b.mlt-ranges", hashes = partial + ".d";
        fs::create_directories(hashes);
        const Ran ran = run_command(
            shell, mlt::transfer_detail::receive_ranges_command(partial, hashes), io, input);
        EXPECT_EQ(ran.status, 0) << ran.err;
        EXPECT_EQ(ran.err, said);
        EXPECT_TRUE(slurp(partial) == bytes);
        for (const Range& r : ranges)
            EXPECT_EQ(slurp(hashes + "/" + std::to_string(r.index) + ".sha"),
                      sha256(bytes.substr(r.offset, r.length)) + "\n");
    }
}

TEST(TransferScripts, APreparedUploadListsTheHashesOfItsIdOnlyUnderBothShells) {
    for (const auto& shell : mlt::sh_check::shells()) {
        SCOPED_TRACE(mlt::sh_check::shell_name(shell));
        TempDir dir, io;
        const std::string where = dir / "new dir/it's", partial = where + "/.f.mlt-ranges";
        const std::string hashes = partial + ".d", hash(64, 'a');
        // Its first line says the cores the host lets it use (nproc), at least one here.
        const auto prepare = [&](const std::string& id) {
            Ran ran = run_command(
                shell, mlt::transfer_detail::prepare_ranges_command(where, partial, hashes, id),
                io);
            const size_t nl = ran.out.find('\n');
            EXPECT_TRUE(ran.out.rfind("cores ", 0) == 0 && nl != std::string::npos &&
                        std::atoi(ran.out.substr(6, nl - 6).c_str()) > 0)
                << ran.out;
            if (nl != std::string::npos) ran.out.erase(0, nl + 1);
            return ran;
        };
        Ran ran = prepare("mlt-ranges 2 10 16");
        EXPECT_EQ(ran.status, 0) << ran.err;
        EXPECT_EQ(ran.out, "");
        EXPECT_EQ(slurp(hashes + "/id"), "mlt-ranges 2 10 16\n");
        write_file(hashes + "/3.sha", hash + "\n");
        ran = prepare("mlt-ranges 2 10 16");
        EXPECT_EQ(ran.out, "3 " + hash + "\n");
        ran = prepare("mlt-ranges 2 11 16");  // another size: what was there goes
        EXPECT_EQ(ran.status, 0) << ran.err;
        EXPECT_EQ(ran.out, "");
        EXPECT_FALSE(fs::exists(hashes + "/3.sha"));
    }
}

TEST(TransferScripts, AFinishedUploadTakesItsPlaceMtimeAndModeUnderBothShells) {
    // 2001, and 1.5 s before 1970 (a file restored from an old archive): -2 s + 0.5 s.
    for (const auto& [mtime_ns, sec, nsec] :
         {std::tuple<int64_t, time_t, long>{1000000000500000000, 1000000000, 500000000},
          std::tuple<int64_t, time_t, long>{-1500000000, -2, 500000000}})
        for (const auto& shell : mlt::sh_check::shells()) {
            SCOPED_TRACE(mlt::sh_check::shell_name(shell) + " " + std::to_string(mtime_ns));
            TempDir dir, io;
            const std::string partial = dir / ".it's.mlt-ranges", hashes = partial + ".d";
            write_file(partial, "abc");
            write_file(hashes + "/0.sha", "x\n");
            const Ran ran = run_command(shell,
                                        mlt::transfer_detail::finish_ranges_command(
                                            partial, hashes, mtime_ns, 0640, dir / "it's a b.bin"),
                                        io);
            EXPECT_EQ(ran.status, 0) << ran.err;
            struct stat st {};
            ASSERT_EQ(::stat((dir / "it's a b.bin").c_str(), &st), 0);
            EXPECT_EQ(st.st_mtim.tv_sec, sec);
            EXPECT_EQ(st.st_mtim.tv_nsec, nsec);
            EXPECT_EQ(st.st_mode & 0777, 0640u);
            EXPECT_FALSE(fs::exists(partial));
            EXPECT_FALSE(fs::exists(hashes));
        }
}

// A host whose touch is BusyBox's (no fraction of a second in `-d @S.N`, no time before 1970):
// the upload still takes its place, with the mtime's whole seconds, or (before 1970) the time
// it was written.
TEST(TransferScripts, AFinishedUploadTakesItsPlaceWithBusyboxsTouch) {
    const auto busybox = mlt::sh_check::shells().back();  // BusyBox's sh, the last of them
    const std::string where =
        mlt::sh_check::run_script(busybox, "command -v busybox").output;  // its path, "\n"
    ASSERT_FALSE(where.empty());
    for (const int64_t mtime_ns : {int64_t{1000000000500000000}, int64_t{-1500000000}}) {
        SCOPED_TRACE(std::to_string(mtime_ns));
        TempDir dir, io, bin;
        fs::create_symlink(where.substr(0, where.find('\n')), bin / "touch");
        const std::string partial = dir / ".b.mlt-ranges", hashes = partial + ".d";
        write_file(partial, "abc");
        write_file(hashes + "/0.sha", "x\n");
        const Ran ran =
            run_command(busybox,
                        "PATH=" + mlt::shell_quote(bin.path()) + ":$PATH; export PATH\n" +
                            mlt::transfer_detail::finish_ranges_command(partial, hashes, mtime_ns,
                                                                        0640, dir / "b.bin"),
                        io);
        EXPECT_EQ(ran.status, 0) << ran.err;
        struct stat st {};
        ASSERT_EQ(::stat((dir / "b.bin").c_str(), &st), 0);
        EXPECT_EQ(st.st_mode & 0777, 0640u);
        EXPECT_FALSE(fs::exists(partial));
        if (mtime_ns > 0) {
            EXPECT_EQ(st.st_mtim.tv_sec, 1000000000);
            EXPECT_EQ(st.st_mtim.tv_nsec, 0);
        }
    }
}

// A tree of odd names under `dir`, each file's content its name.
std::set<std::string> odd_tree(const TempDir& dir) {
    std::set<std::string> listed;
    for (const std::string& name : odd_names()) {
        write_file(dir / name, name);
        listed.insert("./" + name);
    }
    fs::create_directories(dir / "empty dir");
    return listed;
}

TEST(TransferScripts, ListingsAreTheSameUnderBothShells) {
    TempDir dir, io;
    const std::set<std::string> names = odd_tree(dir);
    std::vector<std::string> infos;
    for (const auto& shell : mlt::sh_check::shells()) {
        SCOPED_TRACE(mlt::sh_check::shell_name(shell));
        Ran ran = run_command(shell, mlt::transfer_detail::list_files_command(dir.path()), io);
        EXPECT_EQ(ran.status, 0) << ran.err;
        const std::vector<std::string> files = records(ran.out);
        EXPECT_EQ(std::set<std::string>(files.begin(), files.end()), names);
        ran = run_command(shell, mlt::transfer_detail::list_info_command(dir.path()), io);
        EXPECT_EQ(ran.status, 0) << ran.err;
        std::vector<std::string> info = records(ran.out);
        ASSERT_EQ(info.size(), names.size() + 1) << ran.out;
        EXPECT_EQ(info.front().substr(0, 1), "@");  // the clock, first
        info.erase(info.begin());
        for (const std::string& record : info) EXPECT_EQ(record.substr(0, 2), "r ") << record;
        std::sort(info.begin(), info.end());
        if (!infos.empty()) {
            EXPECT_EQ(info, infos);
        }
        infos = info;
        // A dir that is not there lists nothing, and is no error.
        ran = run_command(shell, mlt::transfer_detail::list_info_command(dir / "none"), io);
        EXPECT_EQ(ran.status, 0) << ran.err;
        EXPECT_EQ(ran.out, "");
    }
}

TEST(TransferScripts, TheNamedFilesAreStatedUnderBothShells) {
    TempDir dir, io;
    odd_tree(dir);
    static constexpr char kNames[] = "./it's a b.txt\0./missing\0./empty dir\0./-n\0";
    const std::string input(kNames, sizeof kNames - 1);
    for (const auto& shell : mlt::sh_check::shells()) {
        SCOPED_TRACE(mlt::sh_check::shell_name(shell));
        Ran ran =
            run_command(shell, mlt::transfer_detail::stat_files_command(dir.path()), io, input);
        EXPECT_EQ(ran.status, 0) << ran.err;
        const std::vector<std::string> got = records(ran.out);
        ASSERT_EQ(got.size(), 3u) << ran.out;
        EXPECT_EQ(got[0].substr(0, 1), "@");
        EXPECT_NE(got[1].find(" ./it's a b.txt"), std::string::npos) << got[1];
        EXPECT_NE(got[2].find(" ./-n"), std::string::npos) << got[2];
        // No dir: nothing, and the names are read all the same.
        ran = run_command(shell, mlt::transfer_detail::stat_files_command(dir / "none"), io, input);
        EXPECT_EQ(ran.status, 0) << ran.err;
        EXPECT_EQ(ran.out, "");
    }
}

TEST(TransferScripts, AFetchedFileIsItsHeaderAndBytesFromTheOffsetUnderBothShells) {
    TempDir dir, io;
    const std::string path = dir / "it's a b.txt";
    write_file(path, "0123456789");
    fs::create_directories(dir / "a dir");
    fs::create_symlink(path, dir / "a link");
    using mlt::transfer_detail::fetch_command;
    for (const auto& shell : mlt::sh_check::shells()) {
        SCOPED_TRACE(mlt::sh_check::shell_name(shell));
        Ran ran = run_command(shell, fetch_command(path, 0, false), io);
        EXPECT_EQ(ran.status, 0) << ran.err;
        EXPECT_EQ(ran.out.substr(0, 3), "10 ");
        EXPECT_EQ(ran.out.substr(ran.out.find('\n') + 1), "0123456789");
        ran = run_command(shell, fetch_command(path, 4, false), io);
        EXPECT_EQ(ran.out.substr(ran.out.find('\n') + 1), "456789");
        ran = run_command(shell, fetch_command(path, 11, false), io);  // past the end: all
        EXPECT_EQ(ran.out.substr(ran.out.find('\n') + 1), "0123456789");
        EXPECT_EQ(run_command(shell, fetch_command(dir / "none", 0, false), io).status,
                  mlt::transfer_detail::kMissingStatus);
        EXPECT_EQ(run_command(shell, fetch_command(dir / "a dir", 0, false), io).status,
                  mlt::transfer_detail::kDirectoryStatus);
        EXPECT_EQ(run_command(shell, fetch_command(dir / "a link", 0, false), io).status,
                  mlt::transfer_detail::kSymlinkStatus);
        ran = run_command(shell, fetch_command(dir / "a link", 0, true), io);
        EXPECT_EQ(ran.status, 0) << ran.err;
        EXPECT_EQ(ran.out.substr(ran.out.find('\n') + 1), "0123456789");
    }
}

TEST(TransferScripts, APackedTreeUnpacksAsItWasUnderBothShells) {
    TempDir src, io;
    odd_tree(src);
    std::string names;
    for (const std::string& name : odd_names()) names += name + '\0';
    for (const auto& shell : mlt::sh_check::shells()) {
        for (const auto compression : {mlt::Compression::none, mlt::Compression::gzip}) {
            SCOPED_TRACE(mlt::sh_check::shell_name(shell));
            TempDir dest;
            const std::string base = dest / "new dir/it's";
            Ran ran = run_command(
                shell, mlt::transfer_detail::make_dirs_command(base), io,
                std::string("sub dir\0other/deep\0", sizeof "sub dir\0other/deep\0" - 1));
            EXPECT_EQ(ran.status, 0) << ran.err;
            EXPECT_TRUE(fs::is_directory(base + "/other/deep"));
            ran = run_command(
                shell, mlt::transfer_detail::tar_pack_command(src.path(), compression), io, names);
            EXPECT_EQ(ran.status, 0) << ran.err;
            const std::string archive = ran.out;
            ran = run_command(shell, mlt::transfer_detail::tar_unpack_command(base, compression),
                              io, archive);
            EXPECT_EQ(ran.status, 0) << ran.err;
            for (const std::string& name : odd_names()) EXPECT_EQ(slurp(base + "/" + name), name);
        }
    }
}

TEST(TransferScripts, AnUnpackThatCannotCreateItsBaseDrainsItsInputAndFails) {
    TempDir dir, io;
    write_file(dir / "a file", "");
    for (const auto& shell : mlt::sh_check::shells()) {
        SCOPED_TRACE(mlt::sh_check::shell_name(shell));
        const Ran ran = run_command(
            shell, mlt::transfer_detail::tar_unpack_command(dir / "a file/sub", {}), io, "x");
        EXPECT_NE(ran.status, 0);
        EXPECT_NE(ran.err, "");
    }
}

TEST(TransferScripts, TheCompressorCheckSaysYesOnlyForOneThatIsThere) {
    TempDir io;
    for (const auto& shell : mlt::sh_check::shells()) {
        SCOPED_TRACE(mlt::sh_check::shell_name(shell));
        const Ran ran =
            run_command(shell, mlt::transfer_detail::compressor_check(mlt::Compression::gzip), io);
        EXPECT_EQ(ran.out, "yes\n");  // gzip: a dependency of the test machine
        // With an empty PATH, `command -v` finds no gzip.
        const Ran none = run_command(
            shell, "PATH=\n" + mlt::transfer_detail::compressor_check(mlt::Compression::gzip), io);
        EXPECT_EQ(none.out, "");
    }
}

TEST(TransferScripts, TheCurrentTestHoldsUntilAFileChangesUnderBothShells) {
    TempDir dir, io;
    std::vector<mlt::UploadItem> items;
    for (const std::string& name : odd_names()) {
        write_file(dir / name, name);
        items.push_back({dir / name, name});
    }
    const std::map<std::string, std::vector<mlt::UploadItem>> plan{{dir.path(), items}};
    const std::optional<std::string> test = mlt::uploads_current_test(plan);
    ASSERT_TRUE(test);
    const std::string command = "if " + *test + "; then echo current; else echo stale; fi";
    for (const auto& shell : mlt::sh_check::shells()) {
        SCOPED_TRACE(mlt::sh_check::shell_name(shell));
        EXPECT_EQ(run_command(shell, command, io).out, "current\n");
    }
    write_file(dir / "plain", "other");
    for (const auto& shell : mlt::sh_check::shells()) {
        SCOPED_TRACE(mlt::sh_check::shell_name(shell));
        EXPECT_EQ(run_command(shell, command, io).out, "stale\n");
    }
}

TEST(TransferScripts, TheRemoteTreeDigestIsTheLocalOneUnderBothShells) {
    TempDir dir, io;
    odd_tree(dir);
    const auto local = mlt::local_tree_digest(dir.path(), {}, 100);
    ASSERT_TRUE(local);
    for (const auto& shell : mlt::sh_check::shells()) {
        SCOPED_TRACE(mlt::sh_check::shell_name(shell));
        const Ran ran = run_command(
            shell, "printf '%s\\n' \"$(" + mlt::remote_tree_digest(dir.path()) + ")\"", io);
        EXPECT_EQ(ran.out, local->sha256 + "\n") << ran.err;
    }
}

}  // namespace
