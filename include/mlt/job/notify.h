#pragma once

// The events a run's notifications tell (docs/usage.md, "Notifications"), the bodies each target
// format gets, the files notify_send.sh reads (src/job/sh/notify_send.sh: the sender of both
// sides, the host's guard and this machine's LocalNotifier), and LocalNotifier.

#include <atomic>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "mlt/config/settings.h"

namespace mlt {

// What happened: on the host (started .. unattended_shutdown, sent by its guard) or seen by the
// client (host_lost, failover, restarted).
enum class NotifyEventKind {
    started,
    finished,
    failed,
    stopped,  // by a limit, a rule, idle GPUs or silence: the reason says which
    unattended_shutdown,
    host_lost,
    failover,
    restarted,
};

// The event's word: "started", ..., "unattended_shutdown", "host_lost", ...
const char* notify_event_name(NotifyEventKind kind);

// One event of a run.
struct NotifyEvent {
    NotifyEventKind event = NotifyEventKind::started;
    std::string model;
    std::string run_id;
    int attempt = 1;
    std::string host;                     // as mlt names it: user@host:port
    std::string reason;                   // why (a stop's limit or rule, a failure); may be ""
    std::optional<int> exit_status;       // the job's, once it has one
    long long duration_s = 0;             // since the run started
    std::optional<double> cost;           // USD so far; none when the price is not known
    std::vector<std::string> last_lines;  // console lines; the last 10 are sent
};

// RUN_ID.ATTEMPT.EVENT ("20240501-abc.2.stopped"): the same run, attempt and event always give
// the same id, so a receiver drops the rare repeat of a send that timed out after it arrived.
std::string notify_event_id(const NotifyEvent& event);

// The event as one JSON object, the body of a `json` target and notify_cmd's input: id, event,
// model, run_id, attempt, host, reason, exit_status (null: none), duration_s, cost (null: not
// known), last_lines (at most 10). Every text is made safe first: a tab becomes a blank, other
// control bytes and bytes that are no UTF-8 sequence `?`, a line keeps only what follows its
// last carriage return (a progress bar's last state) and its first 300 bytes. These are the
// bytes notify_send.sh builds from notify_fields_text and notify_last_lines_text (a unit test
// holds them equal).
std::string notify_event_json(const NotifyEvent& event);

// The body of a target of `format` (json: notify_event_json; ntfy: a short text, the summary
// then the last lines; slack: {"text": ...}), as notify_send.sh builds it.
std::string notify_body(const NotifyEvent& event, NotifyFormat format);

// The ntfy Title header: "mlt: MODEL EVENT" in ASCII (other bytes `?`).
std::string notify_title(const NotifyEvent& event);

// The `fields` file of an event dir that notify_send.sh reads: NAME=VALUE lines (a newline in a
// value becomes `?`). A host's guard writes the same file for the events it sends itself.
std::string notify_fields_text(const NotifyEvent& event);

// The `last_lines` file of an event dir: the event's console lines, one a line (a line's own
// final newline is dropped; a newline inside one makes two).
std::string notify_last_lines_text(const NotifyEvent& event);

// The targets file notify_send.sh reads: one `FORMAT URL` line per target. It holds the URLs,
// which are secrets: write it 0600; on a host, send it as a command's standard input (never in
// the command text, which the host's process list and mlt's -vv trace show).
std::string notify_targets_text(const std::vector<NotifyTarget>& targets);

// How hard notify_send.sh tries each target.
struct NotifyTiming {
    int tries = 4;       // a try and 3 retries
    int delay_s = 2;     // before the first retry, doubled before each next (2, 4, 8)
    int timeout_s = 10;  // per try
};

// notify_send.sh's text with `timing` set before it, to run as `sh FILE MODE ARGS...` or
// `sh -c TEXT notify_send MODE ARGS...` (modes and files: src/job/sh/notify_send.sh).
std::string notify_send_script(const NotifyTiming& timing = {});

// The exit statuses of notify_send.sh's `send`.
namespace notify_status {
constexpr int kSent = 0;         // every target took it
constexpr int kUsage = 2;        // a wrong call
constexpr int kAlreadySent = 3;  // its id was in the sent file: nothing done
constexpr int kFailed = 4;       // a target did not take it after its tries
constexpr int kNoClient = 5;     // no curl, GNU wget nor python3: nothing sent
}  // namespace notify_status

// What sending one event from this machine came to.
struct NotifyOutcome {
    bool already_sent = false;          // its id was in the sent file: nothing was done
    bool sent = false;                  // every target and notify_cmd took it
    std::vector<std::string> problems;  // one line each: a target not sent, no client, notify_cmd
};

// Sends a run's events from this machine (the laptop): to the notify targets through
// notify_send.sh run with the local `sh`, and to notify_cmd, each event once.
class LocalNotifier {
  public:
    struct Options {
        std::vector<NotifyTarget> targets;
        std::string notify_cmd;  // run with `sh -c`, the event's JSON on stdin; empty: none
        std::string sent_file;   // the ids sent from here, one a line (kept across --resume);
                                 // empty: none kept, every send() sends
        std::string log_file;    // notify_send.sh's log: one line per try; empty: not kept
        NotifyTiming timing;
        int cmd_timeout_s = 60;  // notify_cmd's bound (its process group is killed then)
    };

    explicit LocalNotifier(Options options) : options_(std::move(options)) {}

    // Sends `event` unless its id is in the sent file, then adds the id there (also when a
    // target failed: each event is tried once, with its retries; a failure never throws). The
    // URLs go only into a 0600 file of a private temp dir, removed before this returns. Blocks
    // while the targets are tried (at most about a minute per unreachable target); `stop` set
    // by another thread ends it early. Throws mlt::Error (io) only when no temp file or
    // process can be made, or the sent file cannot be written; a pending signal for mlt throws
    // mlt::Error (interrupted), as run_child does.
    NotifyOutcome send(const NotifyEvent& event, const std::atomic<bool>* stop = nullptr);

    // Whether the id of `event` is in the sent file.
    bool was_sent(const NotifyEvent& event) const;

  private:
    Options options_;
};

}  // namespace mlt
