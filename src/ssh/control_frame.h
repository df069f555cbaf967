#pragma once
// The framing of the control shell (docs/remote-protocol.md, "The control shell"): the sh
// text that runs one command as a frame and marks its end on both streams, and the reader
// of one output stream that finds that end. Private to src/ssh/.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "mlt/ssh/session.h"

namespace mlt::ssh_detail {

// The most one output stream of the shell holds past the end of the frame being read: the
// replies of commands sent ahead, while the other stream's end marker is on its way.
constexpr size_t kMaxCarried = 32 * 1024 * 1024;

// One output stream of the shell, read frame by frame: passes a command's bytes on and stops
// at its end marker "<token>-<serial> <status>\n". The token is 128 random bits, so the
// marker needs no line of its own: output that does not end in a newline is followed by it
// directly. A tail that may be the start of the marker is held back until the next read
// tells; bytes after it belong to the next frame.
class FrameStream {
  public:
    // `carried`: what was read past the end of the frame before.
    explicit FrameStream(std::string carried) : held_(std::move(carried)) {}

    // Starts the next frame, whose end marker begins with `prefix` (marker_prefix()) and
    // whose output goes to `sink` (null or empty: dropped).
    void start(std::string prefix, const OutputSink* sink);

    // Takes the next bytes read. Throws mlt::Error (remote) when more than kMaxCarried
    // bytes are held (the shell is not sh).
    void feed(const char* data, size_t len);

    bool done() const { return done_; }
    // The frame's status from its end marker (0..255; -1 for anything else).
    int status() const { return status_; }
    // Once done: what came after the frame's end (the start of the next frame's reply).
    std::string take_rest() { return std::exchange(held_, {}); }

  private:
    void emit(size_t n);

    std::string prefix_;
    const OutputSink* sink_ = nullptr;
    std::string held_;
    bool done_ = false;
    int status_ = -1;
};

// The start of frame `serial`'s end marker, "<token>-<serial> ".
std::string marker_prefix(const std::string& token, uint64_t serial);

// The commands that end frame `serial`: its status on stdout, a marker on stderr.
std::string frame_end(const std::string& token, uint64_t serial);

// The text that runs `command` as frame `serial` of the control shell. The command runs in a
// subshell, so `cd`, `exit` and `exec` stay inside it; its stdin is `input` (carried in the
// text as a printf format) or /dev/null, never the frames that follow. The newline before
// `)` ends a trailing comment.
std::string command_frame(const std::string& token, uint64_t serial, const std::string& command,
                          std::string_view input);

// The text that runs `command` as frame `serial` with its stdin streamed after the text,
// in chunks (chunk_header, then that many bytes; a chunk of 0 ends it), as one command line
// (a shell that reads a byte at a time has all of it before it runs). The frame first checks
// that `head -c` reads no further than it writes (coreutils' does; BusyBox's may read
// ahead): then it prints go_line and passes the chunks' bytes to the command; else it prints
// nogo_line, reads nothing and ends with kNoStream. Anything but a clean end of the chunks
// (a header out of step, a reader that died) kills the shell, so that no byte of the data is
// ever read as a command. What the command leaves unread is read and dropped.
std::string streamed_frame(const std::string& token, uint64_t serial, const std::string& command);
// The first stdout line of a streamed frame (without its newline): go on, or none.
std::string go_line(const std::string& token, uint64_t serial);
std::string nogo_line(const std::string& token, uint64_t serial);
// The header of a chunk of `n` bytes of a streamed frame's input.
std::string chunk_header(const std::string& token, uint64_t serial, size_t n);
// The status of a streamed frame that said nogo_line.
constexpr int kNoStream = 125;

}  // namespace mlt::ssh_detail
