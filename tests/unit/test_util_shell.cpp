#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <string>

#include "mlt/util/paths.h"
#include "mlt/util/shell.h"

namespace {

// Runs `sh -c "printf %s <word>"` and returns what the shell made of the quoted word.
std::string through_shell(const std::string& quoted_word) {
    const std::string script = "printf %s " + quoted_word;
    const std::string command = "sh -c " + mlt::shell_quote(script);
    FILE* p = ::popen(command.c_str(), "r");
    EXPECT_NE(p, nullptr);
    std::string out;
    char buf[256];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    EXPECT_EQ(::pclose(p), 0);
    return out;
}

TEST(ShellQuote, PlainWordsStayReadable) {
    EXPECT_EQ(mlt::shell_quote("abc"), "abc");
    EXPECT_EQ(mlt::shell_quote("/a/b-c_d.e:f@g+h,i%"), "/a/b-c_d.e:f@g+h,i%");
    EXPECT_EQ(mlt::shell_quote(""), "''");
}

TEST(ShellQuote, SingleQuoteIsEscaped) {
    EXPECT_EQ(mlt::shell_quote("it's"), "'it'\\''s'");
}

TEST(ShellQuote, EveryHostileValueSurvivesARealShell) {
    const std::string values[] = {"two words",
                                  "it's",
                                  "\"double\"",
                                  "$HOME",
                                  "`id`",
                                  "$(id)",
                                  "a;b",
                                  "a&&b",
                                  "a|b",
                                  "*",
                                  "?",
                                  "[ab]",
                                  "~",
                                  "~/x",
                                  "back\\slash",
                                  "new\nline",
                                  "tab\there",
                                  "-n",
                                  "--",
                                  "'",
                                  "''",
                                  "\\'",
                                  "!",
                                  "#comment",
                                  "{a,b}",
                                  "a b ' \" $ ` \\ \n end",
                                  "\xc3\xa9t\xc3\xa9"};
    for (const auto& v : values) EXPECT_EQ(through_shell(mlt::shell_quote(v)), v) << v;
}

TEST(ShellQuote, AllBytesExceptNulRoundTrip) {
    std::string all;
    for (int c = 1; c < 256; ++c) all += static_cast<char>(c);
    EXPECT_EQ(through_shell(mlt::shell_quote(all)), all);
}

// printf's output is checked byte for byte, so NULs count.
TEST(PrintfLiteral, EveryByteIncludingNulRoundTripsThroughPrintf) {
    std::string all;
    for (int c = 0; c < 256; ++c) all += static_cast<char>(c);
    const std::string values[] = {
        all, "", "-n", "--", "%s%d%%", "\\n\\0", "\n\n", std::string("a\0b", 3), "it's \"$x\" `y`"};
    for (const auto& v : values) {
        const std::string script = "printf " + mlt::printf_literal(v);
        FILE* p = ::popen(("sh -c " + mlt::shell_quote(script)).c_str(), "r");
        ASSERT_NE(p, nullptr);
        std::string out;
        char buf[256];
        size_t n;
        while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
        EXPECT_EQ(::pclose(p), 0) << v;
        EXPECT_EQ(out, v);
    }
}

TEST(ShellQuotePath, TildeMeansRemoteHome) {
    const std::string home = through_shell("\"$HOME\"");
    EXPECT_EQ(through_shell(mlt::shell_quote_path("~")), home);
    EXPECT_EQ(through_shell(mlt::shell_quote_path("~/")), home + "/");
    EXPECT_EQ(through_shell(mlt::shell_quote_path("~/my dir/it's")), home + "/my dir/it's");
    EXPECT_EQ(through_shell(mlt::shell_quote_path("~other/x")), "~other/x");
    EXPECT_EQ(through_shell(mlt::shell_quote_path("/abs/$MLT_SURELY_UNSET_X/y")), "/abs//y");
}

// As MLTK's remote paths: `$NAME` and `${NAME}` expand remotely, nothing else does.
TEST(ShellQuotePath, VariablesExpandButNothingElse) {
    const std::string home = through_shell("\"$HOME\"");
    EXPECT_EQ(through_shell(mlt::shell_quote_path("$HOME/w")), home + "/w");
    EXPECT_EQ(through_shell(mlt::shell_quote_path("/x/${HOME}_y")), "/x/" + home + "_y");
    EXPECT_EQ(through_shell(mlt::shell_quote_path("~/$HOME")), home + "/" + home);
    for (const std::string literal :
         {"$(id)", "`id`", "a$", "$1", "${unclosed", "${}", "$-x", "*", "it's $ \"q\""})
        EXPECT_EQ(through_shell(mlt::shell_quote_path(literal)), literal) << literal;
}

TEST(ExpandEnvVars, LocalVariablesAsPythonsExpandvars) {
    ::setenv("MLT_TEST_VAR", "v a l", 1);
    ::unsetenv("MLT_TEST_UNSET");
    EXPECT_EQ(mlt::expand_env_vars("$MLT_TEST_VAR/x/${MLT_TEST_VAR}y"), "v a l/x/v a ly");
    EXPECT_EQ(mlt::expand_env_vars("$MLT_TEST_UNSET/a"), "${MLT_TEST_UNSET}/a");
    EXPECT_EQ(mlt::expand_env_vars("a$ $1 ${x"), "a$ $1 ${x");
}

TEST(ShellDoubleQuote, ExpandsAsMltksExportDoes) {
    const std::string home = through_shell("\"$HOME\"");
    EXPECT_EQ(through_shell(mlt::shell_double_quote("$HOME/data")), home + "/data");
    EXPECT_EQ(through_shell(mlt::shell_double_quote("${HOME}x")), home + "x");
    EXPECT_EQ(through_shell(mlt::shell_double_quote("$(echo sub)")), "sub");
    EXPECT_EQ(through_shell(mlt::shell_double_quote("`echo tick`")), "tick");
    EXPECT_EQ(through_shell(mlt::shell_double_quote("a\\$b")), "a$b");  // MLTK: export X="a\$b"
    EXPECT_EQ(through_shell(mlt::shell_double_quote("it's a test")), "it's a test");
}

TEST(ShellDoubleQuote, TheWordAlwaysEndsWhereItShould) {
    EXPECT_EQ(through_shell(mlt::shell_double_quote("say \"hi\"")), "say \"hi\"");
    EXPECT_EQ(through_shell(mlt::shell_double_quote("say \\\"hi\\\"")), "say \"hi\"");
    EXPECT_EQ(through_shell(mlt::shell_double_quote("C:\\")), "C:\\");
    EXPECT_EQ(through_shell(mlt::shell_double_quote("x\" ; echo injected ; \"")),
              "x\" ; echo injected ; \"");
}

TEST(ShellJoin, QuotesEachWord) {
    EXPECT_EQ(mlt::shell_join({"mltk", "train", "my model"}), "mltk train 'my model'");
    EXPECT_EQ(mlt::shell_join({}), "");
}

}  // namespace
