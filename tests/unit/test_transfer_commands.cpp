// Every command the transfer layer assembles, rendered for fixed inputs (paths with spaces
// and quotes, one under ~): each parses under dash and BusyBox's sh and passes shellcheck as
// POSIX sh.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "mlt/transfer/ranges.h"
#include "mlt/transfer/transfer.h"
#include "sh_check.h"
#include "transfer/commands.h"
#include "transfer/range_commands.h"
#include "transfer_fixtures.h"

namespace {

namespace td = mlt::transfer_detail;

// (what, the command) for every command of the transfer layer.
std::vector<std::pair<std::string, std::string>> rendered(const std::string& local_file) {
    const std::string dir = "/srv/it's a dir/run 1", home = "~/it's/a b", rel = "data/it's a b";
    const std::string partial = dir + "/.model.mlt-ranges", hashes = partial + ".d";
    const std::vector<td::Range> ranges{{0, 0, 65536}, {1, 65536, 100}};
    const std::map<std::string, std::vector<mlt::UploadItem>> plan{
        {dir, {{local_file, "it's a b.txt"}, {local_file, "sub/\"q\".bin"}}}, {home, {}}};
    return {
        {"list_files", td::list_files_command(dir)},
        {"list_info", td::list_info_command(home)},
        {"stat_files", td::stat_files_command(rel)},
        {"fetch", td::fetch_command(rel + "/f", 0, false)},
        {"fetch, following links", td::fetch_command(home + "/f", 12, true)},
        {"tar_unpack", td::tar_unpack_command(dir, mlt::Compression::zstd)},
        {"tar_unpack, plain", td::tar_unpack_command(home, mlt::Compression::none)},
        {"make_dirs", td::make_dirs_command(dir)},
        {"tar_pack", td::tar_pack_command(rel, mlt::Compression::gzip)},
        {"compressor check", td::compressor_check(mlt::Compression::zstd)},
        {"hash setup", mlt::remote_hash_setup()},
        {"send ranges", td::send_ranges_command("token", dir + "/model.ckpt", ranges)},
        {"receive ranges", td::receive_ranges_command(partial, hashes)},
        {"prepare ranges", td::prepare_ranges_command(dir, partial, hashes, "mlt-ranges 2 1 2")},
        {"finish ranges", td::finish_ranges_command(partial, hashes, 1500000000, 0644, rel)},
        {"range hashes", td::range_hashes_command(home + "/model.ckpt")},
        // The two that go inside the job's commands, where the job layer puts them.
        {"uploads current", "if " + mlt::uploads_current_test(plan).value() + "; then :; fi"},
        {"tree digest", "[ \"$(" + mlt::remote_tree_digest(dir) + ")\" = x ]"},
    };
}

TEST(TransferCommands, EveryRenderedCommandParsesUnderDashAndBusybox) {
    mlt::test::TempDir dir;
    mlt::test::write_file(dir / "f", "x");
    for (const auto& [what, command] : rendered(dir / "f"))
        for (const auto& shell : mlt::sh_check::shells())
            EXPECT_EQ(mlt::sh_check::syntax_errors(shell, command), "")
                << what << " under " << mlt::sh_check::shell_name(shell) << ":\n"
                << command;
}

TEST(TransferCommands, EveryRenderedCommandPassesShellcheck) {
    mlt::test::TempDir dir;
    mlt::test::write_file(dir / "f", "x");
    // SC2016 (an expression in single quotes does not expand): the text of find_named.sh and
    // range_hash.sh goes as a quoted value, the program of an inner `sh -c`, whose expansions
    // are that shell's.
    for (const auto& [what, command] : rendered(dir / "f"))
        EXPECT_EQ(mlt::sh_check::shellcheck(command, "SC2016"), "") << what << ":\n" << command;
}

TEST(TransferCommands, TheCheckSeesAnUnquotedValue) {
    // The check can fail: a value spliced into the text unquoted is reported.
    EXPECT_NE(mlt::sh_check::shellcheck("f=/srv/a b/c\ncat \"$f\"\n", "SC2016"), "");
}

}  // namespace
