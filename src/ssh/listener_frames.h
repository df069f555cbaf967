#pragma once
// What the channel listener (sh/channel_listener.sh) sends back on one channel: the command's
// stdout and stderr in frames, then its exit status (docs/remote-protocol.md, "Channels
// without a login"). Private to src/ssh/.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "mlt/ssh/remote.h"

namespace mlt::ssh_detail {

// The header a channel to the listener starts with: the token, the command's length, and
// the command; its stdin follows.
std::string listener_header(const std::string& token, const std::string& command);

// Cuts a listener's byte stream into its frames: "o" and "e" go to their sinks as they come,
// "x" is the exit status. A frame longer than kMaxFrame, an unknown type or anything after
// the status is an error (remote): the host is not trusted to frame its bytes.
class ListenerFrames {
  public:
    static constexpr uint32_t kMaxFrame = 1024 * 1024;
    ListenerFrames(const OutputSink& on_stdout, const OutputSink& on_stderr, std::string display)
        : on_stdout_(on_stdout), on_stderr_(on_stderr), display_(std::move(display)) {}
    void feed(std::string_view data);
    // Whether the status came.
    bool ended() const { return ended_; }
    // The status (-1: killed by a signal, or none came).
    int status() const { return status_; }
    // Bytes of a frame still expected: the stream ended mid-frame when nonzero at its end.
    bool mid_frame() const { return !head_.empty() || left_ > 0; }

  private:
    const OutputSink& on_stdout_;
    const OutputSink& on_stderr_;
    std::string display_;
    std::string head_;   // the type byte and length read so far (up to 5 bytes)
    char type_ = 0;      // the frame being read: 'o' or 'e'
    uint32_t left_ = 0;  // its bytes not read yet
    bool ended_ = false;
    int status_ = -1;
};

}  // namespace mlt::ssh_detail
