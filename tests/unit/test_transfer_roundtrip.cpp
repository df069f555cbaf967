// upload/download/list through the real pipeline: libarchive here, GNU tar and find on the
// "remote" (this machine, via LocalRemote).

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <sstream>
#include <utility>
#include <vector>

#include "../common/test_bytes.h"
#include "local_remote.h"
#include "mlt/transfer/sync.h"
#include "mlt/transfer/transfer.h"
#include "mlt/util/error.h"
#include "mlt/util/paths.h"
#include "transfer_fixtures.h"

namespace {

using mlt::test::CapturedLog;
using mlt::test::LocalRemote;
using mlt::test::slurp;
using mlt::test::TempDir;
using mlt::test::write_file;

// Deterministic bytes that differ at every offset of interest.
std::string pattern_bytes(size_t size) {
    std::string s(size, '\0');
    uint32_t x = 12345;
    for (size_t i = 0; i < size; ++i) {
        x = x * 1103515245u + 12345u;
        s[i] = static_cast<char>(x >> 24);
    }
    return s;
}

// Relative path -> content, for a tree of awkward names. None has a control character: a
// download refuses those as tampering (util/remote_name.h); uploads of them are tested in
// test_transfer_incremental.cpp.
std::map<std::string, std::string> odd_tree() {
    std::map<std::string, std::string> files = {
        {"plain.txt", "plain\n"},
        {"with space.txt", "space"},
        {"quote's \"double\" $x `y`.txt", "quotes"},
        {"not-a-new\\nline.txt", "backslash n"},
        {"-dash.txt", "dash"},
        {"back\\slash", "backslash"},
        {"\xc3\xbc"
         "n"
         "\xc3\xaf"
         "c"
         "\xc3\xb6"
         "d"
         "\xc3\xa9"
         "-\xe6\x97\xa5\xe6\x9c\xac.txt",
         "unicode"},
        {"not-utf8-\xff\xfe.bin", "raw bytes"},
        {"empty", ""},
        {"dir/sub/deep.bin", "deep"},
        {"dir/with space/x y.txt", "nested space"},
        {std::string(120, 'd') + "/" + std::string(150, 'n') + ".txt", "long name"},
        {"big.bin", pattern_bytes(20 * 1024 * 1024 + 17)},
    };
    return files;
}

std::vector<mlt::UploadItem> make_items(const TempDir& src,
                                        const std::map<std::string, std::string>& files) {
    std::vector<mlt::UploadItem> items;
    for (const auto& [rel, content] : files) {
        write_file(src / rel, content);
        items.push_back({src / rel, rel});
    }
    return items;
}

struct stat stat_of(const std::string& path) {
    struct stat st {};
    EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
    return st;
}

TEST(TransferRoundTrip, OddNamesSurviveUploadAndDownload) {
    TempDir src, remote_dir, back;
    const auto files = odd_tree();
    LocalRemote remote;
    const std::string base = remote_dir / "new base/x";  // created by the upload

    mlt::TransferStats up = mlt::upload(remote, base, make_items(src, files));
    EXPECT_EQ(up.files, files.size());
    uint64_t total = 0;
    for (const auto& [rel, content] : files) total += content.size();
    EXPECT_EQ(up.bytes, total);
    for (const auto& [rel, content] : files) EXPECT_EQ(slurp(base + "/" + rel), content) << rel;

    std::vector<std::string> listed = mlt::list_remote_files(remote, base);
    std::vector<std::string> expected;
    for (const auto& [rel, content] : files) expected.push_back(rel);
    EXPECT_EQ(listed, expected);  // both sorted

    mlt::TransferStats down = mlt::download(remote, base, listed, back.path());
    EXPECT_EQ(down.files, files.size());
    EXPECT_EQ(down.bytes, total);
    for (const auto& [rel, content] : files) EXPECT_EQ(slurp(back / rel), content) << rel;
    EXPECT_TRUE(mlt::test::part_files(back.path()).empty());
}

// gzip and zstd: libarchive compresses what GNU tar unpacks (-z / --zstd) and the reverse,
// names, contents and mtimes intact; the parsing of the setting word goes with it.
TEST(TransferRoundTrip, CompressedStreamsCarryTheSameTree) {
    EXPECT_EQ(mlt::parse_compression("zstd"), mlt::Compression::zstd);
    EXPECT_EQ(mlt::parse_compression("gzip"), mlt::Compression::gzip);
    EXPECT_EQ(mlt::parse_compression("none"), mlt::Compression::none);
    EXPECT_FALSE(mlt::parse_compression("xz").has_value());
    EXPECT_FALSE(mlt::parse_compression("ZSTD").has_value());
    for (const auto compression : {mlt::Compression::gzip, mlt::Compression::zstd}) {
        TempDir src, remote_dir, back;
        const auto files = odd_tree();
        LocalRemote remote;
        auto items = make_items(src, files);
        mlt::TransferStats up = mlt::upload(remote, remote_dir.path(), items, nullptr, compression);
        EXPECT_EQ(up.files, files.size());
        for (const auto& [rel, content] : files) EXPECT_EQ(slurp(remote_dir / rel), content) << rel;
        auto listed = mlt::list_remote_files(remote, remote_dir.path());
        mlt::TransferStats down =
            mlt::download(remote, remote_dir.path(), listed, back.path(), nullptr, compression);
        EXPECT_EQ(down.files, files.size());
        for (const auto& [rel, content] : files) {
            EXPECT_EQ(slurp(back / rel), content) << rel;
            EXPECT_EQ(stat_of(back / rel).st_mtim.tv_nsec, stat_of(src / rel).st_mtim.tv_nsec)
                << rel;
        }
        // Nothing differs any more, in either direction.
        EXPECT_TRUE(mlt::changed_for_upload(remote, remote_dir.path(), items).empty());
        EXPECT_TRUE(mlt::changed_for_download(mlt::list_remote_file_info(remote, remote_dir.path()),
                                              back.path())
                        .empty());
    }
}

// The default, zstd, falls back to none on a remote without the program, and asks nothing
// when no compression is wanted.
TEST(TransferRoundTrip, CompressionFallsBackWhenTheRemoteLacksTheProgram) {
    LocalRemote remote;
    EXPECT_EQ(mlt::usable_compression(remote, mlt::Compression::zstd), mlt::Compression::zstd);
    EXPECT_EQ(mlt::usable_compression(remote, mlt::Compression::gzip), mlt::Compression::gzip);
    const int before = remote.commands_run;
    EXPECT_EQ(mlt::usable_compression(remote, mlt::Compression::none), mlt::Compression::none);
    EXPECT_EQ(remote.commands_run, before);
    // A PATH without the programs stands for a remote that lacks them.
    mlt::test::ScopedEnv path("PATH", "/nonexistent");
    EXPECT_EQ(mlt::usable_compression(remote, mlt::Compression::zstd), mlt::Compression::none);
    EXPECT_EQ(mlt::usable_compression(remote, mlt::Compression::gzip), mlt::Compression::none);
}

// Text-like bytes: CSV rows of counters, as a metrics file or dataset would hold.
std::string text_bytes(size_t size) {
    std::string s;
    for (size_t row = 0; s.size() < size; ++row)
        s += std::to_string(row) + "," + std::to_string(row * 7 % 1000) + ",0." +
             std::to_string(row * 31 % 997) + ",label_" + std::to_string(row % 10) + "\n";
    s.resize(size);
    return s;
}

// Big files are judged by samples; small, unreadable or uncompressed-anyway files are not.
TEST(TransferRoundTrip, WorthCompressingJudgesBigFilesBySamples) {
    TempDir dir;
    write_file(dir / "random.bin", pattern_bytes(2 * mlt::kSampledSize));
    write_file(dir / "text.csv", text_bytes(2 * mlt::kSampledSize));
    write_file(dir / "small random.bin", pattern_bytes(mlt::kSampledSize - 1));
    // Random at the start, text after: 3 of the 4 samples compress, and so does the file.
    write_file(dir / "mixed.bin", pattern_bytes(1 << 20) + text_bytes(7 << 20));
    for (const auto c : {mlt::Compression::zstd, mlt::Compression::gzip}) {
        EXPECT_FALSE(mlt::worth_compressing(dir / "random.bin", c));
        EXPECT_TRUE(mlt::worth_compressing(dir / "text.csv", c));
        EXPECT_TRUE(mlt::worth_compressing(dir / "small random.bin", c));
        EXPECT_TRUE(mlt::worth_compressing(dir / "mixed.bin", c));
        EXPECT_TRUE(mlt::worth_compressing(dir / "missing", c));
    }
    EXPECT_FALSE(mlt::worth_compressing(dir / "text.csv", mlt::Compression::none));
}

// Small files are judged together: random ones do not compress, text does, and a handful
// of tiny files is too little to judge (compressed, it costs nothing).
TEST(TransferRoundTrip, SmallFilesAreJudgedTogether) {
    TempDir dir;
    std::vector<std::string> random, text, tiny;
    for (int i = 0; i < 100; ++i) {
        random.push_back(dir / ("r" + std::to_string(i)));
        write_file(random.back(), mlt::test::noise_bytes(8192, static_cast<uint32_t>(i)));
        text.push_back(dir / ("t" + std::to_string(i)));
        write_file(text.back(), text_bytes(8192).substr(static_cast<size_t>(i) * 7));
    }
    for (int i = 0; i < 3; ++i) {
        tiny.push_back(dir / ("tiny" + std::to_string(i)));
        write_file(tiny.back(), pattern_bytes(100));
    }
    for (const auto c : {mlt::Compression::zstd, mlt::Compression::gzip}) {
        EXPECT_FALSE(mlt::small_files_compress(random, c));
        EXPECT_TRUE(mlt::small_files_compress(text, c));
        EXPECT_TRUE(mlt::small_files_compress(tiny, c));
        EXPECT_TRUE(mlt::small_files_compress({}, c));
    }
    EXPECT_FALSE(mlt::small_files_compress(text, mlt::Compression::none));

    // In an upload: the random small files go in one stream without compression.
    TempDir remote_dir;
    std::vector<mlt::UploadItem> items;
    for (const auto& path : random) items.push_back({path, path.substr(dir.path().size() + 1)});
    LocalRemote remote;
    EXPECT_EQ(
        mlt::sync_up(remote, {{remote_dir.path(), items}}, mlt::Compression::zstd).moved.files,
        items.size());
    int zstd_streams = 0, plain_streams = 0;
    for (const auto& cmd : remote.commands) {
        if (cmd.find("tar -xf") == std::string::npos) continue;
        zstd_streams += cmd.find("Z=--zstd\n") != std::string::npos;
        plain_streams += cmd.find("Z=''\n") != std::string::npos;
    }
    EXPECT_EQ(zstd_streams, 0);
    EXPECT_EQ(plain_streams, 1);
    EXPECT_EQ(slurp(remote_dir / "r7"), slurp(dir / "r7"));
}

// With compression on, files that do not compress go in a second, uncompressed tar stream,
// and everything lands as sent; the remote is asked about compression only when something
// is to be sent.
TEST(TransferRoundTrip, SyncUpSendsWhatDoesNotCompressUncompressed) {
    TempDir src, remote_dir;
    const std::map<std::string, std::string> files = {
        {"weights.bin", pattern_bytes(3 * mlt::kSampledSize + 5)},
        {"data/train.csv", text_bytes(2 * mlt::kSampledSize)},
        {"model.py", "print('hi')\n"},
        {"empty", ""},
    };
    auto count_streams = [](const LocalRemote& remote, const std::string& z) {
        int n = 0;
        for (const auto& cmd : remote.commands)
            if (cmd.find("tar -xf") != std::string::npos &&
                cmd.find("Z=" + z + "\n") != std::string::npos)
                ++n;
        return n;
    };
    LocalRemote remote;
    int asked = 0;
    const mlt::CompressionChoice zstd = [&] {
        ++asked;
        return mlt::Compression::zstd;
    };
    const std::map<std::string, std::vector<mlt::UploadItem>> plan = {
        {remote_dir.path(), make_items(src, files)}};
    const mlt::SyncResult sent = mlt::sync_up(remote, plan, zstd);
    EXPECT_EQ(sent.moved.files, files.size());
    EXPECT_EQ(asked, 1);
    EXPECT_EQ(count_streams(remote, "--zstd"), 1);
    EXPECT_EQ(count_streams(remote, "''"), 1);
    for (const auto& [rel, content] : files) EXPECT_TRUE(slurp(remote_dir / rel) == content) << rel;

    // Nothing changed: no stream, no question.
    remote.commands.clear();
    const mlt::SyncResult again = mlt::sync_up(remote, plan, zstd);
    EXPECT_EQ(again.moved.files, 0u);
    EXPECT_EQ(again.unchanged, files.size());
    EXPECT_EQ(asked, 1);
    EXPECT_EQ(count_streams(remote, "--zstd") + count_streams(remote, "''"), 0);

    // Only the incompressible file changed: one uncompressed stream.
    write_file(src / "weights.bin", pattern_bytes(3 * mlt::kSampledSize + 6));
    EXPECT_EQ(mlt::sync_up(remote, plan, zstd).moved.files, 1u);
    EXPECT_EQ(count_streams(remote, "--zstd"), 0);
    EXPECT_EQ(count_streams(remote, "''"), 1);
    EXPECT_TRUE(slurp(remote_dir / "weights.bin") == pattern_bytes(3 * mlt::kSampledSize + 6));

    // compression: none sends everything in one stream, as before.
    TempDir plain_dir;
    remote.commands.clear();
    EXPECT_EQ(
        mlt::sync_up(remote, {{plain_dir.path(), make_items(src, files)}}, mlt::Compression::none)
            .moved.files,
        files.size());
    EXPECT_EQ(count_streams(remote, "''"), 1);
    EXPECT_EQ(count_streams(remote, "--zstd"), 0);
}

// The names in each planned stream, and its compression.
std::vector<std::pair<std::vector<std::string>, mlt::Compression>> shape(
    const std::vector<mlt::UploadStream>& streams) {
    std::vector<std::pair<std::vector<std::string>, mlt::Compression>> out;
    for (const auto& s : streams) {
        std::vector<std::string> names;
        for (const auto& item : s.items) names.push_back(item.remote_path);
        out.push_back({names, s.compression});
    }
    return out;
}

mlt::PlannedFile planned(const std::string& name, uint64_t mib, bool compress) {
    return {{"/local/" + name, name}, mib << 20, compress};
}

TEST(TransferPlanStreams, OneStreamAllowedTakesBothKindsCompressedAsMostOfItsBytes) {
    using C = mlt::Compression;
    // Most bytes compress: one compressed stream, the files in input order.
    EXPECT_EQ(
        shape(mlt::plan_upload_streams(
            {planned("r", 2, false), planned("t", 30, true), planned("s", 1, true)}, C::zstd, 1)),
        (decltype(shape({})){{{"r", "t", "s"}, C::zstd}}));
    // Most bytes do not: one stream without compression.
    EXPECT_EQ(shape(mlt::plan_upload_streams({planned("t", 2, true), planned("r", 30, false)},
                                             C::zstd, 1)),
              (decltype(shape({})){{{"t", "r"}, C::none}}));
}

TEST(TransferPlanStreams, OneStreamPerEightMiBUpToFourBiggestFirstOrderKept) {
    using C = mlt::Compression;
    // Under 16 MiB: one stream, in the order given.
    EXPECT_EQ(
        shape(mlt::plan_upload_streams({planned("a", 3, true), planned("b", 4, true)}, C::zstd)),
        (decltype(shape({})){{{"a", "b"}, C::zstd}}));
    // 24 MiB: three streams; the biggest files spread first, each stream in input order.
    EXPECT_EQ(shape(mlt::plan_upload_streams({planned("a", 2, true), planned("b", 10, true),
                                              planned("c", 8, true), planned("d", 4, true)},
                                             C::zstd)),
              (decltype(shape({})){{{"b"}, C::zstd}, {{"c"}, C::zstd}, {{"a", "d"}, C::zstd}}));
    // Never more than four, and never more streams than files.
    EXPECT_EQ(mlt::plan_upload_streams(
                  {planned("a", 100, false), planned("b", 1, false), planned("c", 1, false),
                   planned("d", 1, false), planned("e", 1, false)},
                  C::none)
                  .size(),
              4u);
    EXPECT_EQ(mlt::plan_upload_streams({planned("a", 100, true)}, C::zstd).size(), 1u);
    // Files that do not compress go in streams without compression, in proportion to their
    // bytes: 48 of 64 MiB -> 3 of 4 streams.
    EXPECT_EQ(shape(mlt::plan_upload_streams({planned("t", 16, true), planned("r1", 16, false),
                                              planned("r2", 16, false), planned("r3", 16, false)},
                                             C::zstd)),
              (decltype(shape({})){
                  {{"t"}, C::zstd}, {{"r1"}, C::none}, {{"r2"}, C::none}, {{"r3"}, C::none}}));
    // A small upload of both kinds still needs a stream of each.
    EXPECT_EQ(
        shape(mlt::plan_upload_streams({planned("t", 1, true), planned("r", 1, false)}, C::zstd)),
        (decltype(shape({})){{{"t"}, C::zstd}, {{"r"}, C::none}}));
    // With compression none, nothing is compressed whatever the sampling said.
    EXPECT_EQ(shape(mlt::plan_upload_streams({planned("t", 1, true)}, C::none)),
              (decltype(shape({})){{{"t"}, C::none}}));
    // Nothing to send: one empty stream (it still creates the remote base).
    EXPECT_EQ(shape(mlt::plan_upload_streams({}, C::zstd)), (decltype(shape({})){{{}, C::zstd}}));
}

// More than 10,000 files to send: sync_up says so before it starts (the thresholds and the
// wording are tested with large_upload_summary; this is the wiring). The link drops at the
// first command after the remote listing, so that the files never have to move.
TEST(TransferRoundTrip, SyncUpAnnouncesALargeUploadBeforeSendingIt) {
    class ListingOnly : public LocalRemote {
      public:
        int stream(const std::string& command, const mlt::InputSource& input,
                   const mlt::OutputSink& out, const mlt::OutputSink& err) override {
            if (commands_run > 0)
                throw mlt::Error(mlt::ErrorKind::disconnected, "Socket error: disconnected");
            return LocalRemote::stream(command, input, out, err);
        }
    };
    TempDir src, remote_dir;
    write_file(src / "empty", "");  // one local file under 10,001 remote names: fast to plan
    std::vector<mlt::UploadItem> items;
    for (int i = 0; i < 10001; ++i)
        items.push_back({src / "empty", "d" + std::to_string(i % 10) + "/f" + std::to_string(i)});
    ListingOnly remote;
    CapturedLog log;
    EXPECT_THROW(mlt::sync_up(remote, {{remote_dir.path(), items}}), mlt::Error);
    EXPECT_EQ(remote.commands_run, 1) << "the files were sent before the announcement";
    EXPECT_NE(log.text().find("about to upload 10,001 files, 0 B to local"), std::string::npos)
        << log.text();
}

TEST(TransferRoundTrip, MtimesAndModesAreKept) {
    TempDir src, remote_dir, back;
    write_file(src / "run.sh", "#!/bin/sh\necho hi\n");
    write_file(src / "secret.txt", "s");
    ASSERT_EQ(::chmod((src / "run.sh").c_str(), 0755), 0);
    ASSERT_EQ(::chmod((src / "secret.txt").c_str(), 0640), 0);
    const timespec times[2] = {{0, UTIME_OMIT}, {1500000000, 123456789}};
    ASSERT_EQ(::utimensat(AT_FDCWD, (src / "run.sh").c_str(), times, 0), 0);
    ASSERT_EQ(::utimensat(AT_FDCWD, (src / "secret.txt").c_str(), times, 0), 0);

    LocalRemote remote;
    mlt::upload(remote, remote_dir.path(),
                {{src / "run.sh", "bin/run.sh"}, {src / "secret.txt", "secret.txt"}});
    for (const std::string& dir : {remote_dir.path()}) {
        struct stat run = stat_of(dir + "/bin/run.sh");
        EXPECT_EQ(run.st_mode & 07777, 0755u);
        EXPECT_EQ(run.st_mtim.tv_sec, 1500000000);
        EXPECT_EQ(run.st_mtim.tv_nsec, 123456789);
        EXPECT_EQ(stat_of(dir + "/secret.txt").st_mode & 07777, 0640u);
    }

    mlt::download(remote, remote_dir.path(), {"bin", "secret.txt"}, back.path());
    struct stat run = stat_of(back / "bin/run.sh");
    EXPECT_EQ(run.st_mode & 07777, 0755u);
    EXPECT_EQ(run.st_mtim.tv_sec, 1500000000);
    EXPECT_EQ(run.st_mtim.tv_nsec, 123456789);
    struct stat secret = stat_of(back / "secret.txt");
    EXPECT_EQ(secret.st_mode & 07777, 0640u);
    EXPECT_EQ(secret.st_mtim.tv_nsec, 123456789);

    auto info = mlt::list_remote_file_info(remote, remote_dir.path());
    ASSERT_EQ(info.size(), 2u);
    EXPECT_EQ(info[0].path, "bin/run.sh");
    EXPECT_EQ(info[0].size, 18u);
    EXPECT_EQ(info[0].mtime_ns, 1500000000123456789);
    EXPECT_EQ(info[1].path, "secret.txt");
    EXPECT_EQ(info[1].size, 1u);
}

TEST(TransferRoundTrip, HomeRelativeBase) {
    TempDir home, src, back;
    mlt::test::ScopedEnv env("HOME", home.path());
    write_file(src / "a b.txt", "home");
    LocalRemote remote;
    mlt::upload(remote, "~/proj dir/x", {{src / "a b.txt", "in/a b.txt"}});
    EXPECT_EQ(slurp(home / "proj dir/x/in/a b.txt"), "home");
    EXPECT_EQ(mlt::list_remote_files(remote, "~/proj dir/x"),
              std::vector<std::string>{"in/a b.txt"});
    mlt::download(remote, "~/proj dir/x", {"in"}, back.path());
    EXPECT_EQ(slurp(back / "in/a b.txt"), "home");
    EXPECT_EQ(mlt::download_file(remote, "~/proj dir/x/in/a b.txt", back / "single"), 4u);
    EXPECT_EQ(slurp(back / "single"), "home");
}

TEST(TransferRoundTrip, ListRemoteFiles) {
    TempDir dir;
    write_file(dir / "a.txt", "a");
    write_file(dir / "sub/b c.txt", "bc");
    write_file(dir / ".hidden/d", "d");
    std::filesystem::create_directories(dir / "empty_dir");
    std::filesystem::create_symlink(dir / "a.txt", dir / "link");
    LocalRemote remote;
    EXPECT_EQ(mlt::list_remote_files(remote, dir.path()),
              (std::vector<std::string>{".hidden/d", "a.txt", "sub/b c.txt"}));
    EXPECT_TRUE(mlt::list_remote_files(remote, dir / "missing").empty());
    EXPECT_TRUE(mlt::list_remote_file_info(remote, dir / "missing").empty());
    EXPECT_EQ(remote.commands_run, 3);
    auto info = mlt::list_remote_file_info(remote, dir.path());
    ASSERT_EQ(info.size(), 3u);
    EXPECT_EQ(info[2].path, "sub/b c.txt");
    EXPECT_EQ(info[2].size, 2u);
}

TEST(TransferRoundTrip, DownloadDirectoriesAndReplaceFiles) {
    TempDir remote_dir, back;
    write_file(remote_dir / "results/r1/m.bin", "model");
    write_file(remote_dir / "results/r2/log.txt", "log");
    write_file(remote_dir / "other.txt", "not asked for");
    write_file(back / "results/r1/m.bin", "stale old content");
    LocalRemote remote;
    mlt::TransferStats s = mlt::download(remote, remote_dir.path(), {"results"}, back.path());
    EXPECT_EQ(s.files, 2u);
    EXPECT_EQ(slurp(back / "results/r1/m.bin"), "model");
    EXPECT_EQ(slurp(back / "results/r2/log.txt"), "log");
    EXPECT_FALSE(std::filesystem::exists(back / "other.txt"));
    EXPECT_EQ(mlt::download(remote, remote_dir.path(), {}, back.path()).files, 0u);
}

TEST(TransferRoundTrip, DownloadOfAMissingPathQuotesTarsError) {
    TempDir remote_dir, back;
    write_file(remote_dir / "here.txt", "here");
    LocalRemote remote;
    try {
        mlt::download(remote, remote_dir.path(), {"here.txt", "not-there.txt"}, back.path());
        FAIL() << "no error";
    } catch (const mlt::Error& e) {
        EXPECT_EQ(e.kind(), mlt::ErrorKind::remote);
        EXPECT_NE(std::string(e.what()).find("not-there.txt"), std::string::npos) << e.what();
    }
    // What did arrive is complete and kept.
    EXPECT_EQ(slurp(back / "here.txt"), "here");
    EXPECT_THROW(mlt::download(remote, remote_dir / "no-base", {"x"}, back.path()), mlt::Error);
}

TEST(TransferRoundTrip, DownloadFile) {
    TempDir remote_dir, back;
    write_file(remote_dir / "it's here.bin", pattern_bytes(300000));
    LocalRemote remote;
    EXPECT_EQ(mlt::download_file(remote, remote_dir / "it's here.bin", back / "new/dir/out.bin"),
              300000u);
    EXPECT_EQ(slurp(back / "new/dir/out.bin"), pattern_bytes(300000));
    try {
        mlt::download_file(remote, remote_dir / "gone.bin", back / "gone.bin");
        FAIL() << "no error";
    } catch (const mlt::Error& e) {
        EXPECT_EQ(e.kind(), mlt::ErrorKind::remote);
        EXPECT_NE(std::string(e.what()).find("gone.bin"), std::string::npos) << e.what();
    }
    EXPECT_FALSE(std::filesystem::exists(back / "gone.bin"));
    EXPECT_TRUE(mlt::test::part_files(back.path()).empty());
}

TEST(TransferRoundTrip, UploadChecksLocalFilesBeforeSending) {
    TempDir src, remote_dir;
    write_file(src / "ok.txt", "ok");
    LocalRemote remote;
    try {
        mlt::upload(remote, remote_dir.path(),
                    {{src / "ok.txt", "ok.txt"}, {src / "missing.txt", "missing.txt"}});
        FAIL() << "no error";
    } catch (const mlt::Error& e) {
        EXPECT_EQ(e.kind(), mlt::ErrorKind::io);
        EXPECT_EQ(e.code(), mlt::exit_code::kUsage);
        EXPECT_NE(std::string(e.what()).find("missing.txt"), std::string::npos);
    }
    EXPECT_THROW(mlt::upload(remote, remote_dir.path(), {{src.path(), "dir"}}), mlt::Error);
    EXPECT_THROW(mlt::upload(remote, remote_dir.path(), {{src / "ok.txt", "../ok.txt"}}),
                 mlt::Error);
    EXPECT_THROW(mlt::upload(remote, remote_dir.path(), {{src / "ok.txt", "/abs.txt"}}),
                 mlt::Error);
    EXPECT_EQ(remote.commands_run, 0);
}

TEST(TransferRoundTrip, UploadFailureQuotesRemoteStderr) {
    TempDir src, remote_dir;
    write_file(src / "a.txt", "a");
    write_file(remote_dir / "file", "a file where a directory should be");
    LocalRemote remote;
    try {
        mlt::upload(remote, remote_dir / "file/sub", {{src / "a.txt", "a.txt"}});
        FAIL() << "no error";
    } catch (const mlt::Error& e) {
        EXPECT_EQ(e.kind(), mlt::ErrorKind::remote);
        EXPECT_NE(std::string(e.what()).find("mkdir"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find(remote.name()), std::string::npos) << e.what();
    }
}

// Stdin is sent completely before output is read: a remote tar that printed an error per
// file while unpacking would fill its stderr and stop reading (LocalRemote would hang).
TEST(TransferRoundTrip, ManyRemoteErrorsDuringUploadDoNotBlock) {
    TempDir src, remote_dir;
    std::vector<mlt::UploadItem> items;
    // Long names: about 100 KiB of complaints from few files (removing many is slow).
    for (int i = 0; i < 400; ++i) {
        const std::string name = "file-" + std::to_string(i) + "-" + std::string(200, 'n');
        write_file(src / name, "x");
        // A non-empty directory where the file should go: tar complains about each one.
        std::filesystem::create_directories(remote_dir / (name + "/occupied"));
        items.push_back({src / name, name});
    }
    LocalRemote remote;
    try {
        mlt::upload(remote, remote_dir.path(), items);
        FAIL() << "no error";
    } catch (const mlt::Error& e) {
        EXPECT_EQ(e.kind(), mlt::ErrorKind::remote);
        // The end of what tar said, bounded: the last complaints, not 100 KiB of them.
        EXPECT_NE(std::string(e.what()).find("file-399-nnn"), std::string::npos) << e.what();
        EXPECT_EQ(std::string(e.what()).find("file-0-nnn"), std::string::npos) << e.what();
        EXPECT_LT(std::string(e.what()).size(), 1500u);
    }
}

// The same for download: the name list (here > 100 KiB) must be read completely before
// tar starts writing the archive.
TEST(TransferRoundTrip, LongNameListsDoNotBlockTheDownload) {
    TempDir remote_dir, back;
    std::vector<std::string> names;
    for (int i = 0; i < 500; ++i) {
        names.push_back("dir/" + std::to_string(i) + "-" + std::string(200, 'n'));
        write_file(remote_dir / names.back(), std::to_string(i));
    }
    LocalRemote remote;
    mlt::TransferStats s = mlt::download(remote, remote_dir.path(), names, back.path());
    EXPECT_EQ(s.files, names.size());
    EXPECT_EQ(slurp(back / names[123]), "123");
}

// A LocalRemote that runs `before` just before streaming, i.e. after upload() checked the
// local files.
class MeddlingRemote : public LocalRemote {
  public:
    explicit MeddlingRemote(std::function<void()> before) : before_(std::move(before)) {}
    int stream(const std::string& command, const mlt::InputSource& input,
               const mlt::OutputSink& on_stdout, const mlt::OutputSink& on_stderr) override {
        before_();
        return LocalRemote::stream(command, input, on_stdout, on_stderr);
    }

  private:
    std::function<void()> before_;
};

TEST(TransferRoundTrip, LocalFileVanishingMidUploadIsAnIoError) {
    TempDir src, remote_dir;
    write_file(src / "first.txt", "first");
    write_file(src / "second.txt", "second");
    MeddlingRemote remote([&] { std::filesystem::remove(src / "second.txt"); });
    try {
        mlt::upload(remote, remote_dir.path(),
                    {{src / "first.txt", "first.txt"}, {src / "second.txt", "second.txt"}});
        FAIL() << "no error";
    } catch (const mlt::Error& e) {
        EXPECT_EQ(e.kind(), mlt::ErrorKind::io);
        EXPECT_NE(std::string(e.what()).find("second.txt"), std::string::npos) << e.what();
    }
    EXPECT_FALSE(std::filesystem::exists(remote_dir / "second.txt"));
}

TEST(TransferRoundTrip, LocalFileChangedAfterTheCheckIsSentAsItIsWhenItsTurnComes) {
    TempDir src, remote_dir;
    write_file(src / "log.txt", std::string(100000, 'l'));
    write_file(src / "after.txt", "after");
    MeddlingRemote remote([&] { std::filesystem::resize_file(src / "log.txt", 10); });
    mlt::TransferStats s =
        mlt::upload(remote, remote_dir.path(),
                    {{src / "log.txt", "log.txt"}, {src / "after.txt", "after.txt"}});
    EXPECT_EQ(s.bytes, 15u);
    EXPECT_EQ(slurp(remote_dir / "log.txt"), std::string(10, 'l'));
    EXPECT_EQ(slurp(remote_dir / "after.txt"), "after");
}

TEST(TransferRoundTrip, EmptyUploadStillCreatesTheBase) {
    TempDir remote_dir;
    LocalRemote remote;
    mlt::TransferStats s = mlt::upload(remote, remote_dir / "made", {});
    EXPECT_EQ(s.files, 0u);
    EXPECT_TRUE(std::filesystem::is_directory(remote_dir / "made"));
}

}  // namespace

namespace {

// Incremental transfers against the real tar pipeline: unchanged files are not moved again.
TEST(TransferIncremental, UnchangedFilesAreSkippedBothWays) {
    char tmpl[] = "/tmp/mlt-incr-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    const std::string root = tmpl;
    const std::string src = root + "/src", dst = root + "/remote", back = root + "/back";
    std::filesystem::create_directories(src + "/sub");
    mlt::write_file_atomic(src + "/a.txt", "alpha", 0644);
    mlt::write_file_atomic(src + "/sub/b c.txt", "beta", 0644);
    mlt::write_file_atomic(src + "/empty", "", 0644);
    mlt::test::LocalRemote remote;
    auto items = mlt::expand_local_glob(src, "**");
    ASSERT_EQ(items.size(), 3u);

    EXPECT_EQ(mlt::changed_for_upload(remote, dst, items).size(), 3u);  // nothing there yet
    mlt::upload(remote, dst, items);
    EXPECT_TRUE(mlt::changed_for_upload(remote, dst, items).empty());

    // A changed size, and a changed mtime with the same size, are both sent again.
    mlt::write_file_atomic(src + "/a.txt", "alphabet", 0644);
    mlt::write_file_atomic(src + "/sub/b c.txt", "BETA", 0644);
    // File clocks are coarse: make the same-size change's mtime differ for sure.
    const auto when = std::filesystem::last_write_time(src + "/sub/b c.txt");
    std::filesystem::last_write_time(src + "/sub/b c.txt", when + std::chrono::seconds(2));
    auto changed = mlt::changed_for_upload(remote, dst, items);
    ASSERT_EQ(changed.size(), 2u);
    EXPECT_EQ(changed[0].remote_path, "a.txt");
    EXPECT_EQ(changed[1].remote_path, "sub/b c.txt");
    mlt::upload(remote, dst, changed);
    EXPECT_TRUE(mlt::changed_for_upload(remote, dst, items).empty());

    auto listing = mlt::list_remote_file_info(remote, dst);
    EXPECT_EQ(mlt::changed_for_download(listing, back).size(), 3u);
    mlt::download(remote, dst, mlt::changed_for_download(listing, back), back);
    EXPECT_TRUE(mlt::changed_for_download(listing, back).empty());
    EXPECT_EQ(mlt::read_file(back + "/sub/b c.txt"), "BETA");
    std::filesystem::remove_all(root);
}

}  // namespace
