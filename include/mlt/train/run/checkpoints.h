#pragma once
// checkpoints (docs/usage.md, "Checkpoints"): what a pull of the log dir does with them on
// this machine. The host's guard keeps the ledger and deletes there (checkpoints.sh); a pull
// reads the ledger first, fetches only checkpoints it lists as whole and kept in the version
// listed, then deletes the local copies of those the guard deleted.

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "mlt/config/settings.h"
#include "mlt/job/job.h"

namespace mlt {

struct RemoteFileInfo;
struct UploadItem;

// The local copy of the ledger in the local log dir, one of mlt's own names there.
inline constexpr char kLocalLedger[] = ".mlt-checkpoints";

// Whether `path` (relative to the log dir) is one of the checkpoints: the pattern as
// `find -path` reads it (fnmatch without FNM_PATHNAME: `*` crosses `/`).
bool is_checkpoint(const CheckpointSettings& c, const std::string& path);

// Whether a pull leaves the listed file out: a checkpoint that the ledger does not list as
// whole and kept in this very version (size, mtime to the second).
bool pull_leaves_out(const CheckpointSettings& c, const CheckpointLedger& ledger,
                     const RemoteFileInfo& info);

// What the checkpoints came to at one pull: the host's side from its ledger, this
// machine's from what this pull (and the ones before, `.mlt-checkpoints`) deleted here.
struct CheckpointTally {
    bool known = false;        // a ledger was read
    size_t host_kept = 0;      // on the host now
    size_t host_deleted = 0;   // deleted there by the guard, in all
    uint64_t host_freed = 0;   // their bytes
    size_t held_back = 0;      // this pull left them on the host (not whole, or going)
    size_t local_deleted = 0;  // local copies deleted by this run's pulls
    uint64_t local_freed = 0;
};

// Deletes under `local_logs` the local copies of the checkpoints the ledger says the guard
// deleted: only a name that is a checkpoint, reached without a symlink, a regular file of
// the ledger's size and mtime (a file this machine changed or put there stays), never one
// under `own_names` (mlt's own names in the local log dir: local_own_names). Then keeps
// the ledger as `.mlt-checkpoints` there, each line whose local copy a pull of the run
// deleted marked with a last field `here`. Sets `tally` (the local side: every pull's
// deletions, from those marks). Throws mlt::Error (io) when the ledger cannot be written.
void prune_local_checkpoints(const std::string& local_logs, const CheckpointSettings& c,
                             const CheckpointLedger& ledger, const std::set<std::string>& own_names,
                             CheckpointTally& tally);

// The seed of a new host's ledger (checkpoints.sh: JOBDIR/ckpt.seed) for what a push (--restore,
// a failover) sends from `local_logs`: a line for each pushed checkpoint (`pushed`: relative
// names and local files) as the local ledger (`.mlt-checkpoints`) lists that very version (size,
// mtime): WHOLE 2 when it lists it as not whole (a copy of a save that was cut), else 1 (a pull
// brings home only whole ones, and writes the ledger it read even when it fails midway; a file
// the ledger does not know is the user's), with its metric for keep_best; then the ledger's
// deleted lines (at most 2000), so that the summary goes on counting them. Empty when there is
// nothing to say.
std::string checkpoint_seed(const std::string& local_logs, const CheckpointSettings& c,
                            const std::vector<UploadItem>& pushed);

// "checkpoints: 2 kept on the host (28 deleted there, 1.2 GiB freed); 5 local copies
// deleted (190.0 MiB freed)"; empty when no ledger was read.
std::string checkpoints_summary(const CheckpointTally& tally);

}  // namespace mlt
