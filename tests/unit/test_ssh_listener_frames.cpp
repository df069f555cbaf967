// The channel listener's frames (src/ssh/listener_frames.h): a command's stdout, stderr and
// status come out whole however the stream is cut, and a stream that a broken or hostile
// listener sends wrong is an error, never output.
#include <gtest/gtest.h>

#include <string>

#include "mlt/util/error.h"
#include "ssh/listener_frames.h"

namespace mlt {
namespace {

using ssh_detail::listener_header;
using ssh_detail::ListenerFrames;

std::string frame(char type, const std::string& bytes) {
    const auto n = static_cast<uint32_t>(bytes.size());
    std::string f(1, type);
    for (int shift = 24; shift >= 0; shift -= 8) f += static_cast<char>((n >> shift) & 0xff);
    return f + bytes;
}

std::string status(int32_t code) {
    const auto n = static_cast<uint32_t>(code);
    std::string f = "x";
    for (int shift = 24; shift >= 0; shift -= 8) f += static_cast<char>((n >> shift) & 0xff);
    return f;
}

struct Read {
    std::string out, err;
    bool ended = false;
    int status = -1;
};

// Feeds `stream` in pieces of `piece` bytes.
Read read_in_pieces(const std::string& stream, size_t piece) {
    Read r;
    const OutputSink out = [&](std::string_view d) { r.out.append(d); };
    const OutputSink err = [&](std::string_view d) { r.err.append(d); };
    ListenerFrames frames(out, err, "u@h:22");
    for (size_t at = 0; at < stream.size(); at += piece)
        frames.feed(std::string_view(stream).substr(at, piece));
    r.ended = frames.ended();
    r.status = frames.status();
    EXPECT_FALSE(frames.mid_frame());
    return r;
}

TEST(ListenerFrames, OutputErrorsAndStatusComeOutWholeHoweverTheStreamIsCut) {
    const std::string stream = frame('o', "hello\n") + frame('e', "warn\n") +
                               frame('o', std::string(70000, 'z')) + status(3);
    for (size_t piece : {1u, 2u, 5u, 7u, 4096u, 1u << 20}) {
        const Read r = read_in_pieces(stream, piece);
        EXPECT_EQ(r.out, "hello\n" + std::string(70000, 'z')) << piece;
        EXPECT_EQ(r.err, "warn\n") << piece;
        EXPECT_TRUE(r.ended) << piece;
        EXPECT_EQ(r.status, 3) << piece;
    }
}

TEST(ListenerFrames, ASignalIsMinusOneAndNoStatusIsNoEnd) {
    EXPECT_EQ(read_in_pieces(status(-1), 1).status, -1);
    EXPECT_TRUE(read_in_pieces(status(-1), 1).ended);
    const Read cut = read_in_pieces(frame('o', "partial"), 3);
    EXPECT_FALSE(cut.ended);
    EXPECT_EQ(cut.status, -1);
    const OutputSink none;
    ListenerFrames mid(none, none, "u@h:22");
    mid.feed(frame('o', "abc").substr(0, 6));
    EXPECT_TRUE(mid.mid_frame());
}

TEST(ListenerFrames, AStreamFramedWrongIsAnErrorNotOutput) {
    const OutputSink none;
    const auto fails = [&](const std::string& stream) {
        ListenerFrames frames(none, none, "u@h:22");
        try {
            frames.feed(stream);
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::remote);
            EXPECT_NE(std::string(e.what()).find("channel listener on u@h:22"), std::string::npos)
                << e.what();
            return true;
        }
        return false;
    };
    EXPECT_TRUE(fails(std::string("q\0\0\0\1a", 6)));         // an unknown type
    EXPECT_TRUE(fails(frame('o', "")));                       // an empty frame
    EXPECT_TRUE(fails(std::string("o\x7f\xff\xff\xff", 5)));  // a frame too long
    EXPECT_TRUE(fails(status(0) + frame('o', "late")));       // output after the end
    EXPECT_TRUE(fails(status(256)));                          // no exit status
    EXPECT_TRUE(fails(status(-2)));
    EXPECT_FALSE(fails(frame('o', std::string(ListenerFrames::kMaxFrame, 'a'))));
}

TEST(ListenerFrames, TheHeaderNamesTheTokenAndTheCommandsLength) {
    EXPECT_EQ(listener_header("tok", "echo hi\n"), "tok 8\necho hi\n");
}

}  // namespace
}  // namespace mlt
