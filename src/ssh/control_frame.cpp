// The control shell's frames: the sh text of one, and the reader that finds its end in
// one output stream.
#include "control_frame.h"

#include <algorithm>

#include "mlt/util/error.h"
#include "mlt/util/shell.h"
#include "mlt/util/text.h"
#include "remote_scripts.h"

namespace mlt::ssh_detail {

void FrameStream::start(std::string prefix, const OutputSink* sink) {
    prefix_ = std::move(prefix);
    sink_ = sink;
    done_ = false;
    status_ = -1;
    std::string pending;
    pending.swap(held_);
    feed(pending.data(), pending.size());
}

void FrameStream::feed(const char* data, size_t len) {
    held_.append(data, len);
    // What is held: the next frame's bytes while the other stream's end is on its way
    // (sh prints both ends at once), or a marker's status line: much more is not sh's.
    if (held_.size() > kMaxCarried)
        throw remote_error("the control shell on its host sent more than " +
                               format_bytes(kMaxCarried) + " around the end of a command's output",
                           "a program on the host (its sh) may be broken or replaced");
    if (done_) return;  // the next frame's bytes: kept for start()
    const size_t at = held_.find(prefix_);
    if (at != std::string::npos) {
        emit(at);
        const size_t end = held_.find('\n', prefix_.size());
        if (end == std::string::npos) return;  // the status is still on its way
        const std::string_view text(held_.data() + prefix_.size(), end - prefix_.size());
        status_ = static_cast<int>(parse_decimal(trim(text), 0, 255).value_or(-1));
        done_ = true;
        held_.erase(0, end + 1);
        return;
    }
    // Hold back only a tail that could begin the marker (a few bytes ending in "m",
    // "ml", "mlt-..."): anything else goes out now, a line's final newline included, so
    // a streamed log line is complete on the terminal and in the local copy at once.
    size_t tail = std::min(held_.size(), prefix_.size() - 1);
    while (tail > 0 && held_.compare(held_.size() - tail, tail, prefix_, 0, tail) != 0) --tail;
    emit(held_.size() - tail);
}

void FrameStream::emit(size_t n) {
    if (n == 0) return;
    if (sink_ && *sink_) (*sink_)(std::string_view(held_.data(), n));
    held_.erase(0, n);
}

std::string marker_prefix(const std::string& token, uint64_t serial) {
    return token + "-" + std::to_string(serial) + " ";
}

std::string frame_end(const std::string& token, uint64_t serial) {
    const std::string mark = shell_quote(token + "-" + std::to_string(serial));
    return "printf '%s %d\\n' " + mark + " \"$?\"; printf '%s 0\\n' " + mark + " >&2\n";
}

std::string command_frame(const std::string& token, uint64_t serial, const std::string& command,
                          std::string_view input) {
    std::string text;
    if (input.empty())
        text += "( " + command + "\n) </dev/null\n";
    else
        text += "printf " + printf_literal(input) + " | ( " + command + "\n)\n";
    return text + frame_end(token, serial);
}

std::string go_line(const std::string& token, uint64_t serial) {
    return "go-" + token + "-" + std::to_string(serial);
}

std::string nogo_line(const std::string& token, uint64_t serial) {
    return "nogo-" + token + "-" + std::to_string(serial);
}

std::string chunk_header(const std::string& token, uint64_t serial, size_t n) {
    return token + "-" + std::to_string(serial) + " " + std::to_string(n) + "\n";
}

std::string streamed_frame(const std::string& token, uint64_t serial, const std::string& command) {
    // One command line: `)` and the end marker on the same line (see streamed_frame.sh).
    return "( " + shell_assignment("mlt_k", shell_quote(token + "-" + std::to_string(serial))) +
           shell_assignment("mlt_go", shell_quote(go_line(token, serial))) +
           shell_assignment("mlt_nogo", shell_quote(nogo_line(token, serial))) +
           shell_assignment("mlt_st", std::to_string(kNoStream)) +
           shell_assignment("mlt_cmd", shell_quote(command)) +
           std::string(scripts::ssh_streamed_frame) + "); " + frame_end(token, serial);
}

}  // namespace mlt::ssh_detail
