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
        spdlog::debug("{} said:\n{}", what, err);
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

RemoteOutput SessionRemote::run(const std::string& command, std::string_view input) {
    RemoteOutput result;
    auto r = session_.shell(
        command, input, [&](std::string_view d) { result.out.append(d); },
        [&](std::string_view d) { result.err.append(d); });
    result.exit_status = r.exit_status;
    return result;
}

int SessionRemote::stream(const std::string& command, const InputSource& input,
                          const OutputSink& on_stdout, const OutputSink& on_stderr) {
    // Read up to kInlineInput of the input: if it ends there, the command can go through the
    // control shell; otherwise (a tar upload) it needs a channel whose stdin it owns.
    std::string head;
    bool ended = !input;
    while (!ended && head.size() <= kInlineInput) {
        const size_t before = head.size();
        head.resize(before + 64 * 1024);
        const size_t n = input(head.data() + before, head.size() - before);
        head.resize(before + n);
        ended = n == 0;
    }
    if (ended) return session_.shell(command, head, on_stdout, on_stderr).exit_status;
    return session_.exec(command, input_from(head, input), on_stdout, on_stderr).exit_status;
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

std::vector<int> SessionRemote::stream_parallel(const std::vector<StreamJob>& jobs) {
    // One job goes as stream() does (its input may travel in the control shell), unless it
    // counts what the server took, which only an exec channel tells.
    if (jobs.size() == 1 && !jobs.front().on_taken) return Remote::stream_parallel(jobs);
    std::vector<int> statuses;
    for (const auto& r : session_.exec_parallel(jobs)) statuses.push_back(r.exit_status);
    return statuses;
}

}  // namespace mlt
