#pragma once

#include <optional>
#include <string>
#include <vector>

#include "mlt/train/cost/run_ledger.h"

namespace mlt {

// What the block at the end of a run says (summary_lines).
struct RunSummary {
    std::string model;
    std::string run_id;
    std::string status;  // one sentence: "m finished with exit status 0", "stopped by ..."
    int exit_code = 0;
    std::vector<AttemptRecord> attempts;  // from the RunLedger; may be empty
    double duration_s = -1;               // < 0: not known
    std::optional<double> cost;           // none: no price known
    std::string archive;                  // the local archive when this run brought it home
    std::string logs;                     // the local log dir, when the results were collected
    std::string console;                  // the local copy of the console log
    std::string collect_hint;             // when not collected: how to collect ("" for none)
    std::string billing_host;             // the host that may still bill; "": no reminder
    bool detached = false;                // --no-wait left the job running
    std::string gpu_use;                  // "mean 45 %, peak 98 % over 12 samples"; "": none
};

// The summary after a run, one line each (without "mlt: "): the status, the attempts and
// hosts, the duration and cost when known, where the archive and logs are, and the billing
// reminder when `billing_host` is set.
std::vector<std::string> summary_lines(const RunSummary& summary);

// MLTK's reminder after every train that did not power the host off: a machine that runs on
// bills on. `detached`: --no-wait returned while the job runs.
std::string billing_reminder(const std::string& host, bool detached);

// Whether one of `shutdown_cmds` powers the host off or stops the instance: `shutdown`,
// `poweroff`, `halt` (also after `sudo`), `systemctl poweroff|halt`, `vastai stop|destroy`,
// as the command word of one of its commands.
bool powers_host_off(const std::vector<std::string>& shutdown_cmds);

}  // namespace mlt
