// The channel listener's frames (listener_frames.h).
#include "listener_frames.h"

#include <algorithm>

#include "mlt/util/error.h"

namespace mlt::ssh_detail {

namespace {

uint32_t big_endian(std::string_view four) {
    uint32_t v = 0;
    for (const char c : four) v = (v << 8) | static_cast<unsigned char>(c);
    return v;
}

}  // namespace

std::string listener_header(const std::string& token, const std::string& command) {
    return token + " " + std::to_string(command.size()) + "\n" + command;
}

void ListenerFrames::feed(std::string_view data) {
    const auto broken = [this](const std::string& what) {
        return remote_error("the channel listener on " + display_ + " " + what,
                            "a program on the host may be broken or replaced; run with -v");
    };
    while (!data.empty()) {
        if (ended_) throw broken("sent more after the command's status");
        if (left_ > 0) {
            const size_t n = std::min<size_t>(left_, data.size());
            const OutputSink& sink = type_ == 'o' ? on_stdout_ : on_stderr_;
            if (sink) sink(data.substr(0, n));
            left_ -= static_cast<uint32_t>(n);
            data.remove_prefix(n);
            continue;
        }
        const size_t n = std::min<size_t>(5 - head_.size(), data.size());
        head_.append(data.substr(0, n));
        data.remove_prefix(n);
        if (head_.size() < 5) return;
        const char type = head_[0];
        const uint32_t value = big_endian(std::string_view(head_).substr(1));
        head_.clear();
        if (type == 'x') {
            ended_ = true;
            status_ = static_cast<int32_t>(value);
            if (status_ < -1 || status_ > 255) throw broken("sent an exit status out of range");
        } else if (type == 'o' || type == 'e') {
            if (value == 0 || value > kMaxFrame) throw broken("sent a frame of a wrong size");
            type_ = type;
            left_ = value;
        } else {
            throw broken("sent a frame of an unknown type");
        }
    }
}

}  // namespace mlt::ssh_detail
