// SessionRemote: the Remote seam over a real Session (bounded output, streams, commands
// sent ahead), and the words for an exit status.
#include "mlt/ssh/remote.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>

#include "mlt/ssh/session.h"
#include "mlt/util/text.h"

namespace mlt {

std::string exit_text(int exit_status) {
    return exit_status < 0 ? "killed by a signal" : "exit " + std::to_string(exit_status);
}

Error remote_failure(const Remote& remote, const std::string& what, int exit_status,
                     const std::string& err, std::string hint) {
    std::string message =
        what + " on " + remote.name() + " failed (" + exit_text(exit_status) + ")";
    // The last lines the command said: a tar error comes after whatever a login banner or
    // profile printed first. Bounded and escaped; the debug log (-v) has all of it.
    const std::string said = last_lines(err);
    if (!said.empty()) {
        message += ": " + said;
        // Its end only: a remote may send any amount, and the debug log is always on.
        const std::string_view end =
            std::string_view(err).substr(err.size() > kKeptStderr ? err.size() - kKeptStderr : 0);
        spdlog::debug("{} said{}:\n{}", what, end.size() < err.size() ? " (its end)" : "", end);
    }
    return remote_error(message, std::move(hint));
}

InputSource input_from(std::string_view data, InputSource then) {
    return
        [data, then = std::move(then), offset = size_t{0}](char* buffer, size_t capacity) mutable {
            if (offset < data.size()) {
                const size_t n = std::min(capacity, data.size() - offset);
                std::memcpy(buffer, data.data() + offset, n);
                offset += n;
                return n;
            }
            return then ? then(buffer, capacity) : size_t{0};
        };
}

const std::string& SessionRemote::name() const {
    return session_.display_name();
}

namespace {

// The error for a command whose stdout passed kMaxRunOutput: names the host and the start of
// the command (its first line, bounded), since nothing of mlt's prints that much.
Error too_much_output(const std::string& host, const std::string& command) {
    const std::string first_line = command.substr(0, command.find('\n'));
    return remote_error(
        "the remote sent more than " + format_bytes(kMaxRunOutput) +
            " of output for a command of mlt on " + host +
            ", more than any of them prints; the command was: " + printable(first_line, 120),
        "a program on the host (its sh, find, date, cat...) prints far more "
        "than it should: it may be broken or replaced; run with -v for details");
}

}  // namespace

RemoteOutput SessionRemote::run(const std::string& command, std::string_view input) {
    RemoteOutput result;
    BoundedTail err;
    const OutputSink out = [&](std::string_view d) {
        if (d.size() > kMaxRunOutput - result.out.size()) throw too_much_output(name(), command);
        result.out.append(d);
    };
    // A side link's commands go to the host's channel listener rather than start a shell.
    if (session_.channel_cheaper_than_shell()) {
        const InputSource in = input.empty() ? InputSource{} : input_from(input);
        result.exit_status = session_.exec(command, in, out, err.sink()).exit_status;
        result.err = err.str();
        return result;
    }
    // A throw from the sink cuts the command short: the session drops its control shell (its
    // output is out of step) and the next command gets a new one.
    auto r = session_.shell(command, input, out, err.sink());
    result.exit_status = r.exit_status;
    result.err = err.str();
    return result;
}

int SessionRemote::stream(const std::string& command, const InputSource& input,
                          const OutputSink& on_stdout, const OutputSink& on_stderr) {
    return stream_one(StreamJob{command, input, on_stdout, on_stderr, {}, {}});
}

int SessionRemote::stream_one(const StreamJob& job) {
    // Read up to kInlineInput of the input: if it ends there, the command can go through the
    // control shell; otherwise (a tar upload) it needs a channel whose stdin it owns.
    std::string head;
    bool ended = !job.input;
    while (!ended && head.size() <= kInlineInput) {
        const size_t before = head.size();
        head.resize(before + 64 * 1024);
        const size_t n = job.input(head.data() + before, head.size() - before);
        head.resize(before + n);
        ended = n == 0;
    }
    StreamJob rest = job;
    // (An input that ended is not asked again.)
    rest.input = ended ? input_from(head) : input_from(head, job.input);
    // A side link's streams go to the host's channel listener rather than start a shell.
    if (session_.channel_cheaper_than_shell())
        return session_.exec_parallel({rest}).front().exit_status;
    if (ended)
        return session_.shell(job.command, head, job.on_stdout, job.on_stderr, job.data_stream)
            .exit_status;
    return session_.exec_parallel({rest}, true).front().exit_status;
}

void SessionRemote::run_ahead(const std::string& command, std::string input) {
    session_.shell_ahead(command, std::move(input));
}

void SessionRemote::prepare() {
    session_.open_shell_ahead();
}

void SessionRemote::run_ahead_on_guess(const std::string& command, std::string input) {
    session_.shell_ahead(command, std::move(input), true);
}

double SessionRemote::round_trip_s() const {
    return session_.round_trip_s();
}

double SessionRemote::login_cost_s() const {
    return session_.login_cost_s();
}

double SessionRemote::channel_cost_s() const {
    return session_.channel_cost_s();
}

bool SessionRemote::listen_for_channels() {
    return session_.listen_for_channels();
}

std::vector<int> SessionRemote::stream_parallel(const std::vector<StreamJob>& jobs) {
    // One job goes as stream() does (its input may travel inside a frame of the control
    // shell), unless it counts what the server took, which a frame does not tell: then, as
    // several jobs do, the first streams behind its frame (counted by the shell channel's
    // window) and the others get exec channels.
    if (jobs.size() == 1 && !jobs.front().on_taken) return {stream_one(jobs.front())};
    std::vector<int> statuses;
    for (const auto& r : session_.exec_parallel(jobs, true)) statuses.push_back(r.exit_status);
    return statuses;
}

}  // namespace mlt
