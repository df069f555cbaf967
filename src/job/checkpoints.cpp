// checkpoints: the job dir's ledger (checkpoints.sh) as a pull reads it, and the hold that
// keeps the guard from deleting what the pull is about to fetch.
#include <climits>
#include <set>
#include <sstream>

#include "job_shell.h"
#include "mlt/job/job.h"
#include "mlt/util/remote_name.h"
#include "mlt/util/text.h"

namespace mlt {

using namespace job_detail;

namespace {

// The ledger's names are remote names like a listing's (remote_name_problem: relative, no
// empty, `.` or `..` part, no control byte), and no longer than 4096 bytes.
bool safe_name(const std::string& name) {
    return name.size() <= 4096 && remote_name_problem(name).empty();
}

}  // namespace

const CheckpointEntry* CheckpointLedger::find(const std::string& name) const {
    const auto it = index.find(name);
    return it == index.end() ? nullptr : &entries[it->second];
}

CheckpointLedger parse_checkpoint_ledger(const std::string& text) {
    CheckpointLedger out;
    out.read = true;
    out.text = text;
    std::istringstream in(text);
    std::set<std::string> names;
    for (std::string line; std::getline(in, line) && out.entries.size() < kMaxLedgerEntries;) {
        std::vector<std::string> f;
        size_t at = 0;
        for (size_t tab; (tab = line.find('\t', at)) != std::string::npos; at = tab + 1)
            f.push_back(line.substr(at, tab - at));
        f.push_back(line.substr(at));
        if (f.size() != 7 || !safe_name(f[0]) || (f[4] != "0" && f[4] != "1" && f[4] != "2") ||
            (f[6] != "kept" && f[6] != "deleted") || f[5].size() > 64)
            continue;
        const auto size = parse_decimal(f[1], 0, LLONG_MAX);
        const auto mtime = parse_decimal(f[2], 0, LLONG_MAX);
        // A name listed again is a forgery: only its first line counts.
        if (!size || !mtime || !names.insert(f[0]).second) continue;
        CheckpointEntry e;
        e.name = f[0];
        e.size = static_cast<uint64_t>(*size);
        e.mtime_s = *mtime;
        e.whole = f[4] == "1";
        e.metric = f[5];
        e.kept = f[6] == "kept";
        e.line = line;
        out.entries.push_back(std::move(e));
    }
    for (size_t i = 0; i < out.entries.size(); ++i) out.index[out.entries[i].name] = i;
    return out;
}

CheckpointLedger JobDir::read_checkpoints(bool hold) {
    ShellCommand c = job_dir_command(remote_dir_, model_);
    c.flag("mlt_hold", hold)
        .add(scripts::job_guard_rules)
        .add(scripts::job_checkpoints)
        .add(scripts::job_ckpt_ledger);
    const std::string out = run_or_fail(remote(), c, "reading the checkpoint ledger").out;
    if (out.rfind("ledger\n", 0) != 0) {
        CheckpointLedger none;
        none.not_yet = out == "no ledger yet\n";
        return none;
    }
    return parse_checkpoint_ledger(out.substr(7));
}

void JobDir::end_checkpoint_pull() {
    ShellCommand c = job_dir_command(remote_dir_, model_);
    c.flag("mlt_done", true).add(scripts::job_ckpt_ledger);
    run_or_fail(remote(), c, "ending the checkpoint pull");
}

}  // namespace mlt
