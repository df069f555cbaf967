// ShellStream: a job whose input streams through the control shell as a frame of it, in
// chunks, instead of over an exec channel of its own (which costs a login on the host).
// docs/remote-protocol.md, "Streams through the control shell".

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include "control_frame.h"
#include "job_driver.h"
#include "mlt/util/text.h"
#include "session_impl.h"

namespace mlt::ssh_detail {

namespace {

// The input of one chunk at most: a `head -c` a chunk on the host.
constexpr size_t kStreamChunk = 1024 * 1024;

class ShellStream : public JobDriver {
  public:
    ShellStream(ssh_session s, Liveness& live, const std::string& display, ControlShell& sh,
                const StreamJob& job, FloorCheck& floor)
        : s_(s),
          live_(live),
          display_(display),
          sh_(sh),
          job_(job),
          serial_(++sh.serial),
          floor_(job.data_stream.empty() ? nullptr : &floor),
          taken_(job.on_taken),
          out_(std::exchange(sh.out_rest, {})),
          err_(std::exchange(sh.err_rest, {})),
          to_out_([this](std::string_view d) { stdout_bytes(d); }),
          to_err_(job.on_stderr) {
        out_.start(marker_prefix(sh.token, serial_), &to_out_);
        err_.start(marker_prefix(sh.token, serial_), &to_err_);
        const std::string text = streamed_frame(sh.token, serial_, job.command);
        spdlog::trace("shell on {} (streamed): {}", display_, job.command);
        try {
            write_all(s_, live_, sh.channel.get(), text.data(), text.size(), display_);
        } catch (...) {
            drop_shell(sh);  // a frame written in part: the shell is out of step
            throw;
        }
    }

    ~ShellStream() override {
        // A frame cut short (an error, a signal): its rest would end up in the next command's
        // output, and its input was not ended.
        if (!done_) drop_shell(sh_);
    }

    bool done() const override { return done_; }
    bool data() const override { return floor_ != nullptr; }
    bool sending() const override { return sending_; }
    int exit_status() const override { return status_; }
    bool refused() const override { return refused_; }
    bool holds_channel() const override { return false; }  // the control shell's

    bool send() override {
        if (!going_ || !sending_ || done_) return false;
        ssh_channel ch = sh_.channel.get();
        if (at_ == pending_.size() && !fill()) return false;
        const uint32_t window = ssh_channel_window_size(ch);
        taken_.window(window);
        if (window == 0) return false;
        const uint32_t len = static_cast<uint32_t>(std::min<size_t>(window, pending_.size() - at_));
        const int n = ssh_channel_write(ch, pending_.data() + at_, len);
        if (n == SSH_ERROR) {
            // The shell ended (killed when its stream went out of step): its close and status
            // are read next, as for a command that stopped reading.
            if (!ssh_is_connected(s_)) throw channel_error(s_, "cannot send input to " + display_);
            spdlog::debug("a stream through the control shell on {} stopped: {}", display_,
                          last_error(s_));
            sending_ = false;
            return false;
        }
        at_ += static_cast<size_t>(n);
        // What went of the chunk's bytes (its headers counted as nothing).
        const size_t data_at = std::min(at_ > header_ ? at_ - header_ : 0, payload_);
        if (data_at > counted_) {
            taken_.wrote(data_at - counted_);
            if (floor_) floor_->moved(data_at - counted_);
            counted_ = data_at;
        }
        if (at_ == pending_.size() && ended_) sending_ = false;  // the chunk of 0 went
        return n > 0;
    }

    bool receive(ReadBuffer& buf, int wait_ms) override {
        size_t got = 0;
        const OutputSink feed_out = [this](std::string_view d) { out_.feed(d.data(), d.size()); };
        const OutputSink feed_err = [this](std::string_view d) { err_.feed(d.data(), d.size()); };
        const bool drained = read_turn(s_, live_, sh_.channel.get(), buf, wait_ms, feed_out,
                                       feed_err, display_, &got);
        if (out_.done() && err_.done()) {
            sh_.out_rest = out_.take_rest();
            sh_.err_rest = err_.take_rest();
            status_ = out_.status();
            finish();
        } else if (drained) {
            // sh itself ended (killed when its input went out of step): dropped, and the
            // session's later streams take channels of their own.
            status_ = exit_status_of(s_, live_, sh_.channel.get(), display_);
            spdlog::debug(
                "the control shell on {} ended during a stream (exit status {}); "
                "streams go over channels of their own",
                display_, status_);
            drop_shell(sh_);
            sh_.no_stream = true;
            finish();
        }
        return got > 0;
    }

  private:
    // The frame's stdout: its first line says whether the input may go.
    void stdout_bytes(std::string_view d) {
        if (!going_ && !refused_) {
            first_.append(d);
            const size_t nl = first_.find('\n');
            const bool long_line = nl == std::string::npos && first_.size() > 256;
            if (nl == std::string::npos && !long_line) return;
            const std::string line = long_line ? std::string() : first_.substr(0, nl);
            spdlog::trace("the stream's frame on {} says: {}", display_, printable(line));
            if (line == go_line(sh_.token, serial_)) {
                going_ = true;
            } else if (line == nogo_line(sh_.token, serial_)) {
                refused_ = true;
                sh_.no_stream = true;
                spdlog::debug("{}: its head -c reads ahead; streams go over channels of their own",
                              display_);
            } else {
                throw remote_error("the control shell on " + display_ +
                                   " answered a stream with something else");
            }
            const std::string rest = first_.substr(nl + 1);
            first_.clear();
            if (!rest.empty()) pass(rest);
            return;
        }
        pass(d);
    }

    void pass(std::string_view d) {
        if (floor_) floor_->moved(d.size());
        if (job_.on_stdout) job_.on_stdout(d);
    }

    // The next chunk from the job's input; false when none is left to send.
    bool fill() {
        if (ended_) return false;
        std::string data(kStreamChunk, '\0');
        size_t n = 0;
        while (n < data.size() && job_.input) {
            const size_t got = job_.input(data.data() + n, data.size() - n);
            if (got == 0) {
                ended_ = true;
                break;
            }
            n += got;
        }
        if (!job_.input) ended_ = true;
        data.resize(n);
        std::string header = chunk_header(sh_.token, serial_, n);
        if (ended_ && n > 0) data += chunk_header(sh_.token, serial_, 0);  // and the end
        header_ = header.size();
        payload_ = n;
        pending_ = std::move(header) + data;
        at_ = 0;
        counted_ = 0;
        return true;
    }

    void finish() {
        done_ = true;
        sending_ = false;
        taken_.end();
    }

    ssh_session s_;
    Liveness& live_;
    const std::string& display_;
    ControlShell& sh_;
    const StreamJob& job_;
    const uint64_t serial_;
    FloorCheck* floor_;
    TakenCount taken_;
    FrameStream out_, err_;
    const OutputSink to_out_;
    const OutputSink& to_err_;
    std::string first_;  // the first stdout line, until it is whole
    std::string pending_;
    size_t at_ = 0, header_ = 0, payload_ = 0, counted_ = 0;
    bool going_ = false, refused_ = false, sending_ = true, ended_ = false, done_ = false;
    int status_ = -1;
};

}  // namespace

void TakenCount::window(uint32_t window) {
    if (!on_taken_) return;
    most_window_ = std::max<uint64_t>(most_window_, window);
    const uint64_t in_flight = std::min(most_window_ - window, written_);
    if (written_ - in_flight > taken_) {
        on_taken_(written_ - in_flight - taken_);
        taken_ = written_ - in_flight;
    }
}

void TakenCount::end() {
    if (on_taken_ && written_ > taken_) on_taken_(written_ - taken_);
    taken_ = written_;
}

std::unique_ptr<JobDriver> shell_stream(ssh_session s, Liveness& live, const std::string& display,
                                        ControlShell& shell, const StreamJob& job,
                                        FloorCheck& floor) {
    return std::make_unique<ShellStream>(s, live, display, shell, job, floor);
}

bool usable_for_stream(const ControlShell& shell) {
    return shell.channel && !shell.unavailable && !shell.refusal && !shell.no_stream &&
           shell.ahead.empty() && shell.unasked.empty();
}

}  // namespace mlt::ssh_detail
