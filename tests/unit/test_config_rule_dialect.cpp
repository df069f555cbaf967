// The host's dialect of watch.stop_when (mlt/config/rule_dialect.h): each shorthand it
// translates, each thing it refuses with the offset of its character, a plateau rule split
// around its group, the rules file, and a refused rule as a settings error at file:line:col.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "mlt/config/rule_dialect.h"
#include "mlt/config/settings.h"
#include "mlt/config/stop_rule_spec.h"
#include "mlt/util/error.h"
#include "mlt/util/paths.h"
#include "rules_corpus.h"

namespace mlt {
namespace {

using test::plateau_rule;
using test::regex_rule;

// The ERE of `rule`, or "refused at N: WHY".
std::string host(const StopRule& rule) {
    const auto out = host_regex(rule);
    if (const auto* refused = std::get_if<DialectRefusal>(&out))
        return "refused at " + std::to_string(refused->offset) + ": " + refused->why;
    return std::get<HostRegex>(out).regex;
}

std::string host(const std::string& regex) {
    return host(regex_rule(regex));
}

// Each regex (first) as the host's ERE (second).
void expect_translations(const std::vector<std::pair<std::string, std::string>>& cases) {
    for (const auto& [regex, ere] : cases) EXPECT_EQ(host(regex), ere) << regex;
}

TEST(RuleDialect, KeepsWhatEveryAwkReadsAlike) {
    expect_translations({
        {"CUDA out of memory", "CUDA out of memory"},
        {"loss[=:] *nan", "loss[:=] *nan"},
        {"^Traceback \\(most recent call last\\):$", "^Traceback \\(most recent call last\\):$"},
        {"(nan|inf)|NaN", "(nan|inf)|NaN"},
        {"a.b\\.c", "a.b\\.c"},
        {"x+y*z?", "x+y*z?"},
        {"it/s \\/ 100%", "it/s / 100%"},
        {"a}b]c", "a\\}b\\]c"},
        {"\\{\\}\\[\\]\\|\\^\\$\\\\", "\\{\\}\\[\\]\\|\\^\\$\\\\"},
        {"(?:^|,)loss", "(^|,)loss"},
    });
}

TEST(RuleDialect, TranslatesTheShorthands) {
    expect_translations({
        {"step \\d+", "step [0-9]+"},
        {"\\D", "[^0-9]"},
        {"a\\s*b", "a[\t\v\f ]*b"},
        {"\\S+", "[^\t\v\f ]+"},
        {"\\w+Error", "[0-9A-Z_a-z]+Error"},
        {"\\W", "[^0-9A-Z_a-z]"},
        {"[\\d.]+", "[.0-9]+"},
        {"[^\\d\\s]", "[^\t\v\f 0-9]"},
        {"[[:digit:]]x[[:alpha:]_]", "[0-9]x[A-Z_a-z]"},
        {"a\\tb", "a\tb"},
        {"\\x41\\u0042\\cA", "AB\x01"},
        {"[\\b]", "\b"},
        {"[a\\-z]", "[az-]"},
    });
}

TEST(RuleDialect, ExpandsIntervalsAsMawkHasNone) {
    expect_translations({
        {"x{3}", "xxx"},
        {"x{2,}", "xx+"},
        {"x{0,}", "x*"},
        {"x{1,}", "x+"},
        {"x{0,1}", "x?"},
        {"x{2,3}", "xxx?"},
        {"x{2,4}", "xx(xx?)?"},
        {"x{1,4}", "x(x(xx?)?)?"},
        {"\\d{2,3}", "[0-9][0-9][0-9]?"},
        {"(ab|c){2}", "(ab|c)(ab|c)"},
        {"(?:ab){1,2}x", "(ab)(ab)?x"},
        {"#{32}", std::string(32, '#')},
    });
}

// A bracket never holds a backslash (mawk reads it as an escape, POSIX as itself), nor a
// line end; ], [, ^ and - stand where no awk reads them otherwise.
TEST(RuleDialect, WritesBracketsEveryAwkReadsAlike) {
    expect_translations({
        {"[\\]a]", "[]a]"},
        {"[\\^a]", "[a^]"},
        {"[\\^\\-]", "[-^]"},
        {"[-\\]\\[:^]", "[]:[^-]"},
        {"[\\\\a]", "(\\\\|a)"},
        {"[\\\\ab]", "(\\\\|[ab])"},
        {"[\\\\]", "\\\\"},
        {"[^a]", "[^a]"},
        {"[\\n\\r]x", "refused at 0: a class of \\n or \\r alone: a console line never holds one"},
        {"[a\\n]", "a"},
        {"[.]", "\\."},
        {"[\\d-]", "[0-9-]"},
    });
    // Without a backslash among its members a negated class is written as what it holds.
    const std::string not_backslash = host("[^\\\\]");
    EXPECT_EQ(not_backslash.find('\\'), std::string::npos) << not_backslash;
    EXPECT_EQ(not_backslash.front(), '[');
}

struct Refusal {
    std::string regex;
    std::size_t offset;
    std::string why;
};

TEST(RuleDialect, RefusesWhatTheHostCannotEvaluateWithItsOffset) {
    const std::vector<Refusal> cases{
        {"(a)\\1", 3, "a backreference"},
        {"a(?=b)", 1, "a lookahead"},
        {"a(?!b)", 1, "a lookahead"},
        {"x*?", 2, "a lazy quantifier"},
        {"ab+?", 3, "a lazy quantifier"},
        {"a??", 2, "a lazy quantifier"},
        {"a{2,3}?", 6, "a lazy quantifier"},
        {"\\bloss", 0, "\\b (a word boundary)"},
        {"loss\\B", 4, "\\B (a word boundary)"},
        {"a\\nb", 1, "\\n: a console line never holds one"},
        {"a**", 2, "a quantifier right after a quantifier"},
        {"a{2}{3}", 4, "a quantifier right after a quantifier"},
        {"a{33}", 1, "a repeat over 32"},
        {"a{1,40}", 1, "a repeat over 32"},
        {"a{0}", 1, "a repeat of 0 times"},
        {"(a|)", 3, "an empty alternative or group"},
        {"x()", 2, "an empty alternative or group"},
        {"a|", 2, "an empty alternative or group"},
        {"(^a)+", 1, "an anchor (^ or $) inside a repeated group"},
        {"(a$)*", 2, "an anchor (^ or $) inside a repeated group"},
        {"\\x00", 0, "a NUL byte"},
        {"\\0", 0, "a NUL byte"},
        {"\\u00e9", 0, "\\u beyond ASCII"},
        {"\\q", 0, "an unknown escape \\q"},
        {"a\\k<n>", 1, "a named backreference"},
        {"[]a]", 0, "an empty class"},
        {"[^]", 0, "an empty class"},
        {"x[[.a.]]", 2, "a collating element"},
        {"[[:word:]]", 1, "an unknown class [:word:]"},
        {"((((((((((((((((((a))))))))))))))))))", 16, "groups nested deeper than 16"},
        {"((((((((a{32}){32}){32}))))))", 19, "a repeat that expands past 4096 bytes"},
    };
    for (const Refusal& c : cases) {
        const auto out = host_regex(regex_rule(c.regex));
        const auto* refused = std::get_if<DialectRefusal>(&out);
        ASSERT_TRUE(refused) << c.regex << " -> " << std::get<HostRegex>(out).regex;
        EXPECT_EQ(refused->offset, c.offset) << c.regex << ": " << refused->why;
        EXPECT_EQ(refused->why.rfind(c.why, 0), 0u) << c.regex << ": " << refused->why;
    }
}

// The host has no captures: a plateau rule's metric (its first group) stands at the top level
// and the regex is split around it; the anchors stay outside the three parts.
TEST(RuleDialect, SplitsAPlateauRuleAroundItsFirstGroup) {
    auto split = [](const std::string& regex) {
        const auto out = host_regex(plateau_rule(regex, 5));
        if (const auto* refused = std::get_if<DialectRefusal>(&out))
            return "refused at " + std::to_string(refused->offset) + ": " + refused->why;
        const HostRegex& h = std::get<HostRegex>(out);
        return h.regex + " = " + h.prefix + " | " + h.group + " | " + h.suffix;
    };
    EXPECT_EQ(split("val_loss[=:]\\s*([\\d.eE+-]+)"),
              "val_loss[:=][\t\v\f ]*([+.0-9Ee-]+) = val_loss[:=][\t\v\f ]* | [+.0-9Ee-]+ | ");
    EXPECT_EQ(split("^acc(?:uracy)?=(\\d*\\.?\\d+)%?$"),
              "^acc(uracy)?=([0-9]*\\.?[0-9]+)%?$ = acc(uracy)?= | [0-9]*\\.?[0-9]+ | %?");
    EXPECT_EQ(split("(\\d+) it/s"), "([0-9]+) it/s =  | [0-9]+ |  it/s");
    EXPECT_EQ(split("loss=(nan|[0-9.]+)"), "loss=(nan|[.0-9]+) = loss= | nan|[.0-9]+ | ");
    EXPECT_EQ(split("a|b=(\\d)").rfind("refused at 1: a plateau metric with | at its top", 0), 0u);
    EXPECT_EQ(split("(?:v=(\\d+))").rfind("refused at 5: the metric's group stands inside", 0), 0u);
    EXPECT_EQ(split("(v=\\d+ ){2}").rfind("refused at 8: the metric's group is repeated", 0), 0u);
    EXPECT_EQ(split("(\\d+)?").rfind("refused at 5: the metric's group is repeated", 0), 0u);
    EXPECT_EQ(split("(?:^|,)v=(\\d+)").rfind("refused at 3: a plateau metric has ^ only", 0), 0u);
    EXPECT_EQ(split("v=(\\d+$)").rfind("refused at 6: a plateau metric has ^ only", 0), 0u);
}

TEST(RuleDialect, TheRulesFileHoldsOneRuleALineWithEveryFieldEncoded) {
    const std::string text =
        host_rules_text({regex_rule("loss[=:]\\tnan"), plateau_rule("acc=(\\d+)%", 3, true),
                         plateau_rule("^v=(\\d)$", 5)});
    EXPECT_EQ(text,
              "mlt-rules 1\n"
              "r\tloss[:=]%09nan\n"
              "p\tmax\t3\tacc=([0-9]+)%25\tacc=\t[0-9]+\t%25\n"
              "p\tmin\t5\t^v=([0-9])$\tv=\t[0-9]\t\n");
    EXPECT_EQ(host_rules_text({}), "mlt-rules 1\n");
    try {
        host_rules_text({regex_rule("a(?=b)")});
        ADD_FAILURE() << "a refused rule gives no rules file";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::config);
        EXPECT_NE(std::string(e.what()).find("'a(?=b)' is no rule the host can evaluate: a "
                                             "lookahead"),
                  std::string::npos)
            << e.what();
    }
}

TEST(RuleDialect, RuleErrorChecksEcmaScriptFirstThenTheHost) {
    const auto broken = rule_error(regex_rule("loss=(nan"));
    ASSERT_TRUE(broken);
    EXPECT_EQ(broken->why.rfind("not a valid regex: ", 0), 0u) << broken->why;
    EXPECT_FALSE(broken->offset);
    const auto lazy = rule_error(regex_rule("loss=.*?nan"));
    ASSERT_TRUE(lazy);
    EXPECT_EQ(lazy->offset, 7u);
    EXPECT_FALSE(rule_error(plateau_rule("loss=(\\d+)", 5)));
}

// A refused rule is a settings error at the offending character when the scalar shows it as
// it is (plain, single-quoted), else at the scalar with the character's number.
class RuleDialectSettings : public ::testing::Test {
  protected:
    void SetUp() override {
        std::string dir = (std::filesystem::temp_directory_path() / "mlt-dialect-XXXXXX").string();
        ASSERT_NE(mkdtemp(dir.data()), nullptr);
        dir_ = dir;
    }
    void TearDown() override { std::filesystem::remove_all(dir_); }

    // The message of the error that reading `yaml` as the user's settings throws, its path
    // cut to "u".
    std::string error_of(const std::string& yaml) {
        SettingsSources sources;
        sources.user_settings_path = dir_ + "/user.yaml";
        write_file_atomic(sources.user_settings_path, yaml, 0644);
        try {
            load_settings(sources, nullptr);
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::config);
            EXPECT_NE(e.hint().find("see docs/usage.md, \"Watching a run\""), std::string::npos);
            const std::string what = e.what();
            return what.rfind(sources.user_settings_path, 0) == 0
                       ? "u" + what.substr(sources.user_settings_path.size())
                       : what;
        }
        ADD_FAILURE() << "no error for:\n" << yaml;
        return {};
    }

    std::string dir_;
};

TEST_F(RuleDialectSettings, ARefusedRuleIsPlacedAtItsCharacter) {
    EXPECT_EQ(error_of("ssh:\n  watch:\n    stop_when: ['loss=.*?nan']\n"),
              "u:3:25: ssh.watch.stop_when[0] is no usable rule: a lazy quantifier (*?, +?, ??, "
              "{n,m}?): the host's awk has none; drop its ?");
    EXPECT_EQ(error_of("ssh:\n  watch:\n    stop_when:\n      - \\bnan\n"),
              "u:4:9: ssh.watch.stop_when[0] is no usable rule: \\b (a word boundary): the "
              "host's awk has none; write (^|[^A-Za-z0-9_]) or [^A-Za-z0-9_] around the word "
              "instead");
    EXPECT_EQ(error_of("ssh:\n  watch:\n    stop_when: [{metric: 'v=(?:(\\d+))', mode: max}]\n"),
              "u:3:32: ssh.watch.stop_when[0] is no usable rule: the metric's group stands "
              "inside another group: the host finds it only at the top level of the regex");
    // Double-quoted: its escapes move the characters; the scalar and the character's number.
    EXPECT_EQ(error_of("ssh:\n  watch:\n    stop_when: [\"a\\\\d(?=x)\"]\n"),
              "u:3:17: ssh.watch.stop_when[0] is no usable rule: a lookahead ((?= or (?!): the "
              "host's awk has none (at character 4 of the regex)");
    // An escaped quote before the character moves it too.
    EXPECT_EQ(error_of("ssh:\n  watch:\n    stop_when: ['it''s (?=x)']\n"),
              "u:3:17: ssh.watch.stop_when[0] is no usable rule: a lookahead ((?= or (?!): the "
              "host's awk has none (at character 6 of the regex)");
    EXPECT_EQ(error_of("ssh:\n  watch:\n    stop_when: [{metric: 'v=(\\d+)|w'}]\n"),
              "u:3:34: ssh.watch.stop_when[0] is no usable rule: a plateau metric with | at its "
              "top level: put the alternatives in a (?:...) group");
}

}  // namespace
}  // namespace mlt
