#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "mlt/config/settings.h"
#include "mlt/job/job.h"
#include "mlt/train/cost/run_ledger.h"
#include "mlt/transfer/sync.h"

namespace mlt {

// Everything a run needs, worked out locally before any remote action: names, where files
// go on both sides, what to upload, the job's wrapper, and what to tell the user.
struct TrainPlan {
    std::string model;  // model name (my_model, my_model-test)
    // A new run's id, chosen before it starts (its rented machine is labelled with it);
    // empty: the run picks one.
    std::string run_id;
    std::string remote_dir;  // remote working directory (may start with ~)
    // Placeholders filled; relative to remote_dir unless absolute/~. Empty: the one the job
    // recorded (it asked the remote MLTK).
    std::string remote_log_dir;
    std::string archive;          // <model>.mltk.zip, relative to remote_dir
    std::string spec_dir;         // local: where the archive and download_files land
    std::string local_logs;       // local log dir
    std::string local_console;    // local copy of the console log (MLTK's name)
    std::string local_archive;    // empty: the archive is not collected (ranks > 0 of a gang)
    std::string local_state_dir;  // local_state_dir(model): which run the console copy is
    bool spec_here = true;        // false: --resume by a NAME whose spec is not here; no uploads
    std::map<std::string, std::vector<UploadItem>> uploads;        // remote base -> files
    WrapperSpec wrapper;                                           // run_id is filled in by the run
    std::vector<std::pair<std::string, std::string>> environment;  // for shutdown_cmds
    bool create_venv = false;                                      // for shutdown_cmds
    bool mltk_train = false;  // train_cmd is MLTK's: its CLI log is collected too
    std::vector<std::string> download_files;
    std::vector<std::string> shutdown_cmds;
    std::string compression = "zstd";
    bool clean = false;
    bool force = false;
    bool resume = false;
    bool no_wait = false;
    bool raw_console = false;  // --raw-console: the console log reaches the terminal unfiltered
    int reconnect_timeout_s = 600;  // 0: a lost link ends the run at once
    int max_restarts = 0;           // restarts of a job found lost, by this run itself
    // --restore: the local log dir goes to the remote log dir before the job starts.
    bool restore = false;
    bool failover = true;          // false: --no-failover (a lost host ends the run as before)
    int sync_every_s = 0;          // --sync-every: seconds between pulls while training; 0: off
    int transfer_connections = 0;  // transfer.connections / --connections; 0: auto
    // notify, notify_cmd, notify_from (docs/usage.md, "Notifications").
    std::vector<NotifyTarget> notify;
    std::string notify_cmd;
    NotifyFrom notify_from = NotifyFrom::host;
    std::vector<StopRule> stop_when;  // watch.stop_when
    CheckpointSettings checkpoints;   // checkpoints: retention and wholeness
    // watch.on_failure with its defaults (failure_rules_in_effect): what a failed or lost
    // attempt means.
    std::vector<FailureRule> on_failure;
    int watch_every_s = 15;       // watch.every; 0: no samples
    double idle_gpu_minutes = 0;  // watch.idle_gpu_minutes; 0: off
    bool stop_idle = false;       // watch.stop_idle
    double silent_minutes = 0;    // watch.silent_minutes: the host's guard watches; 0: off
    bool stop_silent = false;     // watch.stop_silent
    // unattended_shutdown_minutes: the host's guard runs shutdown_cmds when no mlt collected
    // the ended job within it; 0: off.
    double unattended_shutdown_minutes = 0;
    std::string owner;          // "user@host pid N", recorded in the lock
    std::string resume_line;    // `mlt ssh ... train MODEL --resume`, shell-quoted
    std::string stop_line;      // `mlt ssh ... stop MODEL`
    double price_per_hour = 0;  // USD per hour of the host (0: not known)
    // Its machines are rented from the settings' provider: their release says what became of
    // each, in place of the billing reminder.
    bool rented = false;
    // "vast" or "runpod": the guard's unattended shutdown also stops the rented machine the
    // run is on (rented_id; provider.teardown is not keep). Empty: it does not.
    std::string unattended_release;
    // The rented machine's instance the run is on (its guard stops only that one); empty: the
    // host is not one the provider rented (a failover to the user's host).
    std::string rented_id;
    Budget budget;  // --max-hours, --max-cost: the run stops there (exit 5)
};

}  // namespace mlt
