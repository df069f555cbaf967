// glob_match (MLTK's upload/download globs) and expand_local_glob.

#include <gtest/gtest.h>
#include <stdio.h>

#include <set>

#include "mlt/transfer/transfer.h"
#include "mlt/util/error.h"
#include "mlt/util/shell.h"
#include "transfer_fixtures.h"

namespace {

namespace fs = std::filesystem;
using mlt::test::TempDir;
using mlt::test::write_file;

struct GlobCase {
    const char* pattern;
    const char* path;
    bool match;
};

TEST(GlobMatch, Table) {
    const GlobCase cases[] = {
        {"data/*.csv", "data/a.csv", true},
        {"data/*.csv", "data/x/y.csv", false},
        {"data/*.csv", "data/.hidden.csv", true},
        {"data/*.csv", "other/a.csv", false},
        {"data/*.csv", "data/a.csvx", false},
        {"data/**", "data/a.csv", true},
        {"data/**", "data/x/y/z.bin", true},
        {"data/**", "database/a", false},
        {"data/**", "other/data/a", false},
        {"**/*.py", "a.py", true},
        {"**/*.py", "x/y/a.py", true},
        {"**/*.py", "x/y/a.pyc", false},
        {"**", "anything/at/all", true},
        {"**", "top", true},
        {"a/**/b", "a/b", true},
        {"a/**/b", "a/x/b", true},
        {"a/**/b", "a/x/y/b", true},
        {"a/**/b", "a/x/y/c", false},
        {"a/**/b/**/c", "a/1/b/2/3/c", true},
        {"a/**/b/**/c", "a/b/c", true},
        {"a/**/b/**/c", "a/c/b", false},
        {"**/x/**", "1/2/x/3/4", true},
        {"**/x/**", "1/2/y/3/4", false},
        {"?.txt", "a.txt", true},
        {"?.txt", "ab.txt", false},
        {"?/b", "a/b", true},
        {"a?b", "a/b", false},
        {"a*b", "a/b", false},
        {"[abc].txt", "b.txt", true},
        {"[abc].txt", "d.txt", false},
        {"[!abc].txt", "d.txt", true},
        {"[a-c]x", "bx", true},
        {"file.txt", "file.txt", true},
        {"file.txt", "dir/file.txt", false},
        {"./data/*.csv", "data/a.csv", true},
        {"data/*.csv", "./data/a.csv", true},
        {"dir/", "dir", true},
        {"a\\b", "a\\b", true},
        {"sp ace/*", "sp ace/x y", true},
        {"*", "", false},
        {"**", "", true},
    };
    for (const auto& c : cases)
        EXPECT_EQ(mlt::glob_match(c.pattern, c.path), c.match)
            << "pattern '" << c.pattern << "' path '" << c.path << "'";
}

// The files under `dir` that GNU find's `-regex` (as the job runs it) selects.
std::set<std::string> found_by_regex(const std::string& dir, const std::string& regex) {
    const std::string command = "cd " + mlt::shell_quote(dir) +
                                " && LC_ALL=C find . -regextype posix-extended -type f -regex " +
                                mlt::shell_quote(regex) + " -print0";
    FILE* pipe = ::popen(command.c_str(), "r");
    std::string out;
    char buffer[4096];
    for (size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
    EXPECT_EQ(::pclose(pipe), 0) << command;
    std::set<std::string> paths;
    for (size_t start = 0, end; (end = out.find('\0', start)) != std::string::npos; start = end + 1)
        paths.insert(out.substr(start + 2, end - start - 2));  // without "./"
    return paths;
}

// The job hashes a download_files glob's files with glob_find_regex and GNU find: it must
// select exactly what glob_match selects from the listing at the collection.
TEST(GlobFindRegex, GnuFindSelectsWhatGlobMatchDoes) {
    const TempDir dir;
    const std::vector<std::string> files = {"data/a.csv",   "data/x/y.csv", "data/.hidden.csv",
                                            "other/a.csv",  "data/a.csvx",  "database/a",
                                            "other/data/a", "x/y/a.py",     "x/y/a.pyc",
                                            "top.py",       "top",          "a/x/b",
                                            "a/x/y/b",      "a/x/y/c",      "a/1/b/2/3/c",
                                            "q/b/c",        "1/2/x/3/4",    "1/2/y/3/4",
                                            "a.txt",        "ab.txt",       "b.txt",
                                            "d.txt",        "]x",           "bx",
                                            "!x",           "file.txt",     "dir/file.txt",
                                            "a\\b",         "sp ace/x y",   "we(ird).t+t",
                                            "br[a]ck",      "c^$|{1}",      "n.1/2"};
    for (const auto& f : files) write_file(fs::path(dir.path()) / f, f);
    const char* patterns[] = {
        "data/*.csv", "data/**",     "**/*.py",      "**",        "a/**/b",         "a/**/b/**/c",
        "**/x/**",    "?.txt",       "?/b",          "a?b",       "[abc].txt",      "[!abc].txt",
        "[a-c]x",     "file.txt",    "./data/*.csv", "dir/",      "a\\b",           "sp ace/*",
        "*",          "we(ird).t+t", "br[[]a]ck",    "br[a]ck",   "[]]x",           "[!]]x",
        "[!!]x",      "*.t?t",       "**/c",         "a/**",      "[[:digit:]]/**", "c^$|{1}",
        "[^a]x",      "n.?/*",       "**/**/c",      "unclosed[", "*/[a-z]*"};
    for (const char* pattern : patterns) {
        std::set<std::string> expected;
        for (const auto& f : files)
            if (mlt::glob_match(pattern, f)) expected.insert(f);
        EXPECT_EQ(found_by_regex(dir.path(), mlt::glob_find_regex(pattern)), expected)
            << "pattern '" << pattern << "', regex '" << mlt::glob_find_regex(pattern) << "'";
    }
}

class GlobExpand : public ::testing::Test {
  protected:
    void SetUp() override {
        for (const char* f : {"a.py", "x/y/a.py", "data/1.csv", "data/x/2.csv", "data/x/y.txt",
                              ".hidden/h.py", "sp ace/f g.txt"})
            write_file(base / f, f);
        write_file(outside / "secret.py", "outside");
        write_file(outside / "sub/deep.py", "outside");
        fs::create_directory_symlink(outside.path(), base / "link_dir");
        fs::create_directory_symlink(outside.path(), base / "data/x/link_dir");
        fs::create_symlink(base / "data/1.csv", base / "link_file.csv");
        fs::create_symlink(base / "gone", base / "dangling.py");
    }

    std::vector<std::string> remote_paths(const std::string& pattern) {
        std::vector<std::string> out;
        for (const auto& item : mlt::expand_local_glob(base.path(), pattern)) {
            EXPECT_EQ(item.local_path, base / item.remote_path);
            out.push_back(item.remote_path);
        }
        return out;
    }

    TempDir base, outside;
    using V = std::vector<std::string>;
};

TEST_F(GlobExpand, WildcardsMatchFilesOnly) {
    EXPECT_EQ(remote_paths("data/*.csv"), V{"data/1.csv"});
    EXPECT_EQ(remote_paths("data/**"), (V{"data/1.csv", "data/x/2.csv", "data/x/y.txt"}));
    EXPECT_EQ(remote_paths("**/*.py"), (V{".hidden/h.py", "a.py", "x/y/a.py"}));
    EXPECT_EQ(remote_paths("*.csv"), V{"link_file.csv"});
    EXPECT_EQ(remote_paths("sp ace/*"), V{"sp ace/f g.txt"});
    EXPECT_EQ(remote_paths("data/*"), V{"data/1.csv"});
}

TEST_F(GlobExpand, LiteralDirectoryIsWholeTree) {
    EXPECT_EQ(remote_paths("data"), (V{"data/1.csv", "data/x/2.csv", "data/x/y.txt"}));
    EXPECT_EQ(remote_paths("./data/"), (V{"data/1.csv", "data/x/2.csv", "data/x/y.txt"}));
    EXPECT_EQ(remote_paths("data/x/y.txt"), V{"data/x/y.txt"});
    EXPECT_EQ(remote_paths("link_file.csv"), V{"link_file.csv"});
}

TEST_F(GlobExpand, NothingMatchingIsEmpty) {
    EXPECT_TRUE(remote_paths("missing.txt").empty());
    EXPECT_TRUE(remote_paths("nothing/*.csv").empty());
    EXPECT_TRUE(remote_paths("data/1.csv/x").empty());
    EXPECT_TRUE(remote_paths("*.nope").empty());
    EXPECT_TRUE(remote_paths("dangling.py").empty());
}

TEST_F(GlobExpand, NeverFollowsDirectorySymlinks) {
    EXPECT_TRUE(remote_paths("link_dir").empty());
    EXPECT_TRUE(remote_paths("link_dir/*.py").empty());
    EXPECT_TRUE(remote_paths("link_dir/sub").empty());
    for (const auto& p : remote_paths("**")) {
        EXPECT_EQ(p.find("link_dir"), std::string::npos) << p;
        EXPECT_EQ(p.find("dangling"), std::string::npos) << p;
    }
    const auto all = remote_paths(".");
    EXPECT_EQ(all.size(), 8u);  // the 7 files and link_file.csv
}

// The workspace's rules for what a wildcard or a directory walk picks up: secrets stay, and
// so do links out of the base dir; both are named. A name given literally is sent.
TEST_F(GlobExpand, SecretsAndLinksOutAreSkippedAndNamedUnlessNamedLiterally) {
    for (const char* f : {"keys/id_rsa", "keys/key.pem", "keys/.env", "keys/ok.txt",
                          "keys/.ssh/config", "keys/sub/id_ed25519"})
        write_file(base / f, f);
    fs::create_symlink(outside / "secret.py", base / "keys/out_link");
    fs::create_symlink("ok.txt", base / "keys/in_link");
    const auto expand = [&](const std::string& pattern, V* skipped) {
        V out;
        for (const auto& item : mlt::expand_local_glob(base.path(), pattern, skipped))
            out.push_back(item.remote_path);
        return out;
    };
    const V refused{"keys/.env",    "keys/.ssh/config", "keys/id_rsa",
                    "keys/key.pem", "keys/out_link",    "keys/sub/id_ed25519"};
    for (const char* pattern : {"keys/**", "keys", "keys/"}) {
        SCOPED_TRACE(pattern);
        V skipped;
        EXPECT_EQ(expand(pattern, &skipped), (V{"keys/in_link", "keys/ok.txt"}));
        EXPECT_EQ(skipped, refused);
    }
    V skipped;
    EXPECT_EQ(expand("keys/*", &skipped), (V{"keys/in_link", "keys/ok.txt"}));
    EXPECT_EQ(skipped, (V{"keys/.env", "keys/id_rsa", "keys/key.pem", "keys/out_link"}));
    // Without a list to name them in, they stay just the same.
    EXPECT_EQ(expand("keys/**", nullptr), (V{"keys/in_link", "keys/ok.txt"}));
    // What the pattern does not match is not named.
    skipped.clear();
    EXPECT_EQ(expand("keys/*.txt", &skipped), V{"keys/ok.txt"});
    EXPECT_TRUE(skipped.empty());
    // Named literally: sent.
    for (const char* name : {"keys/id_rsa", "keys/key.pem", "keys/out_link"}) {
        skipped.clear();
        EXPECT_EQ(expand(name, &skipped), V{name});
        EXPECT_TRUE(skipped.empty());
    }
}

TEST_F(GlobExpand, EscapingPatternsAreErrors) {
    EXPECT_THROW(mlt::expand_local_glob(base.path(), "../x"), mlt::Error);
    EXPECT_THROW(mlt::expand_local_glob(base.path(), "a/../../x/*"), mlt::Error);
    EXPECT_THROW(mlt::expand_local_glob(base.path(), "/etc/passwd"), mlt::Error);
    EXPECT_THROW(mlt::expand_local_glob(base.path(), ""), mlt::Error);
}

}  // namespace
