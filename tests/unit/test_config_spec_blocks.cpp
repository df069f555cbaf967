// The literal reader (no MLTK here) on SshMixin assignments that may not run at import: inside
// functions, branches and the `__main__` guard (issue 18).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/spec_blocks.h"
#include "config/spec_literals.h"
#include "mlt/config/settings.h"

namespace mlt {
namespace {

using settings_detail::spec_literals_yaml;

struct Read {
    std::string yaml;
    std::vector<SettingsWarning> warnings;
};

Read read(const std::string& spec) {
    Read r;
    r.yaml = spec_literals_yaml("spec.py", spec, {}, &r.warnings);
    return r;
}

bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

TEST(SpecBlocks, ALiteralInAnIfBranchIsAppliedWithAWarningNamingItsLine) {
    Read r = read(
        "import os\n"
        "if os.environ.get('X') == '1':\n"
        "    m.ssh_remote_dir = 'teacher'\n"
        "else:\n"
        "    m.ssh_remote_dir = 'student'\n");
    EXPECT_TRUE(has(r.yaml, "\"student\"")) << r.yaml;
    ASSERT_EQ(r.warnings.size(), 1u);
    EXPECT_EQ(r.warnings[0].line, 5);
    EXPECT_EQ(r.warnings[0].message,
              "ssh_remote_dir is set in the else block at line 4: applied, but mlt cannot tell "
              "whether that line runs; to load the spec exactly, install MLTK locally, or set "
              "remote_dir in the ssh: section of spec.ssh.yaml");
}

TEST(SpecBlocks, ALiteralInAFunctionCalledAtImportIsAppliedWithAWarning) {
    Read r = read(
        "def prepare(train_teacher=None):\n"
        "    m.ssh_create_venv = False\n"
        "\n"
        "prepare()\n");
    EXPECT_TRUE(has(r.yaml, "false")) << r.yaml;
    ASSERT_EQ(r.warnings.size(), 1u);
    EXPECT_EQ(r.warnings[0].line, 2);
    EXPECT_TRUE(has(r.warnings[0].message,
                    "ssh_create_venv is set inside function prepare (line 1): applied"))
        << r.warnings[0].message;
}

TEST(SpecBlocks, ALiteralThatImportNeverReachesIsIgnoredWithAWarning) {
    Read r = read(
        "m.ssh_remote_dir = 'top'\n"
        "def never_called():\n"
        "    m.ssh_remote_dir = 'inside'\n"
        "if __name__ == '__main__':\n"
        "    m.ssh_create_venv = True\n");
    EXPECT_TRUE(has(r.yaml, "\"top\"")) << r.yaml;
    EXPECT_FALSE(has(r.yaml, "inside")) << r.yaml;
    EXPECT_FALSE(has(r.yaml, "create_venv")) << r.yaml;
    ASSERT_EQ(r.warnings.size(), 2u);
    EXPECT_EQ(r.warnings[0].line, 3);
    EXPECT_EQ(r.warnings[0].message,
              "ssh_remote_dir is set inside function never_called (line 2), which the spec "
              "never calls when MLTK imports it (ignored)");
    EXPECT_EQ(r.warnings[1].line, 5);
    EXPECT_TRUE(has(r.warnings[1].message, "under if __name__ == '__main__'"))
        << r.warnings[1].message;
}

TEST(SpecBlocks, ComputedValuesSayHowToGetThemExactly) {
    // keyword_spotting_on_off_v2's switch, trimmed: every value is computed.
    Read r = read(
        "def prepare_teacher_or_student_model(train_teacher=None):\n"
        "    if train_teacher is None:\n"
        "        train_teacher = os.environ.get('TRAIN_TEACHER', '0') == '1'\n"
        "    my_model.ssh_environment = dict(\n"
        "        TRAIN_TEACHER='1' if train_teacher else '0'\n"
        "    )\n"
        "    if train_teacher:\n"
        "        my_model.ssh_upload_files = [os.path.basename(teacher_h5_path)]\n"
        "    else:\n"
        "        my_model.ssh_upload_files = [os.path.basename(get_teacher_h5_path())]\n"
        "\n"
        "prepare_teacher_or_student_model()\n");
    ASSERT_EQ(r.warnings.size(), 2u);
    for (const auto& w : r.warnings)
        EXPECT_TRUE(has(w.message,
                        "install MLTK locally (mlt then loads the spec through it), "
                        "or set"))
            << w.message;
    EXPECT_EQ(r.warnings[0].line, 4);
    EXPECT_EQ(r.warnings[1].line, 10);
}

TEST(SpecBlocks, BracketsAndOneLinersKeepTheBlocksRight) {
    settings_detail::SpecBlocks blocks(
        "x = [\n"
        "1]\n"
        "if a: m.ssh_remote_dir = 'x'\n"
        "class M:\n"
        "    def setup(self):\n"
        "        self.ssh_remote_dir = 'y'\n"
        "m.ssh_remote_dir = 'z'\n");
    EXPECT_TRUE(blocks.at(2).branch.empty());
    EXPECT_EQ(blocks.at(3).branch, "if");
    EXPECT_TRUE(blocks.at(6).in_class);
    EXPECT_TRUE(blocks.reached_at_import(blocks.at(6)));
    EXPECT_TRUE(blocks.at(7).functions.empty());
    EXPECT_TRUE(blocks.at(7).branch.empty());
}

}  // namespace
}  // namespace mlt
