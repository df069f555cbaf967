// `mlt completion`: the script it prints, loaded in a bare bash (and checked by zsh when there
// is one), completes commands, options and the model names MODEL finds here.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness/files.h"
#include "harness/mlt_env.h"
#include "harness/temp_dir.h"

namespace mlt_test {
namespace {

using Words = std::vector<std::string>;

class CompletionTest : public ::testing::Test {
  protected:
    CompletionTest() : env_(dir_.file("home")) {
        make_dir(project_);
        write_file(project_ + "/my_model.py", "");
        write_file(project_ + "/other.py", "");
    }

    // The script `mlt completion SHELL` prints, saved in a file.
    std::string script(const std::string& shell) {
        const ProcessResult r = env_.run_mlt({"completion", shell});
        EXPECT_EQ(r.exit_code, 0) << describe(r);
        const std::string path = dir_.file("mlt." + shell);
        write_file(path, r.out);
        return path;
    }

    // What bash offers for the last of `words` (typed after the mlt under test) in `project_`:
    // the script is sourced in `bash --norc --noprofile`, COMP_WORDS and COMP_CWORD set as
    // bash sets them, the completion function called, and COMPREPLY printed.
    Words complete(const Words& words) {
        Words argv = {"bash",
                      "--norc",
                      "--noprofile",
                      "-c",
                      "cd \"$1\" && . \"$2\" && shift 2 && COMP_WORDS=(\"$@\") && "
                      "COMP_CWORD=$(($# - 1)) && _mlt && printf '%s\\n' \"${COMPREPLY[@]}\"",
                      "bash",
                      project_,
                      bash_script_,
                      env_.binary()};
        argv.insert(argv.end(), words.begin(), words.end());
        const ProcessResult r = env_.run(argv);
        EXPECT_EQ(r.exit_code, 0) << describe(r);
        Words offered;
        for (const std::string& line : split_lines(r.out))
            if (!line.empty()) offered.push_back(line);
        return offered;
    }

    TempDir dir_{"mlt-completion-"};
    MltEnv env_;
    std::string project_ = dir_.file("project");
    std::string bash_script_ = script("bash");
};

TEST_F(CompletionTest, BashCompletesCommandsOptionsAndModels) {
    EXPECT_EQ(complete({"s"}), (Words{"ssh", "ssh-keygen"}));
    EXPECT_EQ(complete({"ssh", "tr"}), Words{"train"});
    // In the order the commands are declared.
    EXPECT_EQ(complete({"ssh", "-h", "gpu", "-p", "22", "st"}), (Words{"stop", "status"}));
    EXPECT_EQ(complete({"ssh", "train", "--cl"}), Words{"--clean"});
    EXPECT_EQ(complete({"ssh", "-h", "gpu", "status", "my_model", "--ho"}), Words{"--host"});
    EXPECT_EQ(complete({"ssh-keygen", "k", "-t", ""}), (Words{"ed25519", "rsa"}));
    EXPECT_EQ(complete({"ssh", "train", "my_"}), Words{"my_model"});
    // After MODEL, train's words go to the training: no more models.
    EXPECT_EQ(complete({"ssh", "train", "my_model", "my_"}), Words{});
}

// Where MODEL looks: the current directory, model_paths and MLTK_MODEL_PATHS (with their
// subdirectories), as the lookup itself does.
TEST_F(CompletionTest, ModelsComeFromWhereModelLooks) {
    make_dir(dir_.file("zoo"));
    make_dir(dir_.file("zoo/deep"));
    write_file(dir_.file("zoo/deep/zoo_model.py"), "");
    make_dir(dir_.file("lib"));
    write_file(dir_.file("lib/lib_model.py"), "");
    env_.set("MLTK_MODEL_PATHS", dir_.file("zoo"));
    env_.write_settings("model_paths:\n  - " + dir_.file("lib") + "\n");
    EXPECT_EQ(complete({"ssh", "-h", "gpu", "logs", ""}),
              (Words{"lib_model", "my_model", "other", "zoo_model"}));
}

TEST_F(CompletionTest, ZshReadsItsScript) {
    // scripts/install-deps.sh installs zsh: without it this fails, as a missing tool should.
    const std::string path = script("zsh");
    const ProcessResult syntax = env_.run({"zsh", "-n", path});
    EXPECT_EQ(syntax.exit_code, 0) << describe(syntax);
    // compadd and compdef are zsh's completion system's: stand-ins print what was offered.
    const ProcessResult r =
        env_.run({"zsh", "-f", "-c",
                  "cd \"$1\" && compdef() { :; } && compadd() { shift; print -r -- \"$*\"; } && "
                  ". \"$2\" && shift 2 && words=(\"$@\") && CURRENT=$# && _mlt",
                  "zsh", project_, path, env_.binary(), "ssh", "train", "my_"});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_EQ(r.out, "my_model other\n");
}

}  // namespace
}  // namespace mlt_test
