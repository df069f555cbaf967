#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>

#include "mlt/transfer/workspace.h"
#include "mlt/util/paths.h"

namespace fs = std::filesystem;

namespace {

TEST(IgnoreRules, GitignoreSemantics) {
    mlt::IgnoreRules r;
    r.add("# comment\n*.log\n!keep.log\nbuild/\n/top.txt\ndocs/*.tmp\ndata/**/cache\n\\#hash\n");
    EXPECT_TRUE(r.ignored("a.log", false));
    EXPECT_TRUE(r.ignored("deep/dir/a.log", false));
    EXPECT_FALSE(r.ignored("keep.log", false));  // re-included
    EXPECT_TRUE(r.ignored("build", true));
    EXPECT_TRUE(r.ignored("x/build", true));
    EXPECT_FALSE(r.ignored("build", false));  // dir-only rule, a file named build
    EXPECT_TRUE(r.ignored("top.txt", false));
    EXPECT_FALSE(r.ignored("sub/top.txt", false));  // anchored at the root
    EXPECT_TRUE(r.ignored("docs/a.tmp", false));
    EXPECT_FALSE(r.ignored("docs/sub/a.tmp", false));
    EXPECT_TRUE(r.ignored("data/x/y/cache", true));
    EXPECT_TRUE(r.ignored("#hash", false));
    EXPECT_FALSE(r.ignored("main.py", false));
}

TEST(Workspace, IgnoresVcsSecretsAndIgnoredFiles) {
    char tmpl[] = "/tmp/mlt-ws-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    const std::string root = tmpl;
    for (const char* dir : {"/.git", "/.mlt/m", "/src", "/build", "/.ssh", "/data"})
        fs::create_directories(root + dir);
    for (const char* f : {"/.git/config", "/.mlt/m/lock", "/src/model.py", "/src/model.pyc",
                          "/build/out.o", "/.env", "/.env.local", "/id_ed25519", "/cert.pem",
                          "/.ssh/config", "/data/a.csv", "/data/keep.pyc", "/notes with space.txt"})
        mlt::write_file_atomic(root + f, "x", 0644);
    mlt::write_file_atomic(root + "/.gitignore", "*.pyc\nbuild/\n", 0644);
    mlt::write_file_atomic(root + "/.mltignore", "!data/keep.pyc\n", 0644);
    fs::create_directory_symlink("/etc", root + "/etc-link");     // never followed
    fs::create_symlink("/etc/hostname", root + "/outside-link");  // would leak a file
    fs::create_symlink("src/model.py", root + "/inside-link");    // fine: stays inside

    std::vector<std::string> got;
    for (const auto& item : mlt::collect_workspace(root)) {
        got.push_back(item.remote_path);
        EXPECT_EQ(item.local_path, (fs::path(root) / item.remote_path).string());
    }
    EXPECT_EQ(got,
              (std::vector<std::string>{".gitignore", ".mltignore", "data/a.csv", "data/keep.pyc",
                                        "inside-link", "notes with space.txt", "src/model.py"}));
    fs::remove_all(root);
}

TEST(IgnoreRules, IgnoredByNamesTheFileAndTheRuleThatDecides) {
    mlt::IgnoreRules r;
    r.add("*.log\nbuild/\n", ".gitignore");
    r.add("!keep.log\n", ".mltignore");
    EXPECT_EQ(r.ignored_by("a.log", false), "ignored by .gitignore: *.log");
    EXPECT_EQ(r.ignored_by("x/build", true), "ignored by .gitignore: build/");
    EXPECT_EQ(r.ignored_by("keep.log", false), "");  // re-included by the later file
    EXPECT_EQ(r.ignored_by("main.py", false), "");
}

TEST(Workspace, SaysWhatItLeavesOutAndWhy) {
    char tmpl[] = "/tmp/mlt-ws-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    const std::string root = tmpl;
    for (const char* dir : {"/.git", "/build"}) fs::create_directories(root + dir);
    for (const char* f : {"/.git/config", "/build/out.o", "/.env", "/main.py", "/a.pyc"})
        mlt::write_file_atomic(root + f, "x", 0644);
    mlt::write_file_atomic(root + "/.gitignore", "*.pyc\nbuild/\n", 0644);
    fs::create_symlink("/etc/hostname", root + "/outside-link");

    std::vector<mlt::LeftOutFile> left_out;
    mlt::collect_workspace(root, &left_out);
    std::map<std::string, std::string> why;
    for (const auto& f : left_out) why[f.path] = f.reason;
    EXPECT_EQ(why, (std::map<std::string, std::string>{
                       {".git/", "version control or mlt's state: never synced"},
                       {"build/", "ignored by .gitignore: build/"},
                       {".env", "looks like a secret: never synced"},
                       {"a.pyc", "ignored by .gitignore: *.pyc"},
                       {"outside-link", "links outside the workspace or to a secret"}}));
    fs::remove_all(root);
}

TEST(Workspace, MissingDirectoryIsAUsageError) {
    EXPECT_THROW(mlt::collect_workspace("/nonexistent/ws"), std::exception);
}

}  // namespace

TEST(Workspace, SecretPathsAreTheDenyList) {
    for (const char* p : {".env", ".env.local", "id_rsa", "keys/id_ed25519", "cert.pem", "a/b.key",
                          ".netrc", ".ssh/config", "x/.ssh/known_hosts"})
        EXPECT_TRUE(mlt::is_secret_path(p, false)) << p;
    EXPECT_TRUE(mlt::is_secret_path("x/.ssh", true));
    for (const char* p : {"env", "my.env", "ids.txt", "pem", "key.txt", "ssh/config", ".sshx/a"})
        EXPECT_FALSE(mlt::is_secret_path(p, false)) << p;
    EXPECT_FALSE(mlt::is_secret_path("keys", true));
    // The workspace adds version control and mlt's state to it.
    EXPECT_TRUE(mlt::is_never_synced(".git", true));
    EXPECT_TRUE(mlt::is_never_synced("id_rsa", false));
    EXPECT_FALSE(mlt::is_secret_path(".git", true));
}

TEST(Workspace, LinksOutsideAreLinksWhoseTargetLeavesTheRoot) {
    char tmpl[] = "/tmp/mlt-ws-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    const std::string root = tmpl;
    fs::create_directories(root + "/in");
    mlt::write_file_atomic(root + "/in/file", "x", 0644);
    mlt::write_file_atomic(root + "/out", "x", 0644);
    fs::create_symlink("file", root + "/in/inside");
    fs::create_symlink("../out", root + "/in/outside");
    fs::create_symlink("gone", root + "/in/dangling");
    fs::create_symlink(root + "/in", root + "/in-link");  // a root given through a link
    EXPECT_FALSE(mlt::links_outside(root + "/in", root + "/in/file"));  // not a link
    EXPECT_FALSE(mlt::links_outside(root + "/in", root + "/in/inside"));
    EXPECT_FALSE(mlt::links_outside(root + "/in-link", root + "/in-link/inside"));
    EXPECT_TRUE(mlt::links_outside(root + "/in", root + "/in/outside"));
    EXPECT_TRUE(mlt::links_outside(root + "/in", root + "/in/dangling"));
    EXPECT_FALSE(mlt::links_outside(root, root + "/in/outside"));  // inside a wider root
    // A link inside to a secret would send it under another name.
    mlt::write_file_atomic(root + "/in/id_rsa", "PRIVATE", 0600);
    fs::create_directories(root + "/in/.ssh");
    mlt::write_file_atomic(root + "/in/.ssh/config", "Host x", 0600);
    fs::create_symlink("id_rsa", root + "/in/notes");
    fs::create_symlink(".ssh/config", root + "/in/settings");
    EXPECT_TRUE(mlt::links_outside(root + "/in", root + "/in/notes"));
    EXPECT_TRUE(mlt::links_outside(root + "/in", root + "/in/settings"));
    fs::remove_all(root);
}
