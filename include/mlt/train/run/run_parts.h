#pragma once
// The state of one run that TrainRun keeps by concern: what reaches the terminal, how the run
// ends, where the run moved. Each part is owned by one TrainRun; the protocol states are
// enums, never bare bools.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mlt/job/job.h"
#include "mlt/train/local/history.h"
#include "mlt/train/local/local_state.h"
#include "mlt/train/run/status_line.h"
#include "mlt/transfer/transfer.h"
#include "mlt/util/console_filter.h"
#include "mlt/util/reporter.h"

namespace mlt {

// How the run as a whole ends.
enum class Ending {
    completed,    // every phase ran (whatever the training's status)
    detached,     // --no-wait returned while the job runs
    interrupted,  // Ctrl+C: the job was stopped, then collected (130)
    limited,      // --max-hours / --max-cost reached: the job was stopped, then collected (5)
    ruled,        // a watch.stop_when rule fired: the job was stopped, then collected (6)
};

// How the job ended, as its files tell.
struct JobOutcome {
    std::optional<int> exit_status;  // none: not known (yet), or it recorded none
    bool setup_failed = false;       // it ended before its training started
    bool stopped_by_mlt = false;     // mlt's stop (a Ctrl+C) sent the signal that ended it
};

// What of the run reaches the terminal: the job's console (filtered), shutdown_cmds' log, the
// live line.
struct TerminalSide {
    TerminalSide(const std::string& local_console, const std::string& state_dir, bool raw,
                 Reporter& reporter)
        : local(local_console, state_dir), shown(raw), shutdown_shown(raw), status(reporter) {}
    LocalConsole local;
    // What of the job's console log, and of shutdown_cmds' log, reaches the terminal (the
    // local copy keeps every byte): no sequence that acts on the terminal, unless
    // --raw-console. A new attempt of the job starts afresh.
    ConsoleFilter shown;
    ConsoleFilter shutdown_shown;
    // The live line while the job is followed (elapsed time and cost, the last pull): set by
    // the watchers of the run, cleared when the follow ends.
    StatusLine status;
};

// What the run brought home of its job.
enum class Collected {
    nothing,
    results,       // the job's results (logs, download_files)
    with_archive,  // ... and an archive of this run
};

class Failover;

// Where the run is: on the host it started on, or moved there by a failover.
struct Relocation {
    Failover* failover = nullptr;  // the standby hosts, when the run may fail over
    enum class Where { first_host, moved } where = Where::first_host;
    std::string came_from;  // the host the run failed over from (the lock says so)
    // The hosts this run left by a watch.on_failure rule (exclude_host), in its history records.
    std::vector<ExcludedHost> excluded{};
    // Said once: the local log dir's files of this run cannot be told from earlier runs'.
    mutable bool unknown_logs_said = false;
    bool moved() const { return where == Where::moved; }
};

// How the run ends and what it did: the summary and the history record read it.
struct RunOutcome {
    JobOutcome job;
    std::optional<JobResult> followed;  // what the follow's last segment read at the job's end
    Ending ending = Ending::completed;
    std::optional<int> exit_code;  // set once the run is over
    std::string end_note;          // how the run ended, for the summary ("m finished with ...")
    // The limit or rule that stopped the job ("--max-hours 1 (reached after ...)"); `ending`
    // says which kind.
    std::string stop_note;
    Collected collected = Collected::nothing;
    // The watch.on_failure rule that judged the last failed or lost attempt (its describe()).
    std::string failure_rule;
    // A lost job was not restarted because max_restarts was reached (said at the collection).
    enum class Restarts { left, used_up } restarts = Restarts::left;
    // Who ran shutdown_cmds when this mlt did not: the host's guard, unattended (the job's
    // result says so), or an earlier mlt.
    enum class ShutdownBy { mlt, host_guard } shutdown_by = ShutdownBy::mlt;
    TransferStats up, down;
    int reconnects = 0;  // how often the link was opened again
    // mlt left on a signal (SIGTERM, SIGHUP, Ctrl+C twice) without stopping or collecting.
    bool left = false;
};

}  // namespace mlt
