// The control shell's framing (src/ssh/control_frame.h): the frames run under dash and
// BusyBox's sh and pass shellcheck, and FrameStream finds each frame's output and status in
// the two streams however they are cut.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "sh_check.h"
#include "ssh/control_frame.h"

namespace mlt {
namespace {

using ssh_detail::command_frame;
using ssh_detail::frame_end;
using ssh_detail::FrameStream;
using ssh_detail::marker_prefix;

const std::string kToken = "mlt-0123456789abcdef0123456789abcdef";

// What a control shell gets: frame 0, then a command per frame (with its input).
std::string frames(const std::vector<std::pair<std::string, std::string>>& commands) {
    std::string text = "true\n" + frame_end(kToken, 0);
    for (size_t i = 0; i < commands.size(); ++i)
        text += command_frame(kToken, i + 1, commands[i].first, commands[i].second);
    return text;
}

// One frame as FrameStream reads it.
struct Frame {
    std::string output;
    int status = -1;
};

// The frames 0..count-1 of one stream, fed `cut` bytes at a time.
std::vector<Frame> read_frames(const std::string& stream, size_t count, size_t cut) {
    std::vector<Frame> out(count);
    FrameStream reader("");
    size_t at = 0;
    for (size_t n = 0; n < count; ++n) {
        const OutputSink sink = [&, n](std::string_view d) { out[n].output.append(d); };
        reader.start(marker_prefix(kToken, n), &sink);
        while (!reader.done() && at < stream.size()) {
            const size_t len = std::min(cut, stream.size() - at);
            reader.feed(stream.data() + at, len);
            at += len;
        }
        EXPECT_TRUE(reader.done()) << "frame " << n << " has no end in:\n" << stream;
        out[n].status = reader.status();
        reader = FrameStream(reader.take_rest());
    }
    return out;
}

// `text` run by `shell`, its stdout and stderr apart.
std::pair<std::string, std::string> run_apart(const std::vector<std::string>& shell,
                                              const std::string& text) {
    sh_check::ScriptFile script(text);
    sh_check::ScriptFile err("");
    std::vector<std::string> argv{"sh", "-c", "\"$@\" 2>\"$0\"", err.path()};
    argv.insert(argv.end(), shell.begin(), shell.end());
    argv.push_back(script.path());
    const sh_check::Run r = sh_check::run(argv);
    EXPECT_EQ(r.status, 0) << r.output;
    std::ostringstream err_text;
    err_text << std::ifstream(err.path()).rdbuf();
    return {r.output, err_text.str()};
}

const std::vector<std::pair<std::string, std::string>> kCommands{
    {"echo out; echo err >&2; exit 3", ""},   // exit stays in its subshell
    {"cat; cd / # a comment", ""},            // stdin is /dev/null; the comment ends
    {"cat", "two\nlines, 'quoted' 100%\\n"},  // input as printf's format
    {"pwd", ""},                              // the cd stayed in its frame
    {"printf 'no newline'", ""},
};

TEST(SshControlFrame, FramesRunUnderDashAndBusybox) {
    const std::string here = std::filesystem::current_path().string();
    for (const auto& shell : sh_check::shells()) {
        SCOPED_TRACE(sh_check::shell_name(shell));
        const auto [out, err] = run_apart(shell, frames(kCommands));
        // run_child hands lines over: every stream ends with a marker's newline.
        const auto o = read_frames(out, kCommands.size() + 1, 7);
        const auto e = read_frames(err, kCommands.size() + 1, 7);
        EXPECT_EQ(o[0].output, "");
        EXPECT_EQ(o[0].status, 0);
        EXPECT_EQ(o[1].output, "out\n");
        EXPECT_EQ(e[1].output, "err\n");
        EXPECT_EQ(o[1].status, 3);
        EXPECT_EQ(o[2].output, "");
        EXPECT_EQ(o[2].status, 0);
        EXPECT_EQ(o[3].output, "two\nlines, 'quoted' 100%\\n");
        EXPECT_EQ(o[4].output, here + "\n");
        EXPECT_EQ(o[5].output, "no newline");
        for (size_t n = 0; n < e.size(); ++n) EXPECT_EQ(e[n].status, 0) << "stderr of frame " << n;
    }
}

TEST(SshControlFrame, FramesPassShellcheck) {
    EXPECT_EQ(sh_check::shellcheck(frames(kCommands)), "");
}

TEST(SshControlFrame, AStreamIsCutAnywhere) {
    // Output that looks like the start of a marker, a marker cut in every place, and the next
    // frame's bytes behind the end: the same frames at every cut.
    const std::string stream = "ml\nmlt-x" + marker_prefix(kToken, 0) + "7\n" + "next " + kToken +
                               "-9 is no end\n" + marker_prefix(kToken, 1) + "0\n";
    for (size_t cut = 1; cut <= stream.size(); ++cut) {
        const auto f = read_frames(stream, 2, cut);
        EXPECT_EQ(f[0].output, "ml\nmlt-x") << "cut " << cut;
        EXPECT_EQ(f[0].status, 7) << "cut " << cut;
        EXPECT_EQ(f[1].output, "next " + kToken + "-9 is no end\n") << "cut " << cut;
        EXPECT_EQ(f[1].status, 0) << "cut " << cut;
    }
}

TEST(SshControlFrame, AStatusThatIsNoNumberIsMinusOne) {
    const auto f = read_frames(marker_prefix(kToken, 0) + "x\n", 1, 64);
    EXPECT_EQ(f[0].status, -1);
}

}  // namespace
}  // namespace mlt
