// The remote sh scripts embedded from src/*/sh/*.sh (remote_scripts.h): each parses under
// dash and BusyBox's sh and passes shellcheck as POSIX sh. What each script does is tested
// beside the code that uses it.
#include <gtest/gtest.h>

#include <string>

#include "remote_scripts.h"
#include "sh_check.h"

namespace mlt {
namespace {

TEST(RemoteScripts, EveryScriptIsEmbedded) {
    // Two scripts at least (the job's functions); each has text once comments are stripped.
    ASSERT_GE(scripts::all().size(), 2u);
    for (const auto& [name, text] : scripts::all()) {
        EXPECT_FALSE(text.empty()) << name;
        EXPECT_EQ(text.find("\n#"), std::string_view::npos)
            << name << ": full-line comments are stripped when embedded";
    }
}

TEST(RemoteScripts, EveryScriptParsesUnderDashAndBusybox) {
    for (const auto& [name, text] : scripts::all())
        for (const auto& shell : sh_check::shells())
            EXPECT_EQ(sh_check::syntax_errors(shell, std::string(text)), "")
                << name << " under " << sh_check::shell_name(shell);
}

TEST(RemoteScripts, EveryScriptPassesShellcheck) {
    // SC2154 (a variable used but never assigned): a script's inputs are assigned by the
    // command that carries it, which the rendered commands' own check sees whole.
    for (const auto& [name, text] : scripts::all())
        EXPECT_EQ(sh_check::shellcheck(std::string(text), "SC2154"), "") << name;
}

TEST(RemoteScripts, ShellcheckFindsAFault) {
    // The check can fail: an unquoted expansion is reported.
    EXPECT_NE(sh_check::shellcheck("f=$1\nrm $f\n"), "");
    EXPECT_NE(sh_check::syntax_errors(sh_check::shells().front(), "if true; then\n"), "");
}

}  // namespace
}  // namespace mlt
