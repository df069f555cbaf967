#pragma once

#include <stdexcept>
#include <string>

namespace mlt {

// Process exit codes (docs/usage.md, "Exit status"). An Error's code comes from its kind
// through exit_code_of(); nothing passes a code beside a kind.
namespace exit_code {
constexpr int kOk = 0;
constexpr int kRemote = 1;         // a remote command failed (the link itself was fine)
constexpr int kInternal = 1;       // a bug in mlt; also a local write failed after the training ran
constexpr int kUsage = 2;          // bad usage, settings, spec or key; nothing done remotely
constexpr int kConflict = 3;       // job-state conflict (active or uncollected job)
constexpr int kHostKey = 4;        // host key unknown/changed and not accepted
constexpr int kLimit = 5;          // stopped by --max-hours / --max-cost: a run's end, no error
constexpr int kRuled = 6;          // stopped by a watch.stop_when rule: a run's end, no error
constexpr int kInterrupted = 130;  // Ctrl+C (128 + SIGINT)
constexpr int kHangup = 129;       // 128 + SIGHUP
constexpr int kTerminated = 143;   // 128 + SIGTERM
constexpr int kConnection = 255;   // connection or authentication failure, only
}  // namespace exit_code

// One row of the exit-code table: `codes` as the reader sees them ("N": the training's own
// status), `meaning` in one line. The one source of `mlt --help`'s table and docs/usage.md's
// (tests/unit/test_util_error.cpp checks that the doc's table is this one).
struct ExitCodeRow {
    const char* codes;
    const char* meaning;
};
inline constexpr ExitCodeRow kExitCodeTable[] = {
    {"0", "success"},
    {"N",
     "the training's own status when it failed (killed by signal S: 128+S), except one of "
     "mlt's own codes (2, 3, 4, 5, 6 or 255): then 1, and the summary says \"the training "
     "exited N\""},
    {"1",
     "a remote command failed while the link was fine; the remote sent what no honest host "
     "sends (tampering); the run's remote dir was gone; the job ended without a status; a "
     "local write failed after the training ran (--resume collects); doctor found the host "
     "lacking what train needs; or an internal error (a bug: please report it)"},
    {"2",
     "bad usage, settings, spec or key, or a local file that cannot be read or written; "
     "nothing was done remotely"},
    {"3", "job-state conflict (an active or uncollected job of the model)"},
    {"4", "host key unknown/changed and not accepted"},
    {"5",
     "stopped by a limit (--max-hours, --max-cost, watch.stop_silent, watch.stop_idle); the "
     "results were collected"},
    {"6", "stopped by an early-stop rule (watch.stop_when); the results were collected"},
    {"129", "left on SIGHUP"},
    {"130", "interrupted (Ctrl+C)"},
    {"143", "left on SIGTERM"},
    {"255",
     "connection or authentication failure only (unreachable, refused, lost or silent link)"},
};

// What went wrong. The kind alone decides the exit code (exit_code_of); an error whose code
// must differ from its kind's gets a kind of its own.
enum class ErrorKind {
    usage,         // command line
    config,        // settings files, model spec
    key,           // local key files
    io,            // local file system
    io_after_run,  // a local write failed after the training ran (the job's results are kept)
    auth,          // authentication refused
    host_key,      // host key verification
    connect,       // TCP connect, handshake
    timeout,       // a remote operation did not answer in time
    disconnected,  // the link went away
    remote,        // a remote command failed
    tampered,      // the remote sent what no honest host sends (a name that climbs out, ...)
    gone,          // the host answers, but the run's remote dir is gone (re-imaged, wiped)
    conflict,      // job state
    interrupted,   // Ctrl+C
    terminated,    // SIGTERM
    hangup,        // SIGHUP
    internal,      // a bug in mlt, or a library that failed where it cannot (stays last)
};

// The one table from kind to exit code (tests/unit/test_util_error.cpp checks it against
// docs/usage.md, "Exit status").
constexpr int exit_code_of(ErrorKind kind) {
    switch (kind) {
        case ErrorKind::usage:
        case ErrorKind::config:
        case ErrorKind::key:
        case ErrorKind::io:
            return exit_code::kUsage;
        case ErrorKind::io_after_run:
        case ErrorKind::internal:
            return exit_code::kInternal;
        case ErrorKind::remote:
        case ErrorKind::tampered:
        case ErrorKind::gone:
            return exit_code::kRemote;
        case ErrorKind::auth:
        case ErrorKind::connect:
        case ErrorKind::timeout:
        case ErrorKind::disconnected:
            return exit_code::kConnection;
        case ErrorKind::host_key:
            return exit_code::kHostKey;
        case ErrorKind::conflict:
            return exit_code::kConflict;
        case ErrorKind::interrupted:
            return exit_code::kInterrupted;
        case ErrorKind::terminated:
            return exit_code::kTerminated;
        case ErrorKind::hangup:
            return exit_code::kHangup;
    }
    return exit_code::kInternal;
}

// What mlt exits with for a training that exited with `status`: that status, except one of
// mlt's own codes (2 to 6, 255), which becomes 1, so that a script can tell "the connection
// was lost" (255) from "the training exited 255". 129, 130 and 143 pass as they are.
constexpr int training_exit_code(int status) {
    return (status >= exit_code::kUsage && status <= exit_code::kRuled) ||
                   status == exit_code::kConnection
               ? 1
               : status;
}

// Ctrl+C, SIGTERM or SIGHUP: the user (or the system) asked mlt to end.
constexpr bool is_signal(ErrorKind kind) {
    return kind == ErrorKind::interrupted || kind == ErrorKind::terminated ||
           kind == ErrorKind::hangup;
}

// The one error type of mlt: `main` prints `mlt: error: <what> (<hint>)` and exits with code().
class Error : public std::runtime_error {
  public:
    Error(ErrorKind kind, std::string what, std::string hint = {})
        : std::runtime_error(std::move(what)), kind_(kind), hint_(std::move(hint)) {}

    ErrorKind kind() const { return kind_; }
    int code() const { return exit_code_of(kind_); }
    const std::string& hint() const { return hint_; }

  private:
    ErrorKind kind_;
    std::string hint_;
};

// Shorthands for the common kinds; each returns the Error to throw.
inline Error usage_error(std::string what, std::string hint = {}) {
    return Error(ErrorKind::usage, std::move(what), std::move(hint));
}
inline Error config_error(std::string what, std::string hint = {}) {
    return Error(ErrorKind::config, std::move(what), std::move(hint));
}
// A remote command ran and failed: exit 1 (the link itself was fine).
inline Error remote_error(std::string what, std::string hint = {}) {
    return Error(ErrorKind::remote, std::move(what), std::move(hint));
}
// The remote sent something no honest host sends: `what` names it and the host, `why` says
// what was wrong with it. Exit 1; the hint says that nothing was written or deleted here.
inline Error tampered_error(const std::string& what, const std::string& why) {
    return Error(ErrorKind::tampered, what + " looks tampered with: " + why,
                 "nothing was written or deleted outside the model's local dirs; treat the host "
                 "as compromised (docs/security.md)");
}
// A local file cannot be read or written: exit 2 (before anything remote).
inline Error io_error(std::string what, std::string hint = {}) {
    return Error(ErrorKind::io, std::move(what), std::move(hint));
}

}  // namespace mlt
