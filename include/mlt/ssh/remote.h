#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "mlt/util/bounded.h"
#include "mlt/util/error.h"

namespace mlt {

class Session;

// Fills `buffer` with up to `capacity` bytes of a command's stdin; returns 0 at the end.
using InputSource = std::function<size_t(char* buffer, size_t capacity)>;
// An InputSource that serves `data` (which must outlive it), then whatever `then` gives
// (nothing when empty).
InputSource input_from(std::string_view data, InputSource then = {});

// Receives a command's output as it arrives.
using OutputSink = std::function<void(std::string_view)>;

// One of the commands Remote::stream_parallel() runs side by side: its stdin (none: closed
// at once) and where its output goes.
struct StreamJob {
    std::string command;
    InputSource input;
    OutputSink on_stdout;
    OutputSink on_stderr;
    // Called with the input bytes the server has taken since the last call: it granted its
    // window again for them (what is still in flight is not counted), and at the end for all
    // the rest. Input is taken from `input` up to a window ahead, so counting there would
    // count bytes still on their way (over a slow link, seconds of them).
    std::function<void(uint64_t)> on_taken;
    // Names a data stream ("the tar stream of DIR", "the ranges of FILE") for messages: the
    // transport holds it to its progress floor (ConnectSpec::data_floor; stdout bytes and
    // input taken count, stderr does not; the data streams of one stream_parallel count
    // together) and ends it with StallError when it moves too little. Empty: no floor (a
    // log follow may be quiet for its whole segment).
    std::string data_stream;
    // Seconds after the call's start before its channel opens (0: at once): on a host with
    // fewer free cores than new channels, their logins run one after another anyway, and
    // opened at once they would all end last.
    double start_after_s = 0;
};

// The error of a data stream that moved less than its transport's progress floor (kind
// remote, exit 1): "<data_stream> on <host> stalled: ..." or "... trickled: ...". A caller
// with other links (ranges) may move the stream's work there.
class StallError : public Error {
  public:
    using Error::Error;
};

// The most stdout Remote::run() keeps: mlt's own commands print far less (a listing streams,
// see docs/architecture.md); more ends the command with an Error.
constexpr size_t kMaxRunOutput = 1024 * 1024;

// What a remote command printed and how it ended.
struct RemoteOutput {
    int exit_status = -1;
    std::string out;  // at most kMaxRunOutput bytes
    std::string err;  // its last kKeptStderr bytes (BoundedTail)
};

// The seam between the job/train logic and the SSH transport: unit tests give the logic a
// fake, the integration suite a real Session.
class Remote {
  public:
    virtual ~Remote() = default;
    // `user@host:port`, for messages.
    virtual const std::string& name() const = 0;
    // Runs a shell command (built with shell_quote) and collects its output: stdout up to
    // kMaxRunOutput, the end of stderr. Throws mlt::Error when the transport fails, not when
    // the command fails; over a real link also (remote) when stdout passes kMaxRunOutput, and
    // the link stays usable for the next command.
    virtual RemoteOutput run(const std::string& command, std::string_view input = {}) = 0;
    // Runs a shell command, feeding its stdin from `input` (until it returns 0) while
    // streaming stdout/stderr to the sinks; returns the exit status (-1: killed by a
    // signal). Throws mlt::Error when the transport fails.
    virtual int stream(const std::string& command, const InputSource& input,
                       const OutputSink& on_stdout, const OutputSink& on_stderr) = 0;
    // Like stream() for several commands, run side by side where the transport can (an SSH
    // connection: one channel each, each with its own flow-control window); here, one after
    // another (each job's input counts as taken when its command ended). Returns the exit
    // statuses in the order of `jobs`.
    virtual std::vector<int> stream_parallel(const std::vector<StreamJob>& jobs) {
        std::vector<int> statuses;
        for (const auto& job : jobs) {
            uint64_t fed = 0;
            InputSource input;
            if (job.input)
                input = [&job, &fed](char* buffer, size_t capacity) {
                    const size_t n = job.input(buffer, capacity);
                    fed += n;
                    return n;
                };
            statuses.push_back(stream(job.command, input, job.on_stdout, job.on_stderr));
            if (job.on_taken && fed > 0) job.on_taken(fed);
        }
        return statuses;
    }
    // The quickest command round trip seen on this link so far, in seconds: -1 when none
    // was timed (then nothing is assumed about the link).
    virtual double round_trip_s() const { return -1; }
    // What a new channel costs before its command runs (the login shell and its startup
    // files), in seconds: -1 when it was not measured (then nothing is assumed).
    virtual double login_cost_s() const { return -1; }
    // What a new channel of stream_parallel costs before its command runs, in seconds: the
    // login, or next to nothing where the transport runs commands without one (after
    // listen_for_channels); -1 when it was not measured.
    virtual double channel_cost_s() const { return login_cost_s(); }
    // A hint: several channels come soon. The transport may make them cheap (an SSH
    // connection: a listener on the host runs their commands without a login each), at the
    // cost of one command now, once. Returns whether it did. Here: nothing.
    virtual bool listen_for_channels() { return false; }
    // A hint: run() or stream() of exactly `command` and `input` comes soon, after the next
    // command; the transport may send it along with that one and keep the reply for it. Only
    // for a command whose running unasked does no harm (a listing, a log follow): it may run
    // even if it is never asked for. Here: nothing.
    virtual void run_ahead(const std::string& command, std::string input) {
        (void)command;
        (void)input;
    }
    // A hint: a command comes soon, after some local work (planning an upload); the
    // transport may start getting ready for it meanwhile. Here: nothing.
    virtual void prepare() {}
    // The same for a guess: a quick command that only reads, whose reply is read and dropped
    // when another command is asked for first (the shell goes on). Here: nothing.
    virtual void run_ahead_on_guess(const std::string& command, std::string input) {
        (void)command;
        (void)input;
    }
};

// How a remote command ended, for messages: "exit N", or "killed by a signal" for -1.
std::string exit_text(int exit_status);

// The error for a remote command that failed (exit 1): names `what`, the host and the exit
// status (or the signal), and quotes the last lines of the command's stderr, bounded and
// with control characters escaped (last_lines()). One wording for every layer.
Error remote_failure(const Remote& remote, const std::string& what, int exit_status,
                     const std::string& err, std::string hint = "run with -v for details");

// A Remote over an open Session (which must outlive it). run() and stream() go through the
// session's control shell; a stream() whose input is larger than kInlineInput gets an exec
// channel of its own.
class SessionRemote : public Remote {
  public:
    explicit SessionRemote(Session& session) : session_(session) {}
    const std::string& name() const override;
    RemoteOutput run(const std::string& command, std::string_view input = {}) override;
    int stream(const std::string& command, const InputSource& input, const OutputSink& on_stdout,
               const OutputSink& on_stderr) override;
    // One exec channel per job, all at once (a single job goes as stream() does, its
    // data_stream held to the floor either way).
    std::vector<int> stream_parallel(const std::vector<StreamJob>& jobs) override;
    double round_trip_s() const override;
    double login_cost_s() const override;
    double channel_cost_s() const override;
    bool listen_for_channels() override;
    // Session::shell_ahead.
    void run_ahead(const std::string& command, std::string input) override;
    // Session::shell_ahead, a guess.
    void run_ahead_on_guess(const std::string& command, std::string input) override;
    // Session::open_shell_ahead.
    void prepare() override;

    // Input up to this size travels inside the command line (printf_literal).
    static constexpr size_t kInlineInput = 256 * 1024;

  private:
    // stream() of one job: the control shell when its input ends within kInlineInput, else
    // an exec channel.
    int stream_one(const StreamJob& job);

    Session& session_;
};

}  // namespace mlt
