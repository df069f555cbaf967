#include <gtest/gtest.h>

#include <string>

#include "local_remote.h"
#include "mlt/ssh/remote.h"
#include "mlt/util/error.h"
#include "mlt/util/text.h"

using mlt::last_lines;
using mlt::printable;

TEST(Printable, KeepsPlainTextAndUtf8) {
    EXPECT_EQ(printable("tar: x: Cannot open"), "tar: x: Cannot open");
    EXPECT_EQ(printable("modèle ✓"), "modèle ✓");
}

TEST(Printable, EscapesControlsC1AndBrokenUtf8) {
    EXPECT_EQ(printable("a\nb\tc\rd"), "a\\nb\\tc\\rd");
    EXPECT_EQ(printable("\x1b[31mred\x7f"), "\\x1b[31mred\\x7f");
    EXPECT_EQ(printable(std::string("nul\0x", 5)), "nul\\x00x");
    EXPECT_EQ(printable("\xc2\x9b"
                        "2J"),
              "\\xc2\\x9b2J");                                // U+009B, the 8-bit CSI
    EXPECT_EQ(printable("\xff\xc3"), "\\xff\\xc3");           // not UTF-8, cut sequence
    EXPECT_EQ(printable("\xc0\xaf"), "\\xc0\\xaf");           // overlong '/'
    EXPECT_EQ(printable("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a surrogate
}

TEST(Printable, CutsAtACharacterBoundaryAndSaysHowMuchMore) {
    const std::string long_name(100000, 'h');
    const std::string shown = printable(long_name, 50);
    EXPECT_EQ(shown, std::string(50, 'h') + " ... (99950 more bytes)");
    // A two-byte character that would straddle the limit is left out whole.
    EXPECT_EQ(printable("abcé", 4), "abc ... (2 more bytes)");
    // An escape is never cut in half either.
    EXPECT_EQ(printable("ab\x01", 4), "ab ... (1 more bytes)");
}

TEST(PrintableLines, KeepsTheLinesAndEscapesEachOne) {
    EXPECT_EQ(mlt::printable_lines("tar: a\x1b]0;t\x07\ntar: b\r\n"),
              "tar: a\\x1b]0;t\\x07\ntar: b\\r\n");
    EXPECT_EQ(mlt::printable_lines(""), "");
    EXPECT_EQ(mlt::printable_lines("\n\n"), "\n\n");
    // Each line is bounded on its own.
    EXPECT_EQ(mlt::printable_lines(std::string(10, 'a') + "\nb", 4), "aaaa ... (6 more bytes)\nb");
}

TEST(LastLines, KeepsTheEndOfALongOutput) {
    std::string banner;
    for (int i = 0; i < 5000; ++i)
        banner += "Welcome to the GPU box, line " + std::to_string(i) + "\n";
    const std::string err = banner +
                            "tar: data/x: Cannot open: Permission denied\n"
                            "tar: Exiting with failure status due to previous errors\n";
    const std::string shown = last_lines(err, 2);
    EXPECT_EQ(shown,
              "... tar: data/x: Cannot open: Permission denied | tar: Exiting with failure "
              "status due to previous errors");
}

TEST(LastLines, SkipsBlankLinesTrimsAndEscapes) {
    EXPECT_EQ(last_lines("\n  one  \r\n\n\ttwo\x1b]0;x\x07\n\n"), "one | two\\x1b]0;x\\x07");
    EXPECT_EQ(last_lines(""), "");
    EXPECT_EQ(last_lines(" \n\t\n"), "");
    EXPECT_EQ(last_lines("a\nb\nc", 3), "a | b | c");
    EXPECT_EQ(last_lines("a\nb\nc\nd", 3), "... b | c | d");
}

TEST(LastLines, BoundsEachLine) {
    const std::string shown = last_lines(std::string(10000, 'x') + "\n", 3, 20);
    EXPECT_EQ(shown, std::string(20, 'x') + " ... (9980 more bytes)");
}

TEST(NamesInBrief, NamesTheFirstFewThenCountsTheRest) {
    EXPECT_EQ(mlt::names_in_brief({}), "");
    EXPECT_EQ(mlt::names_in_brief({"a"}), "a");
    EXPECT_EQ(mlt::names_in_brief({"a", "b", "c"}, 3), "a, b, c");
    EXPECT_EQ(mlt::names_in_brief({"a", "b", "c", "d", "e"}, 2), "a, b and 3 more");
}

TEST(ParseDecimal, OnlyPlainDecimalWithinRange) {
    using mlt::parse_decimal;
    EXPECT_EQ(parse_decimal("22", 1, 65535), 22);
    EXPECT_EQ(parse_decimal("0022", 1, 65535), 22);  // leading zeros are still decimal
    EXPECT_EQ(parse_decimal("-5", -10, 10), -5);
    EXPECT_EQ(parse_decimal("604800", 0, 604800), 604800);
    for (const char* bad : {"0x8fb", "0X10", "1e3", " 22", "22 ", "+22", "22abc", "", "-", "2.5",
                            "0b11", "0o17", "99999999999999999999"})
        EXPECT_FALSE(parse_decimal(bad, -100000, 100000).has_value()) << bad;
    EXPECT_FALSE(parse_decimal("0", 1, 65535).has_value());
    EXPECT_FALSE(parse_decimal("65536", 1, 65535).has_value());
}

TEST(ParseReal, FiniteDecimalWithinRange) {
    using mlt::parse_real;
    EXPECT_EQ(parse_real("1.25", 0, 10), 1.25);
    EXPECT_EQ(parse_real("0", 0, 10), 0.0);
    EXPECT_EQ(parse_real(".5", 0, 10), 0.5);
    EXPECT_EQ(parse_real("5e-4", 0, 10), 0.0005);
    EXPECT_EQ(parse_real("1e+1", 0, 10), 10.0);
    EXPECT_EQ(parse_real("-1", -2, 10), -1.0);
    for (const char* bad : {"abc", "", ".", "-", "e5", "inf", "nan", "-inf", "0x10", " 1", "1 ",
                            "+1", "1,5", "1.5.5", "1e999", "11", "-3"})
        EXPECT_FALSE(parse_real(bad, -2, 10).has_value()) << bad;
}

TEST(FormatUsd, TwoDecimalsAndBelowACent) {
    EXPECT_EQ(mlt::format_usd(0), "$0.00");
    EXPECT_EQ(mlt::format_usd(0.421), "$0.42");
    EXPECT_EQ(mlt::format_usd(1234.5), "$1234.50");
    EXPECT_EQ(mlt::format_usd(0.004), "$0.004");
}

// The error of a failed remote command: exit 1 (not 255, the link was fine), and the end
// of what it said, escaped and bounded, even behind a 200 KB login banner.
TEST(RemoteFailure, QuotesTheLastLinesBoundedAndEscaped) {
    mlt::test::LocalRemote remote;
    const mlt::RemoteOutput out = remote.run(
        "i=0; while [ $i -lt 4000 ]; do echo \"Welcome to the rented GPU box, have fun $i\" >&2; "
        "i=$((i+1)); done; printf 'tar: data/x: Cannot open: \\033[31mPermission denied\\n' >&2; "
        "exit 2");
    ASSERT_EQ(out.exit_status, 2);
    ASSERT_GT(out.err.size(), 150000u);
    const mlt::Error e = mlt::remote_failure(remote, "unpacking the upload", 2, out.err);
    EXPECT_EQ(e.code(), mlt::exit_code::kRemote);
    EXPECT_EQ(e.kind(), mlt::ErrorKind::remote);
    const std::string what = e.what();
    EXPECT_NE(what.find("failed (exit 2)"), std::string::npos) << what;
    EXPECT_NE(what.find("tar: data/x: Cannot open: \\x1b[31mPermission denied"), std::string::npos)
        << what;
    EXPECT_NE(what.find("have fun 3999"), std::string::npos) << what;
    EXPECT_EQ(what.find("have fun 3996"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos);
    EXPECT_EQ(what.find('\x1b'), std::string::npos);
    EXPECT_LT(what.size(), 1000u);
}

TEST(WildcardMatch, StarAndQuestionMarkOnly) {
    using mlt::wildcard_match;
    EXPECT_TRUE(wildcard_match("*", "", false));
    EXPECT_TRUE(wildcard_match("gpu*", "gpu-7", false));
    EXPECT_TRUE(wildcard_match("*.example.*", "a.example.com", false));
    EXPECT_TRUE(wildcard_match("h?st", "host", false));
    EXPECT_FALSE(wildcard_match("h?st", "hst", false));
    EXPECT_FALSE(wildcard_match("gpu*", "cpu-7", false));
    EXPECT_TRUE(wildcard_match("[h]:22", "[h]:22", false)) << "[ is a plain character";
    EXPECT_FALSE(wildcard_match("[h]:22", "h:22", false));
    EXPECT_FALSE(wildcard_match("GPU", "gpu", false));
    EXPECT_TRUE(wildcard_match("GPU", "gpu", true));
    EXPECT_TRUE(wildcard_match("a*b*c", "axxbyybzc", false));
    EXPECT_FALSE(wildcard_match("a*b*c", "axxbyybz", false));
    // Many stars against a long text stay fast (no exponential backtracking).
    EXPECT_FALSE(wildcard_match(std::string(200, '*') + "b", std::string(5000, 'a'), false));
}
