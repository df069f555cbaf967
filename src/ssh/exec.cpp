// Session::exec and exec_parallel: remote commands on exec channels side by side, their input
// and output interleaved, started as the server lets them; count_channels, which runs none.

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "channel_io.h"
#include "job_driver.h"
#include "listener_frames.h"
#include "mlt/util/interrupt.h"
#include "session_impl.h"

namespace mlt {

using namespace ssh_detail;

namespace {

// A command of ours that moves no data at all for this long, on a link that answers, is
// given up.
constexpr std::chrono::seconds kNoProgressDeadline{600};

// A refused channel open, when no channel of ours is running, is retried this often.
constexpr int kReopenRetries = 40;
constexpr int kReopenWaitMs = 50;

// One remote command on its own exec channel (or a channel to the channel listener, which
// runs it without a login: its header goes before the input, and its output comes in the
// listener's frames), fed and read by whoever drives it.
// Input and output are interleaved: input goes out as far as the remote window allows and
// output is read in between, so neither side can wait on the other. If the remote command
// ends before it has read all its input (tar unable to start zstd), the rest is dropped: its
// exit status and stderr say what happened, not a failed write.
class ExecChannel : public JobDriver {
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
          answer_(exec.header.empty() ? exec.answer : SSH_OK),
          sending_(job.input || !exec.header.empty()),
          floor_(job.data_stream.empty() ? nullptr : &floor),
          taken_(job.on_taken),
          on_stdout_([this](std::string_view d) {
              if (floor_) floor_->moved(d.size());
              if (job_.on_stdout) job_.on_stdout(d);
          }) {
        if (!exec.header.empty()) {
            frames_.emplace(on_stdout_, job_.on_stderr, display_);
            in_.assign(exec.header.begin(), exec.header.end());
            in_len_ = header_left_ = in_.size();
        }
        if (sending_) {
            in_.resize(std::max(in_.size(), kInputChunk));
        } else if (ssh_channel_send_eof(channel_.get()) != SSH_OK) {
            throw channel_error(s, "cannot close the input of a remote command");
        }
    }

    bool done() const override { return done_; }
    bool data() const override { return floor_ != nullptr; }
    bool sending() const override { return sending_; }
    int exit_status() const override { return exit_status_; }

    bool send() override {
        ssh_channel ch = channel_.get();
        // The listener sent the command's status: it reads no more (sshd would drop the rest).
        if (frames_ && frames_->ended()) sending_ = false;
        if (!sending_) return false;
        if (in_at_ == in_len_) {
            in_len_ = job_.input ? job_.input(in_.data(), in_.size()) : 0;
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
        taken_.window(window);
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
        // The header is no input of the job's.
        const size_t header = std::min(header_left_, static_cast<size_t>(n));
        header_left_ -= header;
        const auto input = static_cast<uint64_t>(static_cast<size_t>(n) - header);
        taken_.wrote(input);
        if (floor_) floor_->moved(input);  // the window goes as sshd takes
        return n > 0;
    }

    // Sets done() once the command has ended and everything it sent was read.
    bool receive(ReadBuffer& buf, int wait_ms) override {
        size_t got = 0;
        const OutputSink framed = [this](std::string_view d) { frames_->feed(d); };
        const bool drained =
            read_turn(s_, live_, channel_.get(), buf, wait_ms, frames_ ? framed : on_stdout_,
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
            // counts a channel against MaxSessions until it is closed from this side. The
            // listener's status came in its frames (none: the command did not end by itself).
            if (frames_ && frames_->mid_frame())
                spdlog::debug("the channel listener on {} ended mid-frame", display_);
            exit_status_ =
                frames_ ? frames_->status() : exit_status_of(s_, live_, channel_.get(), display_);
            channel_.reset();
            done_ = true;
            taken_.end();
        }
        return got > 0;
    }

  private:
    ssh_session s_;
    Liveness& live_;
    const std::string& display_;
    const StreamJob& job_;
    ChannelPtr channel_;
    int answer_;  // to the exec request: SSH_OK, or SSH_AGAIN while it has not come
    std::vector<char> in_;
    size_t in_at_ = 0, in_len_ = 0;
    size_t header_left_ = 0;                // of the listener's header, not written yet
    std::optional<ListenerFrames> frames_;  // a channel to the listener: its output
    bool sending_;
    bool stalled_ = false;
    std::chrono::steady_clock::time_point stalled_since_;
    bool done_ = false;
    int exit_status_ = -1;
    FloorCheck* floor_;  // null: the job names no data stream
    TakenCount taken_;
    const OutputSink on_stdout_;  // job_.on_stdout, counted by floor_
};

// A job waiting for a channel of its own (the control shell could not stream it).
class WaitingJob : public JobDriver {
  public:
    bool done() const override { return false; }
    bool data() const override { return false; }
    bool sending() const override { return false; }
    int exit_status() const override { return -1; }
    bool send() override { return false; }
    bool receive(ReadBuffer&, int) override { return false; }
    bool holds_channel() const override { return false; }
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
    std::vector<std::unique_ptr<JobDriver>>& channels;
    FloorCheck& floor;               // counts the jobs that name a data stream
    ChannelListener& listener;       // up: the channels go to it
    SharedListener& shared;          // its Connector's, forgotten when it does not answer
    size_t limit;                    // how many channels the server lets run side by side
    size_t next = 0;                 // the first job not started yet
    std::vector<size_t> again = {};  // jobs the control shell gave back, for channels of their own
    std::chrono::steady_clock::time_point began = std::chrono::steady_clock::now();

    // Whether job i may start now (StreamJob::start_after_s).
    bool due(size_t i) const {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count() >=
               jobs[i].start_after_s;
    }
    // Something waits that may start now: a job given back, or one whose time has come.
    bool pending_due() const {
        return !again.empty() || (next < jobs.size() && jobs[next].start_after_s > 0 && due(next));
    }

    // Job i, given back by the control shell, goes on a channel of its own as there is room.
    void give_back(size_t i) {
        channels[i] = std::make_unique<WaitingJob>();
        again.push_back(i);
    }

    // Channels for `commands`, side by side: to the channel listener where it is up (a
    // listener that stopped answering is given up: exec channels from then on), else exec
    // channels (open_execs, which sets `refused`).
    std::vector<StartedExec> open(const std::vector<std::string>& commands,
                                  std::optional<Error>& refused) {
        if (listener.state == ChannelListener::State::up) {
            std::optional<Error> gone;
            std::vector<ChannelPtr> opened =
                open_sessions(s, live, commands.size(), display, gone, &listener.path);
            // Some opened before a refusal (a burst beyond its backlog): those run, and the
            // rest ask again.
            if (!gone || !opened.empty()) {
                std::vector<StartedExec> started;
                for (size_t i = 0; i < opened.size(); ++i) {
                    spdlog::trace("through the channel listener on {}: {}", display, commands[i]);
                    started.push_back({std::move(opened[i]), SSH_OK,
                                       listener_header(listener.token, commands[i])});
                }
                return started;
            }
            spdlog::debug("the channel listener on {} took no channel ({}); channels log in again",
                          display, gone->what());
            shared.forget(listener.path);
            // Another session's: this one may start its own later.
            if (listener.own)
                listener.state = ChannelListener::State::none;
            else
                listener = {};
        }
        return open_execs(s, live, commands, display, refused);
    }

    // A refused channel open, `running` of ours running: true to ask again (a slot not freed
    // yet while nothing of ours runs; a few times), else the server's limit is set.
    bool ask_again(const Error& refused, size_t running, int& retries) {
        if (running == 0) {
            if (++retries > kReopenRetries) throw refused;
            std::this_thread::sleep_for(std::chrono::milliseconds(kReopenWaitMs));
            return true;
        }
        limit = running;
        spdlog::debug("{} refused another channel; at most {} side by side", display, limit);
        return false;
    }

    void start_more() {
        size_t running = 0;
        for (size_t i = 0; i < next; ++i) running += channels[i]->holds_channel() ? 1 : 0;
        int retries = 0;
        while (!again.empty() && running < limit) {
            std::optional<Error> refused;
            std::vector<StartedExec> execs = open({jobs[again.front()].command}, refused);
            if (execs.empty()) {
                if (ask_again(*refused, running, retries)) continue;
                return;
            }
            channels[again.front()] = std::make_unique<ExecChannel>(
                s, live, display, jobs[again.front()], std::move(execs.front()), floor);
            again.erase(again.begin());
            ++running;
        }
        while (next < jobs.size() && running < limit && due(next)) {
            std::vector<std::string> commands;
            for (size_t i = next; i < jobs.size() && running + commands.size() < limit && due(i);
                 ++i)
                commands.push_back(jobs[i].command);
            // Only a refusal (kind remote) is about the channel limit; a lost or silent link
            // throws, and is the caller's.
            std::optional<Error> refused;
            for (auto& exec : open(commands, refused)) {
                channels[next] = std::make_unique<ExecChannel>(s, live, display, jobs[next],
                                                               std::move(exec), floor);
                ++next;
                ++running;
            }
            // Nothing of ours runs (also before the first job): a slot sshd has not freed
            // yet, from a channel that just closed. Asked again a few times.
            if (!refused || ask_again(*refused, running, retries)) continue;
            return;
        }
    }
};

}  // namespace

ExecResult Session::exec(const std::string& command, const InputSource& input,
                         const OutputSink& on_stdout, const OutputSink& on_stderr) {
    return exec_parallel({StreamJob{command, input, on_stdout, on_stderr, {}, {}}}).front();
}

std::vector<ExecResult> Session::exec_parallel(const std::vector<StreamJob>& jobs,
                                               bool through_shell) {
    ssh_session s = impl_->session.get();
    std::vector<std::unique_ptr<JobDriver>> channels(jobs.size());
    // The data streams of this call are held to the floor together, named by the first.
    const auto named = std::find_if(jobs.begin(), jobs.end(),
                                    [](const StreamJob& j) { return !j.data_stream.empty(); });
    FloorCheck floor(impl_->data_floor, named == jobs.end() ? "" : named->data_stream,
                     impl_->display);
    // A listener another session of this host started takes these channels too.
    adopt_listener(impl_->shell.listener, *impl_->shell.shared_listener);
    ChannelStarter starter{
        s,          impl_->live, impl_->display,        jobs,
        channels,   floor,       impl_->shell.listener, *impl_->shell.shared_listener,
        jobs.size()};
    size_t& next = starter.next;
    const bool via_shell = through_shell && !jobs.empty() && usable_for_stream(impl_->shell);
    if (through_shell && !jobs.empty())
        spdlog::trace("a stream through the control shell on {}: {}", impl_->display,
                      via_shell ? "yes" : "not now");
    if (via_shell) {
        channels[0] = shell_stream(s, impl_->live, impl_->display, impl_->shell, jobs[0], floor);
        next = 1;
    }
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
            // Once its frame ended (the shell then stays in step for the next command).
            if (channels[i]->refused() && channels[i]->done()) starter.give_back(i);
            ended |= channels[i]->done();
            all_done &= channels[i]->done();
            data |= channels[i]->data() && !channels[i]->done();
        }
        if (data) floor.check();
        if (all_done && next == jobs.size()) break;
        if (ended || all_done || starter.pending_due()) starter.start_more();
    }
    std::vector<ExecResult> results;
    for (auto& c : channels) {
        results.push_back({c->exit_status()});
        spdlog::trace("exit status {}", results.back().exit_status);
    }
    return results;
}

int Session::count_channels(int most) {
    std::optional<Error> refused;
    const std::vector<ChannelPtr> channels =
        open_sessions(impl_->session.get(), impl_->live, static_cast<size_t>(std::max(most, 0)),
                      impl_->display, refused);
    if (refused) spdlog::debug("{}", refused->what());
    return static_cast<int>(channels.size());
}

}  // namespace mlt
