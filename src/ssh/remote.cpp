#include "mlt/ssh/remote.h"

#include <algorithm>
#include <cstring>

#include "mlt/ssh/session.h"

namespace mlt {

Error remote_failure(const Remote& remote, const std::string& what, int exit_status,
                     const std::string& err, std::string hint) {
    std::string message = what + " on " + remote.name() + " failed (" +
                          (exit_status < 0 ? std::string("killed by a signal")
                                           : "exit " + std::to_string(exit_status)) +
                          ")";
    const size_t begin = err.find_first_not_of(" \t\r\n");
    if (begin != std::string::npos)
        message += ": " + err.substr(begin, err.find_last_not_of(" \t\r\n") - begin + 1);
    return Error(ErrorKind::remote, exit_code::kConnection, message, std::move(hint));
}

const std::string& SessionRemote::name() const {
    return session_.display_name();
}

RemoteOutput SessionRemote::run(const std::string& command, std::string_view input) {
    RemoteOutput result;
    size_t offset = 0;
    InputSource source = [&](char* buffer, size_t capacity) {
        size_t n = std::min(capacity, input.size() - offset);
        std::memcpy(buffer, input.data() + offset, n);
        offset += n;
        return n;
    };
    auto r = session_.exec(
        command, source, [&](std::string_view d) { result.out.append(d); },
        [&](std::string_view d) { result.err.append(d); });
    result.exit_status = r.exit_status;
    return result;
}

int SessionRemote::stream(const std::string& command, const InputSource& input,
                          const OutputSink& on_stdout, const OutputSink& on_stderr) {
    return session_.exec(command, input, on_stdout, on_stderr).exit_status;
}

}  // namespace mlt
