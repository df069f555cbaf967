// Remote commands over exec channels.

#include <poll.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "internal.h"
#include "mlt/util/interrupt.h"

namespace mlt {

using namespace ssh_detail;

namespace ssh_detail {

Error channel_error(ssh_session s, const std::string& what) {
    if (ssh_is_connected(s))
        return remote_error(what + ": " + last_error(s), "run with -v for details");
    return Error(ErrorKind::disconnected, what + ": " + last_error(s), "the connection was lost");
}

namespace {

// Sets a session non-blocking for as long as it lives: a call then sends its request and
// returns SSH_AGAIN instead of waiting for the answer.
class NonBlocking {
  public:
    explicit NonBlocking(ssh_session s) : s_(s), was_(ssh_is_blocking(s)) {
        ssh_set_blocking(s, 0);
    }
    ~NonBlocking() { ssh_set_blocking(s_, was_); }
    NonBlocking(const NonBlocking&) = delete;
    NonBlocking& operator=(const NonBlocking&) = delete;

  private:
    ssh_session s_;
    int was_;
};

}  // namespace

// A channel read with a timeout would not do: it returns on channel data only, so a window
// adjustment arriving first would still cost the whole timeout (a 1 GiB upload shuts sshd's
// 2 MiB window about 900 times).
void wait_for_server(ssh_session s, int timeout_ms) {
    pollfd p{ssh_get_fd(s), POLLIN, 0};
    if (p.fd < 0) return;
    while (::poll(&p, 1, timeout_ms) < 0 && errno == EINTR) {
    }
}

void write_all(ssh_session s, Liveness& live, ssh_channel ch, const char* data, size_t len,
               const std::string& display) {
    size_t sent = 0;
    while (sent < len) {
        int n = 0;
        if (ssh_channel_window_size(ch) == 0) {
            // A blocking write would wait for the window up to the call timeout (5 s), deaf
            // to signals: wait in short turns, and let a write that does not block take the
            // window adjustment in (and send what it allows).
            wait_for_server(s, kPollMs);
            NonBlocking polling(s);
            n = ssh_channel_write(ch, data + sent, static_cast<uint32_t>(len - sent));
        } else {
            // Within the window, a write only waits for the socket: a silent link is told
            // from a slow reader by the keepalives.
            const size_t room = std::min<size_t>(len - sent, ssh_channel_window_size(ch));
            n = ssh_channel_write(ch, data + sent, static_cast<uint32_t>(room));
        }
        if (n == SSH_ERROR) throw channel_error(s, "cannot send input to " + display);
        if (n > 0) sent += static_cast<size_t>(n);
        live.check(s, display);
        throw_if_interrupted();
    }
}

ChannelPtr open_ahead(ssh_session s) {
    ChannelPtr channel(ssh_channel_new(s));
    if (!channel) return nullptr;
    int rc;
    {
        NonBlocking sending(s);
        rc = ssh_channel_open_session(channel.get());
    }
    return rc == SSH_OK || rc == SSH_AGAIN ? std::move(channel) : nullptr;
}

ChannelPtr open_exec(ssh_session s, Liveness& live, const std::string& command,
                     const std::string& display, std::string_view first_input, ChannelPtr opening) {
    // An open sent ahead is no measure of the link: its answer waited for the caller.
    const bool measured = !opening;
    ChannelPtr channel = opening ? std::move(opening) : ChannelPtr(ssh_channel_new(s));
    if (!channel) throw channel_error(s, "cannot create a channel to " + display);
    // Both requests wait for the server's answer; SSH_AGAIN means the call timeout passed
    // first, and the same call continues where it was (also an open sent ahead).
    int rc;
    const auto asked = std::chrono::steady_clock::now();
    while ((rc = ssh_channel_open_session(channel.get())) == SSH_AGAIN) live.check(s, display);
    if (rc != SSH_OK) throw channel_error(s, "cannot open a channel to " + display);
    // sshd answers an open at once: about one round trip of the link.
    if (measured) live.saw_reply(asked);
    spdlog::trace("exec on {}: {}", display, command);
    if (!first_input.empty()) {
        // The request goes out without waiting for its answer (a call that does not block
        // returns SSH_AGAIN once it is sent), and the input is written as soon as it can go:
        // sshd gives a session channel a window of 0 until its command starts, and opens it
        // just before it answers, so the input travels while the login shell starts (libssh
        // waits that round trip for the window). The same call then waits for the answer.
        {
            NonBlocking sending(s);
            rc = ssh_channel_request_exec(channel.get(), command.c_str());
        }
        if (rc == SSH_ERROR) throw channel_error(s, "cannot start a remote command on " + display);
        try {
            write_all(s, live, channel.get(), first_input.data(), first_input.size(), display);
        } catch (const Error& e) {
            // The command ended before it took its input (a ForceCommand that runs something
            // else and exits): the caller sees the channel end. A lost link or a signal goes up.
            if (e.kind() != ErrorKind::remote) throw;
            spdlog::debug("{}", e.what());
        }
        if (rc == SSH_OK) return channel;
    }
    while ((rc = ssh_channel_request_exec(channel.get(), command.c_str())) == SSH_AGAIN)
        live.check(s, display);
    if (rc != SSH_OK) throw channel_error(s, "cannot start a remote command on " + display);
    return channel;
}

std::vector<StartedExec> open_execs(ssh_session s, Liveness& live,
                                    const std::vector<std::string>& commands,
                                    const std::string& display, std::optional<Error>& refused) {
    std::vector<ChannelPtr> channels;
    // What each open said when it was sent: its answer (a refusal too) may already have come
    // within the call, while it read the answers to the opens before it.
    std::vector<int> said;
    const auto asked = std::chrono::steady_clock::now();
    {
        NonBlocking sending(s);
        for (size_t i = 0; i < commands.size(); ++i) {
            channels.emplace_back(ssh_channel_new(s));
            if (!channels.back()) throw channel_error(s, "cannot create a channel to " + display);
            said.push_back(ssh_channel_open_session(channels.back().get()));
        }
    }
    // Every answer is awaited, also behind a refusal: a channel is closed only once its
    // open is answered, and no command has run on those behind it. A lost link shows here
    // as a failed open of a link that is gone (channel_error's kind).
    size_t opened = 0;
    for (size_t i = 0; i < channels.size(); ++i) {
        int rc = said[i];
        while (rc == SSH_AGAIN) {
            live.check(s, display);
            rc = ssh_channel_open_session(channels[i].get());
        }
        if (i == 0) live.saw_reply(asked);  // sshd answers an open at once
        if (rc != SSH_OK && !refused) {
            refused = channel_error(s, "cannot open a channel to " + display);
            if (refused->kind() != ErrorKind::remote) throw *refused;
        }
        if (!refused) ++opened;
    }
    channels.resize(opened);
    // Each exec request goes out, its answer taken later (exec_request).
    std::vector<StartedExec> started;
    for (size_t i = 0; i < channels.size(); ++i) {
        spdlog::trace("exec on {}: {}", display, commands[i]);
        StartedExec& exec = started.emplace_back();
        exec.channel = std::move(channels[i]);
        exec_request(s, exec.channel.get(), exec.answer, commands[i], display);
    }
    return started;
}

void exec_request(ssh_session s, ssh_channel ch, int& answer, const std::string& command,
                  const std::string& display) {
    if (answer != SSH_AGAIN) return;
    {
        NonBlocking sending(s);
        answer = ssh_channel_request_exec(ch, command.c_str());
    }
    if (answer != SSH_OK && answer != SSH_AGAIN)
        throw channel_error(s, "cannot start a remote command on " + display);
}

int exit_status_of(ssh_session s, Liveness& live, ssh_channel ch, const std::string& display) {
    for (;;) {
        // Takes in what has come, without waiting (a blocking call would wait up to the call
        // timeout, deaf to signals); -1 before the close arrived means "not yet", after it
        // "none was sent".
        int status;
        {
            NonBlocking polling(s);
            status = ssh_channel_get_exit_status(ch);
        }
        if (status != -1 || ssh_channel_is_closed(ch)) return status;
        if (!ssh_is_connected(s)) throw channel_error(s, "lost the connection to " + display);
        live.check(s, display);
        throw_if_interrupted();
        wait_for_server(s, kPollMs);
    }
}

size_t read_size(const Liveness& live) {
    if (live.fastest_reply_s < 0) return kReadChunk;
    const double bytes = live.fastest_reply_s * kWindowRate;
    return static_cast<size_t>(
        std::clamp(bytes, static_cast<double>(kMinReadChunk), static_cast<double>(kReadChunk)));
}

bool read_turn(ssh_session s, Liveness& live, ssh_channel ch, ReadBuffer& buf, int wait_ms,
               const OutputSink& on_stdout, const OutputSink& on_stderr, const std::string& display,
               size_t* got) {
    const auto size = static_cast<uint32_t>(std::min(buf.size(), read_size(live)));
    // Waits (up to wait_ms) for anything on either stream, then takes what has arrived: a
    // read of `size` with no wait grows the window to `size` without waiting to fill it.
    if (wait_ms > 0 && ssh_channel_poll(ch, 1) <= 0) ssh_channel_poll_timeout(ch, wait_ms, 0);
    int n = ssh_channel_read_timeout(ch, buf.data(), size, 0, 0);
    if (n == SSH_ERROR) throw channel_error(s, "lost the output of a remote command");
    if (n == SSH_EOF || n == SSH_AGAIN) n = 0;  // drained and closed; or nothing in time
    if (n > 0 && on_stdout) on_stdout(std::string_view(buf.data(), static_cast<size_t>(n)));
    int e = ssh_channel_read_nonblocking(ch, buf.data(), size, 1);
    if (e == SSH_ERROR) throw channel_error(s, "lost the output of a remote command");
    if (e == SSH_EOF || e == SSH_AGAIN) e = 0;
    if (e > 0 && on_stderr) on_stderr(std::string_view(buf.data(), static_cast<size_t>(e)));
    if (got) *got = static_cast<size_t>(n) + static_cast<size_t>(e);
    // A lost connection also reads as a closed channel: it is an error, not an end.
    if (!ssh_is_connected(s)) throw channel_error(s, "lost the connection to " + display);
    live.check(s, display);
    throw_if_interrupted();
    // Both streams are drained only when a final read finds nothing on either.
    return n == 0 && e == 0 && (ssh_channel_is_eof(ch) || ssh_channel_is_closed(ch)) &&
           ssh_channel_poll(ch, 0) <= 0 && ssh_channel_poll(ch, 1) <= 0;
}

}  // namespace ssh_detail

namespace {

// A command of ours that moves no data at all for this long, on a link that answers, is
// given up.
constexpr std::chrono::seconds kNoProgressDeadline{600};

// A refused channel open, when no channel of ours is running, is retried this often.
constexpr int kReopenRetries = 40;
constexpr int kReopenWaitMs = 50;

// One remote command on its own exec channel, fed and read by whoever drives it.
// Input and output are interleaved: input goes out as far as the remote window allows and
// output is read in between, so neither side can wait on the other. If the remote command
// ends before it has read all its input (tar unable to start zstd), the rest is dropped: its
// exit status and stderr say what happened, not a failed write.
class ExecChannel {
  public:
    // `exec`: the job's command runs on its channel (open_execs), its answer maybe not in yet.
    // `floor`: counts what a job that names a data stream moves.
    ExecChannel(ssh_session s, Liveness& live, const std::string& display, const StreamJob& job,
                StartedExec exec, FloorCheck& floor)
        : s_(s),
          live_(live),
          display_(display),
          job_(job),
          channel_(std::move(exec.channel)),
          answer_(exec.answer),
          sending_(static_cast<bool>(job.input)),
          floor_(job.data_stream.empty() ? nullptr : &floor),
          on_stdout_([this](std::string_view d) {
              if (floor_) floor_->moved(d.size());
              if (job_.on_stdout) job_.on_stdout(d);
          }) {
        if (sending_) {
            in_.resize(kInputChunk);
        } else if (ssh_channel_send_eof(channel_.get()) != SSH_OK) {
            throw channel_error(s, "cannot close the input of a remote command");
        }
    }

    bool done() const { return done_; }
    // A job that names a data stream: held to the floor while it runs.
    bool data() const { return floor_ != nullptr; }
    bool sending() const { return sending_; }
    int exit_status() const { return exit_status_; }

    // Sends as much input as the remote window takes; true if anything went.
    bool send() {
        ssh_channel ch = channel_.get();
        if (!sending_) return false;
        if (in_at_ == in_len_) {
            in_len_ = job_.input(in_.data(), in_.size());
            in_at_ = 0;
            if (in_len_ == 0) {
                sending_ = false;
                if (!ssh_channel_is_closed(ch) && ssh_channel_send_eof(ch) != SSH_OK)
                    throw channel_error(s_, "cannot close the input of a remote command");
                return false;
            }
        }
        if (ssh_channel_is_closed(ch)) {
            sending_ = false;  // the command is gone; nobody reads the rest
            return false;
        }
        const uint32_t window = ssh_channel_window_size(ch);
        // The remote closed its output and takes no more input: it has ended, and its
        // channel close is late (a busy server). Stop feeding it rather than wait.
        if (window == 0 && ssh_channel_is_eof(ch)) {
            const auto now = std::chrono::steady_clock::now();
            if (!stalled_) stalled_since_ = now;
            stalled_ = true;
            if (now - stalled_since_ > std::chrono::seconds(2)) sending_ = false;
            return false;
        }
        stalled_ = false;
        count_taken(window);
        if (window == 0) return false;
        const uint32_t len = static_cast<uint32_t>(std::min<size_t>(window, in_len_ - in_at_));
        const int n = ssh_channel_write(ch, in_.data() + in_at_, len);
        if (n == SSH_ERROR) {
            // A command that ended without reading all its input: the server's EOF and close
            // may arrive while a write is under way. libssh then says "Remote channel is
            // closed" while the channel counts as neither closed nor at EOF (its output is
            // not read yet). On a live link that is no failure of ours: the command's status
            // and output tell what happened.
            if (!ssh_is_connected(s_)) throw channel_error(s_, "cannot send input to " + display_);
            spdlog::debug("input to {} stopped: {}", display_, last_error(s_));
            sending_ = false;
            return false;
        }
        in_at_ += static_cast<size_t>(n);
        written_ += static_cast<uint64_t>(n);
        if (floor_) floor_->moved(static_cast<uint64_t>(n));  // the window goes as sshd takes
        return n > 0;
    }

    // Reads what output is there (waiting up to `wait_ms` for it); sets done() once the
    // command has ended and everything it sent was read. True if anything was read.
    bool receive(ReadBuffer& buf, int wait_ms) {
        size_t got = 0;
        const bool drained = read_turn(s_, live_, channel_.get(), buf, wait_ms, on_stdout_,
                                       job_.on_stderr, display_, &got);
        // The server answers the exec request before the command's output and close.
        exec_request(s_, channel_.get(), answer_, job_.command, display_);
        if (answer_ == SSH_AGAIN) {
            // sshd answers before it closes: a channel closed unanswered ran nothing.
            if (ssh_channel_is_closed(channel_.get()))
                throw channel_error(s_, "cannot start a remote command on " + display_);
            return got > 0;
        }
        if (drained && !sending_) {
            // Waits for the status if it is not in yet, then closes the channel: sshd
            // counts a channel against MaxSessions until it is closed from this side.
            exit_status_ = exit_status_of(s_, live_, channel_.get(), display_);
            channel_.reset();
            done_ = true;
            if (job_.on_taken && written_ > taken_) job_.on_taken(written_ - taken_);
        }
        return got > 0;
    }

  private:
    // Reports what the server has taken: what was written less what is still in flight, the
    // largest window it granted less the window left now (sshd grants a fixed window again
    // as it passes input on).
    void count_taken(uint32_t window) {
        if (!job_.on_taken) return;
        most_window_ = std::max<uint64_t>(most_window_, window);
        const uint64_t in_flight = std::min(most_window_ - window, written_);
        if (written_ - in_flight > taken_) {
            job_.on_taken(written_ - in_flight - taken_);
            taken_ = written_ - in_flight;
        }
    }

    ssh_session s_;
    Liveness& live_;
    const std::string& display_;
    const StreamJob& job_;
    ChannelPtr channel_;
    int answer_;  // to the exec request: SSH_OK, or SSH_AGAIN while it has not come
    uint64_t written_ = 0, taken_ = 0, most_window_ = 0;  // input: bytes (count_taken)
    std::vector<char> in_;
    size_t in_at_ = 0, in_len_ = 0;
    bool sending_;
    bool stalled_ = false;
    std::chrono::steady_clock::time_point stalled_since_;
    bool done_ = false;
    int exit_status_ = -1;
    FloorCheck* floor_;           // null: the job names no data stream
    const OutputSink on_stdout_;  // job_.on_stdout, counted by floor_
};

// Starts the jobs of one exec_parallel while there is room, their channels side by side
// (open_execs). A server that refuses a channel beyond the ones running (sshd's MaxSessions)
// sets the limit: the rest start as others end. sshd frees a closed channel's slot a moment
// after the close arrives, so a channel opened right after another ended (ours, or one of
// this connection's before the call) may be refused once more: retried a few times.
struct ChannelStarter {
    ssh_session s;
    Liveness& live;
    const std::string& display;
    const std::vector<StreamJob>& jobs;
    std::vector<std::unique_ptr<ExecChannel>>& channels;
    FloorCheck& floor;  // counts the jobs that name a data stream
    size_t limit;       // how many channels the server lets run side by side
    size_t next = 0;    // the first job not started yet

    void start_more() {
        size_t running = 0;
        for (size_t i = 0; i < next; ++i) running += channels[i]->done() ? 0 : 1;
        int retries = 0;
        while (next < jobs.size() && running < limit) {
            std::vector<std::string> commands;
            for (size_t i = next; i < jobs.size() && running + commands.size() < limit; ++i)
                commands.push_back(jobs[i].command);
            // Only a refusal (kind remote) is about the channel limit; a lost or silent link
            // throws, and is the caller's.
            std::optional<Error> refused;
            for (auto& exec : open_execs(s, live, commands, display, refused)) {
                channels[next] = std::make_unique<ExecChannel>(s, live, display, jobs[next],
                                                               std::move(exec), floor);
                ++next;
                ++running;
            }
            if (!refused) continue;
            // Nothing of ours runs (also before the first job): a slot sshd has not freed
            // yet, from a channel that just closed. Asked again a few times.
            if (running == 0) {
                if (++retries > kReopenRetries) throw *refused;
                std::this_thread::sleep_for(std::chrono::milliseconds(kReopenWaitMs));
                continue;
            }
            limit = running;
            spdlog::debug("{} refused another channel; at most {} side by side", display, limit);
            return;
        }
    }
};

}  // namespace

ExecResult Session::exec(const std::string& command, const InputSource& input,
                         const OutputSink& on_stdout, const OutputSink& on_stderr) {
    return exec_parallel({StreamJob{command, input, on_stdout, on_stderr, {}, {}}}).front();
}

std::vector<ExecResult> Session::exec_parallel(const std::vector<StreamJob>& jobs) {
    ssh_session s = impl_->session.get();
    std::vector<std::unique_ptr<ExecChannel>> channels(jobs.size());
    // The data streams of this call are held to the floor together, named by the first.
    const auto named = std::find_if(jobs.begin(), jobs.end(),
                                    [](const StreamJob& j) { return !j.data_stream.empty(); });
    FloorCheck floor(impl_->data_floor, named == jobs.end() ? "" : named->data_stream,
                     impl_->display);
    ChannelStarter starter{s, impl_->live, impl_->display, jobs, channels, floor, jobs.size()};
    size_t& next = starter.next;
    starter.start_more();
    // A pending Ctrl+C ends these commands (the caller decides what next).
    throw_if_interrupted();
    ReadBuffer buf;
    bool received = false;  // in the last round: more may be waiting in libssh's buffers
    auto last_progress = std::chrono::steady_clock::now();
    for (;;) {
        bool sent = false, sending = false, all_done = true, ended = false;
        // The link answers (Liveness) but nothing moves either way: a remote command that
        // hangs. Every wait has an end.
        const auto now = std::chrono::steady_clock::now();
        if (sent || received) last_progress = now;
        if (now - last_progress > kNoProgressDeadline)
            throw remote_error("a remote command on " + impl_->display + " moved no data for " +
                                   std::to_string(kNoProgressDeadline.count()) + " s",
                               "look at the remote host (a hung disk or mount?); run with -v");
        // Every pass looks at the signals, also while data keeps coming (read_turn does too).
        throw_if_interrupted();
        for (size_t i = 0; i < next; ++i) {
            if (channels[i]->done()) continue;
            sent |= channels[i]->send();
            sending |= channels[i]->sending();
        }
        // A lone channel with no input left waits in its read. Otherwise, when nothing
        // moved, wait for the server's next packet: output, or the window adjustment that
        // lets held-up input go.
        const bool alone = jobs.size() == 1 && !sending;
        if (!sent && !received && !alone) wait_for_server(s, kPollMs);
        if (sent) last_progress = std::chrono::steady_clock::now();
        received = false;
        bool data = false;  // a data stream still runs
        for (size_t i = 0; i < next; ++i) {
            if (channels[i]->done()) continue;
            received |= channels[i]->receive(buf, alone ? kPollMs : 0);
            ended |= channels[i]->done();
            all_done &= channels[i]->done();
            data |= channels[i]->data() && !channels[i]->done();
        }
        if (data) floor.check();
        if (all_done && next == jobs.size()) break;
        if (ended || all_done) starter.start_more();
    }
    std::vector<ExecResult> results;
    for (auto& c : channels) {
        results.push_back({c->exit_status()});
        spdlog::trace("exit status {}", results.back().exit_status);
    }
    return results;
}

}  // namespace mlt
