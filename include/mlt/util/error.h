#pragma once

#include <stdexcept>
#include <string>

namespace mlt {

// Process exit codes (docs/usage.md, "Exit status").
namespace exit_code {
constexpr int kOk = 0;
constexpr int kRemote = 1;       // a remote command failed (the link itself was fine)
constexpr int kUsage = 2;        // bad usage, settings, spec or key; nothing done remotely
constexpr int kConflict = 3;     // job-state conflict (active or uncollected job)
constexpr int kHostKey = 4;      // host key unknown/changed and not accepted
constexpr int kLimit = 5;        // stopped by --max-hours / --max-cost
constexpr int kInterrupted = 130;
constexpr int kConnection = 255;  // connection or authentication failure, only
}  // namespace exit_code

// What went wrong, for callers that react to a kind rather than to an exit code.
enum class ErrorKind {
    usage,         // command line
    config,        // settings files, model spec
    key,           // local key files
    io,            // local file system
    auth,          // authentication refused
    host_key,      // host key verification
    connect,       // TCP connect, handshake
    timeout,       // a remote operation did not answer in time
    disconnected,  // the link went away
    remote,        // a remote command failed
    conflict,      // job state
    interrupted,
    internal,
};

// The one error type of mlt: `main` prints `mlt: error: <what> (<hint>)` and exits with code().
class Error : public std::runtime_error {
public:
    Error(ErrorKind kind, int code, std::string what, std::string hint = {})
        : std::runtime_error(std::move(what)), kind_(kind), code_(code), hint_(std::move(hint)) {}

    ErrorKind kind() const { return kind_; }
    int code() const { return code_; }
    const std::string& hint() const { return hint_; }

private:
    ErrorKind kind_;
    int code_;
    std::string hint_;
};

// Shorthands for the common kinds; each returns the Error to throw.
inline Error usage_error(std::string what, std::string hint = {}) {
    return Error(ErrorKind::usage, exit_code::kUsage, std::move(what), std::move(hint));
}
inline Error config_error(std::string what, std::string hint = {}) {
    return Error(ErrorKind::config, exit_code::kUsage, std::move(what), std::move(hint));
}
// A remote command ran and failed: exit 1 (the link itself was fine).
inline Error remote_error(std::string what, std::string hint = {}) {
    return Error(ErrorKind::remote, exit_code::kRemote, std::move(what), std::move(hint));
}
inline Error io_error(std::string what, std::string hint = {}) {
    return Error(ErrorKind::io, exit_code::kUsage, std::move(what), std::move(hint));
}

}  // namespace mlt
