// The gate every name from the remote goes through (util/remote_name.h).
#include <gtest/gtest.h>

#include <string>

#include "mlt/util/error.h"
#include "mlt/util/remote_name.h"

namespace {

using mlt::remote_name_problem;

TEST(RemoteName, PlainRelativeNamesPass) {
    for (const char* ok : {"a", "a/b/c.txt", ".hidden", "dir/.x", "..x", "x..", "a b/ü", "...",
                           "checkpoints/epoch-01.pt"})
        EXPECT_EQ(remote_name_problem(ok), "") << ok;
}

TEST(RemoteName, NamesThatClimbOrPointElsewhereAreRefused) {
    EXPECT_EQ(remote_name_problem("../../../.bashrc"), "a '..' component");
    EXPECT_EQ(remote_name_problem("a/../../b"), "a '..' component");
    EXPECT_EQ(remote_name_problem("a/.."), "a '..' component");
    EXPECT_EQ(remote_name_problem("./a"), "a '.' component");
    EXPECT_EQ(remote_name_problem("a/./b"), "a '.' component");
    EXPECT_EQ(remote_name_problem("/etc/passwd"), "an absolute name");
    EXPECT_EQ(remote_name_problem("a//b"), "an empty path component");
    EXPECT_EQ(remote_name_problem("a/"), "an empty path component");
    EXPECT_EQ(remote_name_problem(""), "an empty name");
}

TEST(RemoteName, ControlCharactersAreRefused) {
    for (std::string bad : {std::string("a\nb"), std::string("a\x1b]52;c;eA==\x07"),
                            std::string("x\ty"), std::string("d\x7f"), std::string("a\0b", 3)})
        EXPECT_EQ(remote_name_problem(bad), "a control character") << bad;
}

TEST(RemoteName, LengthIsBounded) {
    const std::string component(mlt::kMaxRemoteComponent, 'c');
    EXPECT_EQ(remote_name_problem(component), "");
    EXPECT_NE(remote_name_problem(component + "c"), "");
    std::string deep;
    while (deep.size() + 3 <= mlt::kMaxRemoteName) deep += "d/";
    deep += "f";
    EXPECT_EQ(remote_name_problem(deep), "") << deep.size();
    EXPECT_NE(remote_name_problem(deep + "/more"), "");
}

TEST(RemoteName, CheckThrowsTamperedNamingSourceAndEscapedName) {
    try {
        mlt::check_remote_name("../x\x1b[2J", "the listing of logs on h");
        FAIL() << "no throw";
    } catch (const mlt::Error& e) {
        EXPECT_EQ(e.kind(), mlt::ErrorKind::tampered);
        EXPECT_EQ(e.code(), 1);
        const std::string what = e.what();
        EXPECT_NE(what.find("the listing of logs on h looks tampered with"), std::string::npos)
            << what;
        EXPECT_EQ(what.find('\x1b'), std::string::npos) << what;
        EXPECT_NE(e.hint().find("nothing was written or deleted"), std::string::npos);
    }
    EXPECT_NO_THROW(mlt::check_remote_name("ok/name", "x"));
}

}  // namespace
