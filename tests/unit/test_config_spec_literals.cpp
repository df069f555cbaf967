#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "config/spec_literals.h"
#include "mlt/config/settings.h"
#include "mlt/util/error.h"

namespace mlt {
namespace {

using settings_detail::spec_literals_yaml;
using Env = std::vector<std::pair<std::string, std::string>>;
using Strings = std::vector<std::string>;

// The YAML of `spec` (named spec.py), with its warnings.
std::string yaml_of(const std::string& spec, std::vector<SettingsWarning>* warnings = nullptr,
                    const std::set<std::string>& skip = {}) {
    std::vector<SettingsWarning> ignored;
    return spec_literals_yaml("spec.py", spec, skip, warnings ? warnings : &ignored);
}

// A fresh directory with spec.py, and spec.ssh.yaml / user.yaml when given.
class SpecLiteralsTest : public ::testing::Test {
  protected:
    void SetUp() override {
        std::string tmpl =
            (std::filesystem::temp_directory_path() / "mlt-spec-literals-XXXXXX").string();
        ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
        dir_ = tmpl;
    }
    void TearDown() override { std::filesystem::remove_all(dir_); }

    // Plain writes: the garbage test writes hundreds of files, and fsync would dominate.
    std::string write(const std::string& name, const std::string& text) {
        std::string path = dir_ + "/" + name;
        std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
        return path;
    }

    SshSettings load(const std::string& spec, const std::string& sidecar = {},
                     const std::string& user = {}) {
        SettingsSources sources;
        sources.spec_path = write("spec.py", spec);
        if (!sidecar.empty()) sources.model_settings_path = write("spec.ssh.yaml", sidecar);
        if (!user.empty()) sources.user_settings_path = write("user.yaml", user);
        warnings_.clear();
        return load_settings(sources, &warnings_);
    }

    // The message of the error loading `spec` throws, with the directory cut off.
    std::string error_of(const std::string& spec) {
        try {
            load(spec);
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::config);
            std::string what = e.what();
            if (what.compare(0, dir_.size() + 1, dir_ + "/") == 0)
                what = what.substr(dir_.size() + 1);
            return what;
        }
        ADD_FAILURE() << "no error for:\n" << spec;
        return {};
    }

    // The one warning of `spec`, as "line: message".
    std::string only_warning(const std::string& spec) {
        load(spec);
        if (warnings_.size() != 1) {
            ADD_FAILURE() << warnings_.size() << " warnings for:\n" << spec;
            return {};
        }
        EXPECT_EQ(warnings_[0].file, dir_ + "/spec.py");
        return std::to_string(warnings_[0].line) + ": " + warnings_[0].message;
    }

    std::string dir_;
    std::vector<SettingsWarning> warnings_;
};

TEST(SpecLiterals, EntriesStartOnTheLineAndColumnOfTheirAssignment) {
    EXPECT_EQ(yaml_of("import mltk\n"
                      "m.ssh_remote_dir = 'w'\n"
                      "\n"
                      "m.ssh_create_venv = True\n"),
              "{\"ssh\": {\n"
              "  \"remote_dir\":    \"w\",\n"
              "\n"
              "  \"create_venv\":    true\n"
              "}}\n");
    // An assignment on line 1 shares it with the opening brackets; its columns shift. A
    // second one on a line keeps its column when there is room.
    EXPECT_EQ(yaml_of("m.ssh_create_venv = False"), "{\"ssh\": {\"create_venv\":    false\n}}\n");
    EXPECT_EQ(yaml_of("\nm.ssh_create_venv = False; m.ssh_remote_dir = 'x'"),
              "{\"ssh\": {\n  \"create_venv\":    false,   \"remote_dir\":    \"x\"\n}}\n");
    EXPECT_EQ(yaml_of(""), "{\"ssh\": {\n}}\n");
    EXPECT_EQ(yaml_of("x = 1\nm.other = 2\n"), "{\"ssh\": {\n}}\n");
}

TEST(SpecLiterals, MultiLineValuesKeepTheirLines) {
    EXPECT_EQ(yaml_of("m.ssh_startup_cmds = [  # first\n"
                      "    'a',\n"
                      "    # between\n"
                      "    'b',\n"
                      "]\n"),
              "{\"ssh\": {\"startup_cmds\":    [\n"
              "    \"a\",\n"
              "\n"
              "    \"b\",\n"
              "]\n"
              "}}\n");
}

TEST(SpecLiterals, NestedValuesTuplesAndSigns) {
    // Each value starts at its Python column while the text so far leaves room.
    EXPECT_EQ(yaml_of("\nm.ssh_environment = {'a': [1, (2, 3), (), ('x',), ('y'), {'b': None}]}"),
              "{\"ssh\": {\n"
              "  \"environment\":    {\"a\": [1, [2, 3], [], [\"x\",],  \"y\",  {\"b\": null}]}\n"
              "}}\n");
    EXPECT_EQ(yaml_of("\nm.ssh_environment = dict(A=-5, B=+2.5, C=- 1e-3, D=0x1F, E=1_000)"),
              "{\"ssh\": {\n"
              "  \"environment\":    {    \"A\": -5,\"B\": +2.5,\"C\": -1e-3,\"D\": 0x1F,\"E\": "
              "1_000}\n"
              "}}\n");
    // A bare tuple.
    EXPECT_EQ(yaml_of("\nm.ssh_shutdown_cmds = 'a', 'b',"),
              "{\"ssh\": {\n  \"shutdown_cmds\":[   \"a\", \"b\",]\n}}\n");
}

TEST(SpecLiterals, KeysTheSidecarSetsAreLeftOutWithoutWarning) {
    std::vector<SettingsWarning> warnings;
    EXPECT_EQ(yaml_of("m.ssh_remote_dir = 'w'\nm.ssh_startup_cmds = compute()\n", &warnings,
                      {"remote_dir", "startup_cmds"}),
              "{\"ssh\": {\n}}\n");
    EXPECT_TRUE(warnings.empty());
}

TEST(SpecLiterals, EveryMixinKeyIsASettingsKey) {
    std::string spec;
    for (auto key : settings_detail::ssh_mixin_keys())
        spec += "m.ssh_" + std::string(key) + " = None\n";
    std::vector<SettingsWarning> warnings;
    std::string yaml = yaml_of(spec, &warnings);
    EXPECT_TRUE(warnings.empty());
    EXPECT_EQ(settings_detail::ssh_mixin_keys().size(), 7u);
    for (auto key : settings_detail::ssh_mixin_keys())
        EXPECT_NE(yaml.find("\"" + std::string(key) + "\":"), std::string::npos) << key;
}

TEST_F(SpecLiteralsTest, TheSpecOfMltksSshTest) {
    SshSettings s = load(R"(import mltk
my_model = mltk.MyModel()
my_model.ssh_remote_dir = "workspace"
mltk_model = my_model
mltk_model.ssh_create_venv = True
mltk_model.ssh_environment = dict(TEST="This is a test", CUDA_VISIBLE_DEVICES="-1")
mltk_model.ssh_startup_cmds = ["pip3 install tf_keras", "echo $TEST > ./test_startup_cmd.txt"]
mltk_model.ssh_upload_files = ["/abs/a.py|/tmp/x.py"]
mltk_model.ssh_download_files = ["./test_startup_cmd.txt|/tmp/out.txt"]
mltk_model.ssh_shutdown_cmds = ['echo "shutting down ..." > /tmp/f']
)");
    EXPECT_TRUE(warnings_.empty());
    EXPECT_EQ(s.remote_dir, "workspace");
    EXPECT_EQ(s.create_venv, true);
    EXPECT_EQ(s.environment, (Env{{"TEST", "This is a test"}, {"CUDA_VISIBLE_DEVICES", "-1"}}));
    EXPECT_EQ(s.startup_cmds,
              (Strings{"pip3 install tf_keras", "echo $TEST > ./test_startup_cmd.txt"}));
    EXPECT_EQ(s.upload_files, (Strings{"/abs/a.py|/tmp/x.py"}));
    EXPECT_EQ(s.download_files, (Strings{"./test_startup_cmd.txt|/tmp/out.txt"}));
    EXPECT_EQ(s.shutdown_cmds, (Strings{"echo \"shutting down ...\" > /tmp/f"}));
}

TEST_F(SpecLiteralsTest, StringForms) {
    SshSettings s = load(
        "m.ssh_startup_cmds = [\n"
        "    \"double\", 'single', \"\"\"triple\n"
        "line\"\"\", '''x'y''',\n"
        "    r'raw\\n', R\"C:\\dir\\\"\",  # comment, with ] and '\n"
        "    'esc\\t\\\\\\'\\\"\\n', \"a\" 'b'  # joined\n"
        "    \"c\",\n"
        "    u\"unicode \xC3\xA9\", \"\\x41\\u00e9\\U0001F600\\101\",\n"
        "    'keep \\d', 'cont\\\n"
        "inued', \"\",\n"
        "]\n");
    EXPECT_TRUE(warnings_.empty());
    EXPECT_EQ(s.startup_cmds, (Strings{"double", "single", "triple\nline", "x'y", "raw\\n",
                                       "C:\\dir\\\"", "esc\t\\'\"\n", "abc", "unicode \xC3\xA9",
                                       "A\xC3\xA9\xF0\x9F\x98\x80"
                                       "A",
                                       "keep \\d", "continued", ""}));
}

// A NUL cannot pass through a remote shell: refused as in a settings file, naming its place.
TEST_F(SpecLiteralsTest, ANulEscapeIsAnError) {
    try {
        load("m.ssh_startup_cmds = ['ok', 'a\\0b']\n");
        FAIL() << "a NUL was accepted";
    } catch (const mlt::Error& e) {
        EXPECT_NE(std::string(e.what()).find("NUL"), std::string::npos) << e.what();
        EXPECT_EQ(e.code(), mlt::exit_code::kUsage);
    }
}

TEST_F(SpecLiteralsTest, ParenthesesJoinStringsAcrossLines) {
    SshSettings s = load(
        "m.ssh_remote_dir = (\n    'a'\n    'b'  # c\n)\n"
        "m.ssh_startup_cmds = 'x', \\\n    'y'\n"
        "m.ssh_shutdown_cmds = ()\n");
    EXPECT_TRUE(warnings_.empty());
    EXPECT_EQ(s.remote_dir, "ab");
    EXPECT_EQ(s.startup_cmds, (Strings{"x", "y"}));
    EXPECT_TRUE(s.shutdown_cmds.empty());
}

TEST_F(SpecLiteralsTest, NumbersBooleansAndNoneInTheEnvironment) {
    SshSettings s = load(
        "m.ssh_environment = {\n"
        "    'Z': 1, \"B\": -2.5, 'C': True, 'D': False, 'E': None,\n"
        "    'F': 1e3, 'G': .5,  # trailing comma next\n"
        "}\n");
    EXPECT_TRUE(warnings_.empty());
    // Key order is the literal's order.
    EXPECT_EQ(s.environment, (Env{{"Z", "1"},
                                  {"B", "-2.5"},
                                  {"C", "true"},
                                  {"D", "false"},
                                  {"E", ""},
                                  {"F", "1e3"},
                                  {"G", ".5"}}));
}

TEST_F(SpecLiteralsTest, DictCallAndListEnvironment) {
    SshSettings s = load(
        "m.ssh_environment = dict(\n"
        "    A='1',  # one\n"
        "    B=dict(x=1)['x'] if False else '2',\n"
        ")\n"
        "m.ssh_environment = dict(\n    A='1',\n    B='2',\n)\n");
    // The first assignment is not a literal, but the last one counts.
    EXPECT_TRUE(warnings_.empty());
    EXPECT_EQ(s.environment, (Env{{"A", "1"}, {"B", "2"}}));
    s = load("m.ssh_environment = ['A=1', 'B=two words']\n");
    EXPECT_EQ(s.environment, (Env{{"A", "1"}, {"B", "two words"}}));
}

TEST_F(SpecLiteralsTest, NoneMeansNotSetAndNullsSetNothing) {
    SshSettings s = load("m.ssh_remote_dir = None\nm.ssh_create_venv = None\n", {},
                         "ssh:\n  remote_dir: ~/u\n  create_venv: true\n");
    EXPECT_TRUE(warnings_.empty());
    EXPECT_EQ(s.remote_dir, "~/u");
    EXPECT_EQ(s.create_venv, true);
}

TEST_F(SpecLiteralsTest, LastAssignmentWins) {
    SshSettings s = load("m.ssh_remote_dir = 'first'\nm.ssh_remote_dir = 'second'\n");
    EXPECT_EQ(s.remote_dir, "second");
    EXPECT_TRUE(warnings_.empty());
    // A later non-literal hides the earlier literal: mlt cannot know the value.
    EXPECT_EQ(only_warning("m.ssh_remote_dir = 'first'\nm.ssh_remote_dir = base + '/x'\n"),
              "2: ssh_remote_dir is not a literal mlt can read without running the spec "
              "(ignored); to get it exactly, install MLTK locally (mlt then loads the spec "
              "through it), or set remote_dir in the ssh: section of spec.ssh.yaml");
    SshSettings t = load("m.ssh_remote_dir = 'first'\nm.ssh_remote_dir = base + '/x'\n");
    EXPECT_EQ(t.remote_dir, ".");
}

TEST_F(SpecLiteralsTest, WhatIsNotALiteralGetsOneWarningWithItsLine) {
    const std::vector<std::string> not_literals = {
        "name",
        "f'{x}'",
        "F'x'",
        "b'x'",
        "rb'x'",
        "os.getenv('X')",
        "'a' + 'b'",
        "'%s' % x",
        "'{}'.format(1)",
        "['a'][0]",
        "'a' if c else 'b'",
        "[x for x in y]",
        "{'a', 'b'}",
        "dict(**d)",
        "dict([('a', 1)])",
        "dict",
        "{**d}",
        "1j",
        "017",
        "1__0",
        "-'a'",
        "'\\N{BULLET}'",
        "'\\x4'",
        "'\\ud800'",
        "'\xff'",
        "['a', 'b'",
        "'unclosed",
        "",
        "...",
        "lambda: 1",
        "['a'] * 2",
        "-True",
    };
    for (const std::string& expr : not_literals) {
        std::string spec =
            "import x\n\nm.ssh_startup_cmds = " + expr + "\nm.ssh_remote_dir = 'ok'\n";
        EXPECT_EQ(only_warning(spec),
                  "3: ssh_startup_cmds is not a literal mlt can read without running the spec "
                  "(ignored); to get it exactly, install MLTK locally (mlt then loads the spec "
                  "through it), or set startup_cmds in the ssh: section of spec.ssh.yaml")
            << expr;
        SshSettings s = load(spec);
        EXPECT_TRUE(s.startup_cmds.empty()) << expr;
    }
    // `+=` changes a value at run time.
    EXPECT_EQ(only_warning("m.ssh_startup_cmds = ['a']\nm.ssh_startup_cmds += ['b']\n"),
              "2: ssh_startup_cmds is not a literal mlt can read without running the spec "
              "(ignored); to get it exactly, install MLTK locally (mlt then loads the spec "
              "through it), or set startup_cmds in the ssh: section of spec.ssh.yaml");
}

TEST_F(SpecLiteralsTest, UnknownSshAttributesWarn) {
    SshSettings s = load("m.ssh_remote_dri = 'x'\nm.ssh_foo = compute()\nm.ssh_bar += 1\n");
    ASSERT_EQ(warnings_.size(), 3u);
    EXPECT_EQ(warnings_[0].line, 1);
    EXPECT_EQ(warnings_[0].column, 3);
    EXPECT_EQ(warnings_[0].message,
              "unknown SshMixin setting ssh_remote_dri (ignored); did you mean ssh_remote_dir?");
    EXPECT_EQ(warnings_[1].line, 2);
    EXPECT_EQ(warnings_[1].message, "unknown SshMixin setting ssh_foo (ignored)");
    EXPECT_EQ(warnings_[2].line, 3);
    EXPECT_EQ(s.remote_dir, ".");
}

TEST_F(SpecLiteralsTest, OnlyAssignmentsToANamesAttributeCount) {
    SshSettings s = load(R"('''Docs:
m.ssh_remote_dir = "in a docstring"
'''
# m.ssh_remote_dir = "in a comment"
ssh_remote_dir = "a plain name"
a.b.ssh_remote_dir = "an attribute's attribute"
print(m.ssh_remote_dir)
m.ssh_remote_dir == "a comparison"
m.ssh_startup_cmds.append("a call")
x = "m.ssh_create_venv = True"
m.ssh_create_venv = False; m.ssh_remote_dir = 'two on a line'
if True:
    self.ssh_shutdown_cmds = ['indented']
)");
    // Only the branch is worth a warning (test_config_spec_blocks.cpp).
    ASSERT_EQ(warnings_.size(), 1u);
    EXPECT_EQ(warnings_[0].line, 13);
    EXPECT_EQ(s.remote_dir, "two on a line");
    EXPECT_EQ(s.create_venv, false);
    EXPECT_TRUE(s.startup_cmds.empty());
    EXPECT_EQ(s.shutdown_cmds, (Strings{"indented"}));
}

TEST_F(SpecLiteralsTest, TypeErrorsNameTheSpecLine) {
    EXPECT_EQ(error_of("import mltk\n\nm.ssh_create_venv = \"maybe\"\n"),
              "spec.py:3:21: ssh.create_venv must be true or false, got 'maybe'");
    EXPECT_EQ(error_of("\nm.ssh_remote_dir = ''\n"),
              "spec.py:2:20: ssh.remote_dir must be a non-empty string, got ''");
    EXPECT_EQ(error_of("m.ssh_upload_files = [\n    'ok.txt',\n    ('a', 'b'),\n]\n"),
              "spec.py:3:5: ssh.upload_files entries must be strings, got a list");
    std::string e = error_of("m.ssh_download_files = [\n    'ok.txt',\n    '../up.txt',\n]\n");
    EXPECT_EQ(e.rfind("spec.py:3:5: ", 0), 0u) << e;
    e = error_of("m.ssh_environment = {'A': 1,\n  '1X': 2}\n");
    EXPECT_EQ(e.rfind("spec.py:2:3: ", 0), 0u) << e;
}

TEST_F(SpecLiteralsTest, SidecarWinsKeyByKeyOverSpecAndUser) {
    const std::string user =
        "ssh:\n"
        "  remote_dir: ~/user\n"
        "  startup_cmds: [u]\n"
        "  shutdown_cmds: [u]\n"
        "  environment: {A: u, B: u}\n";
    const std::string spec =
        "m.ssh_remote_dir = 'spec'\n"
        "m.ssh_create_venv = True\n"
        "m.ssh_startup_cmds = ['s']\n"
        "m.ssh_shutdown_cmds = ['s']\n"
        "m.ssh_environment = dict(B='s', C='s')\n"
        "m.ssh_upload_files = [base + '/x']\n";
    // The sidecar sets startup_cmds and remote_dir: the spec's are left out entirely, and the
    // spec's not-a-literal upload_files still warns.
    SshSettings s =
        load(spec, "ssh:\n  remote_dir: ~/side\n  startup_cmds: [m]\n  upload_files:\n", user);
    EXPECT_EQ(s.remote_dir, "~/side");
    EXPECT_EQ(s.create_venv, true);
    EXPECT_EQ(s.startup_cmds, (Strings{"u", "m"}));
    EXPECT_EQ(s.shutdown_cmds, (Strings{"u", "s"}));
    EXPECT_EQ(s.environment, (Env{{"A", "u"}, {"B", "s"}, {"C", "s"}}));
    ASSERT_EQ(warnings_.size(), 1u);
    EXPECT_EQ(warnings_[0].line, 6);

    // The environment merges per variable across every layer, the higher one winning (issue
    // 18: a sidecar's environment used to drop the spec's).
    s = load(spec, "ssh:\n  environment: {C: m}\n  upload_files: [a.txt]\n", user);
    EXPECT_EQ(s.environment, (Env{{"A", "u"}, {"B", "s"}, {"C", "m"}}));
    EXPECT_EQ(s.remote_dir, "spec");
    EXPECT_EQ(s.startup_cmds, (Strings{"u", "s"}));
    EXPECT_EQ(s.upload_files, (Strings{"a.txt"}));
    EXPECT_TRUE(warnings_.empty());
}

TEST_F(SpecLiteralsTest, SidecarEnvironmentMergesWithTheSpecs) {
    // The issue's reproduction: the job saw X but not TEST.
    SshSettings s =
        load("m.ssh_environment = dict(TEST=\"x\")\n", "ssh:\n  environment: {X: \"1\"}\n");
    EXPECT_EQ(s.environment, (Env{{"TEST", "x"}, {"X", "1"}}));
    EXPECT_TRUE(warnings_.empty());
}

TEST_F(SpecLiteralsTest, ASidecarTypeErrorIsReportedBeforeTheSpecIsRead) {
    SettingsSources sources;
    sources.spec_path = write("spec.py", "m.ssh_create_venv = 'maybe'\n");
    sources.model_settings_path = write("spec.ssh.yaml", "ssh:\n  sync_every: soon\n");
    try {
        load_settings(sources, &warnings_);
        ADD_FAILURE() << "no error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("spec.ssh.yaml:2:"), std::string::npos) << e.what();
    }
}

TEST_F(SpecLiteralsTest, MissingSpecIsFineADirectoryIsNot) {
    SettingsSources sources;
    sources.spec_path = dir_ + "/nope.py";
    EXPECT_EQ(load_settings(sources, &warnings_).remote_dir, ".");
    std::filesystem::create_directory(dir_ + "/dir.py");
    sources.spec_path = dir_ + "/dir.py";
    try {
        load_settings(sources, &warnings_);
        ADD_FAILURE() << "no error";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::config);
        EXPECT_EQ(std::string(e.what()), dir_ + "/dir.py is not a regular file");
    }
    if (geteuid() == 0) return;  // root reads anything
    sources.spec_path = write("locked.py", "m.ssh_remote_dir = 'x'\n");
    ASSERT_EQ(chmod(sources.spec_path.c_str(), 0), 0);
    try {
        load_settings(sources, &warnings_);
        ADD_FAILURE() << "no error";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::io);
    }
}

TEST_F(SpecLiteralsTest, LongKeysCrLfAndByteOrderMark) {
    const std::string name(1500, 'A');
    SshSettings s = load("\xEF\xBB\xBFm.ssh_environment = {'" + name +
                         "': 'x'}\r\nm.ssh_remote_dir = 'a\\\r\nb'\r\n");
    EXPECT_TRUE(warnings_.empty());
    EXPECT_EQ(s.environment, (Env{{name, "x"}}));
    EXPECT_EQ(s.remote_dir, "ab");
}

TEST_F(SpecLiteralsTest, GarbageNeverBreaksTheYaml) {
    // Whatever the spec holds, the YAML it turns into loads: errors are type errors, never
    // "malformed YAML" (which would blame mlt's own output on the user).
    std::mt19937 rng(1234);
    const std::string pythonish =
        "m.ssh_startup_cmds = environment dict( )[]{},:'\"\\#\n\r\t"
        "0123456789.-+eEjxrbfuTrueFalseNone=;*%\x80\xff\xc3\xa9";
    for (int round = 0; round < 300; ++round) {
        std::string spec;
        size_t length = rng() % 400;
        for (size_t i = 0; i < length; ++i) {
            spec += round % 3 == 0 ? static_cast<char>(rng() % 256)
                                   : pythonish[rng() % pythonish.size()];
        }
        if (round % 2) spec = "m.ssh_startup_cmds = [" + spec;
        try {
            load(spec);
        } catch (const Error& e) {
            EXPECT_EQ(std::string(e.what()).find("malformed YAML"), std::string::npos)
                << e.what() << "\nfor:\n"
                << spec;
        }
    }
}

TEST(SpecLiterals, DeepNestingIsNotALiteralAndDoesNotRecurseForever) {
    for (const char* open : {"[", "(", "{'a': ", "dict(a="}) {
        std::string deep;
        for (int i = 0; i < 100000; ++i) deep += open;
        std::vector<SettingsWarning> warnings;
        EXPECT_EQ(yaml_of("m.ssh_environment = " + deep, &warnings), "{\"ssh\": {\n}}\n");
        ASSERT_EQ(warnings.size(), 1u) << open;
        EXPECT_EQ(warnings[0].line, 1);
    }
    // Within the limit nesting is fine (the settings reader then judges the type).
    std::string nested = std::string(40, '[') + std::string(40, ']');
    std::vector<SettingsWarning> warnings;
    EXPECT_EQ(yaml_of("m.ssh_environment = " + nested, &warnings),
              "{\"ssh\": {\"environment\":    " + nested + "\n}}\n");
    EXPECT_TRUE(warnings.empty());
}

TEST(SpecLiterals, LargeFilesTakeLinearTime) {
    // 200k assignments and a 200k-item list; quadratic work would not finish in the timeout.
    std::string spec;
    for (int i = 0; i < 200000; ++i) spec += "m.ssh_remote_dir = 'dir" + std::to_string(i) + "'\n";
    spec += "m.ssh_startup_cmds = [";
    for (int i = 0; i < 200000; ++i) spec += "('a',), ";
    spec += "]\n";
    std::vector<SettingsWarning> warnings;
    std::string yaml = yaml_of(spec, &warnings);
    EXPECT_TRUE(warnings.empty());
    EXPECT_NE(yaml.find("\"dir199999\""), std::string::npos);
    EXPECT_EQ(yaml.find("\"dir199998\""), std::string::npos);
    EXPECT_EQ(std::count(yaml.begin(), yaml.end(), '\n'), 200002);
}

}  // namespace
}  // namespace mlt
