// collect_results(): what a job left on the remote comes home: its archive (checked against
// the sha256 the job recorded), its log dir, and download_files.
#include <spdlog/spdlog.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "mlt/config/settings.h"
#include "mlt/train/run/download_record.h"
#include "mlt/train/run/remote_job.h"
#include "mlt/train/watch/gpu_watch.h"
#include "mlt/transfer/progress.h"
#include "mlt/transfer/transfer.h"
#include "mlt/util/paths.h"
#include "mlt/util/remote_name.h"
#include "mlt/util/shell.h"
#include "mlt/util/text.h"
#include "remote_scripts.h"

namespace fs = std::filesystem;

namespace mlt {

namespace {

void add(TransferStats& total, const TransferStats& more) {
    total.files += more.files;
    total.bytes += more.bytes;
}

// Whether the collection fetches an archive first: one is expected and this run's job
// recorded its sha256.
bool fetches_archive(const TrainPlan& plan, const JobResult& result) {
    return !plan.local_archive.empty() && !result.sha256.empty();
}

// Whether the log pull fetches MLTK's CLI log first (beside the log dir the job recorded).
bool fetches_cli_log(const TrainPlan& plan, const std::string& recorded_log_dir) {
    return plan.mltk_train && !recorded_log_dir.empty();
}

// The previous run's archive was moved aside when this run took the lock: whatever lies
// there now without a recorded hash is not a verified result of this run.
void no_archive_notice(const TrainPlan& plan, const JobResult& result, Reporter& reporter) {
    const std::string run = result.run_id.empty() ? "-" : result.run_id;
    reporter.notice("no archive: run " + run + " of " + plan.model + " recorded none");
}

void logs_notice(const TrainPlan& plan, const SyncResult& logs, Reporter& reporter) {
    reporter.notice("logs: " + plan.local_logs + ": " + describe(logs));
}

// The archive, only when this run's job recorded its sha256, and never through a remote
// symlink (the job may have left one pointing anywhere). Returns why it was not collected
// (nullopt: collected, or none was recorded): the caller collects the rest, then throws it,
// so that nothing presents an older local archive as this run's.
std::optional<Error> collect_archive(Remote& remote, const TrainPlan& plan, const JobResult& result,
                                     Reporter& reporter, TransferStats& total) {
    if (!fetches_archive(plan, result)) {
        no_archive_notice(plan, result, reporter);
        return std::nullopt;
    }
    const std::string remote_archive = remote_path_in(plan.remote_dir, plan.archive);
    TransferProgress progress("archive", 1, 0);
    FetchOptions options;
    options.progress = &progress;
    options.expect_sha256 = result.sha256;
    options.follow_links = false;
    const FetchResult got = fetch_file(remote, remote_archive, plan.local_archive, options);
    progress.dismiss();
    const std::string run = result.run_id.empty() ? "-" : result.run_id;
    if (got.found == RemoteEntry::file) {
        add(total, {1, got.size});
        reporter.notice("archive: " + plan.local_archive);
        return std::nullopt;
    }
    if (got.found == RemoteEntry::symlink)
        return tampered_error(
            "the archive " + remote_archive + " of run " + run + " on " + remote.name(),
            "it became a symlink after the job recorded its sha256; not "
            "collected, and " +
                plan.local_archive + " is not this run's result");
    return remote_error("run " + run + " recorded an archive, but " + remote_archive +
                            " is no longer a file on " + remote.name() + "; not collected, and " +
                            plan.local_archive + " is not this run's result",
                        "something removed it after the job ended; look at the console log");
}

// The remote log dir into the local one (pull_logs), with its notice.
void collect_logs(Remote& remote, const TrainPlan& plan, const JobResult& result,
                  const CompressionChoice& compression, Reporter& reporter, TransferStats& total,
                  LinkPool* links) {
    const std::string run = result.run_id.empty() ? "-" : result.run_id;
    const LogsPull pulled =
        pull_logs(remote, plan, result.log_dir, compression, PullReport::shown, links);
    add(total, pulled.cli_log);
    if (!pulled.log_dir_known) {
        reporter.notice("logs: none; the job of run " + run +
                        " ended before it chose its log dir (see the console log)");
        return;
    }
    add(total, pulled.logs.moved);
    logs_notice(plan, pulled.logs, reporter);
    if (const std::string told = checkpoints_summary(pulled.checkpoints); !told.empty())
        reporter.notice(told);
}

// The remote path of a download_files `from`: `$NAME` and `${NAME}` expanded by the remote's
// environment, as MLTK's expandvars does there (a name it lacks stays as it is). awk reads
// the path from the environment: nothing in it runs as shell code.
std::string expanded_remote_path(Remote& remote, const std::string& from) {
    if (from.find('$') == std::string::npos) return from;
    // As Python's os.path.expandvars does (expand_vars.sh): download_files pairs name their
    // remote side this way.
    const RemoteOutput out = remote.run(shell_assignment("P", shell_quote(from)) + "export P\n" +
                                        std::string(scripts::util_expand_vars));
    if (out.exit_status != 0)
        throw remote_failure(remote, "expanding download_files path " + from, out.exit_status,
                             out.err);
    if (out.out.empty() || out.out.size() > kMaxRemoteName ||
        out.out.find_first_of(std::string("\0\n", 2)) != std::string::npos)
        throw tampered_error("the expansion of " + from + " on " + remote.name(),
                             "'" + printable(out.out, 200) + "' is no path");
    return out.out;
}

// The collection of download_files: what it moved, what it found not as the job recorded
// it, and the run's reporter for its warnings.
struct DownloadFilesCollection {
    Reporter& reporter;
    TransferStats& total;
    std::vector<std::string> wrong;
    void add_wrong(const std::string& entry, const std::vector<std::string>& paths) {
        for (const auto& p : paths)
            wrong.push_back("'" + printable(p, 200) + "' of '" + entry + "'");
    }
};

// The files of a pair that the job recorded, or null (no record: they come unchecked).
const ExpectedHashes* recorded_pair(const DownloadRecord* record, size_t index) {
    if (!record) return nullptr;
    static const ExpectedHashes kNone;
    auto it = record->pairs.find(index);
    return it == record->pairs.end() ? &kNone : &it->second;
}

// One `from|to` pair of download_files (the `index`th pair): a file, or a directory copied as
// a whole; with a record, only what the job recorded, each file with its recorded sha256.
void collect_pair(Remote& remote, const TrainPlan& plan, const std::string& entry,
                  const TransferSpec& spec, const DownloadRecord* record, size_t index,
                  const CompressionChoice& compression, DownloadFilesCollection& c) {
    // As MLTK's abspath in the remote dir, after the expansion (the job's, where it recorded
    // one): `$LOGNAME.dl` is in the remote dir, `$HOME/x` where HOME is.
    std::string path;
    if (record && record->pair_paths.count(index)) path = record->pair_paths.at(index);
    if (path.empty()) path = expanded_remote_path(remote, spec.from);
    const ExpectedHashes* files = recorded_pair(record, index);
    if (files && files->empty()) {
        c.reporter.warning("download_files: '" + entry +
                           "' is not on the remote (it was not there when the job of run " +
                           record->run_id + " ended); nothing downloaded");
        return;
    }
    const std::string from =
        path[0] == '$' ? plan.remote_dir + "/" + path : remote_path_in(plan.remote_dir, path);
    const std::string to = local_path_in(plan.spec_dir, expand_env_vars(spec.to));
    FetchOptions options;
    const bool one_file = files && files->count("");
    if (one_file) {
        options.expect_sha256 = files->at("");
        options.mismatch_is_result = true;
    }
    const FetchResult got = files && !one_file ? FetchResult{RemoteEntry::directory}
                                               : fetch_file(remote, from, to, options);
    if (got.mismatched || (one_file && got.found != RemoteEntry::file)) {
        c.add_wrong(entry, {spec.from});
    } else if (got.found == RemoteEntry::file) {
        add(c.total, {1, got.size});
    } else if (got.found == RemoteEntry::directory) {
        const SyncResult pulled =
            sync_down(remote, from, to, compression, {}, PullReport::shown, nullptr, files);
        add(c.total, pulled.moved);
        c.add_wrong(entry, pulled.not_as_recorded);
        if (!pulled.unrecorded.empty())
            c.reporter.warning("download_files: '" + entry +
                               "': " + std::to_string(pulled.unrecorded.size()) +
                               " file(s) were not there when the job of run " + record->run_id +
                               " ended; not downloaded");
    } else {
        // As in MLTK: a missing file is not the run's failure.
        c.reporter.warning("download_files: '" + entry +
                           "' is not on the remote; nothing downloaded");
    }
}

// The matched files of a glob: with a record, those it names, each placed only with its
// recorded sha256.
void collect_glob(Remote& remote, const TrainPlan& plan, const std::string& entry,
                  const std::vector<RemoteFileInfo>& matched, const DownloadRecord* record,
                  Compression compression, DownloadFilesCollection& c) {
    if (!record) {
        const TransferStats got =
            download_listed(remote, plan.remote_dir, matched, plan.spec_dir, nullptr, compression);
        if (got.files < matched.size())
            c.reporter.warning("download_files: '" + entry +
                               "': " + std::to_string(matched.size() - got.files) + " of " +
                               std::to_string(matched.size()) +
                               " files changed after they were listed; not downloaded");
        add(c.total, got);
        return;
    }
    std::vector<RemoteFileInfo> recorded;
    size_t later = 0;
    for (const auto& f : matched) {
        if (record->globs.count(f.path))
            recorded.push_back(f);
        else
            ++later;
    }
    if (later > 0)
        c.reporter.warning("download_files: '" + entry + "': " + std::to_string(later) +
                           " file(s) were not there when the job of run " + record->run_id +
                           " ended; not downloaded");
    std::vector<std::string> not_placed;
    add(c.total, download_listed_checked(remote, plan.remote_dir, recorded, record->globs,
                                         plan.spec_dir, not_placed, compression));
    c.add_wrong(entry, not_placed);
}

// download_files: the globs match the remote dir's listing (each name through the gate); the
// tar stream that brings them may hold exactly those files, each at most its listed size.
// With the job's record, each file is placed only with the sha256 the job recorded; returns
// the error that the files found otherwise make (thrown after the rest is collected).
std::optional<Error> collect_download_files(Remote& remote, const TrainPlan& plan,
                                            const JobResult& result,
                                            const CompressionChoice& compression,
                                            Reporter& reporter, TransferStats& total) {
    if (plan.download_files.empty()) return std::nullopt;
    const std::string run = result.run_id.empty() ? "-" : result.run_id;
    size_t pair_count = 0;
    for (const auto& entry : plan.download_files)
        if (!parse_transfer_spec(entry, TransferDirection::download).is_glob) ++pair_count;
    const std::optional<DownloadRecord> record =
        read_download_record(remote, plan.remote_dir, plan.model, result.run_id, pair_count);
    if (!record)
        reporter.warning("download_files: the job of run " + run +
                         " recorded no sha256 of them (it was killed, or the host restarted); "
                         "they come unchecked");
    const DownloadRecord* checked = record ? &*record : nullptr;
    std::vector<RemoteFileInfo> remote_files;
    bool listed = false;
    size_t pairs = 0;
    DownloadFilesCollection c{reporter, total, {}};
    for (const auto& entry : plan.download_files) {
        const TransferSpec spec = parse_transfer_spec(entry, TransferDirection::download);
        if (!spec.is_glob) {
            collect_pair(remote, plan, entry, spec, checked, pairs++, compression, c);
            continue;
        }
        if (!listed) remote_files = list_remote_file_info(remote, plan.remote_dir);
        listed = true;
        std::vector<RemoteFileInfo> matched;
        for (const auto& f : remote_files)
            if (glob_match(spec.from, f.path)) matched.push_back(f);
        if (matched.empty()) {
            reporter.warning("download_files: '" + entry + "' matches no remote file");
            continue;
        }
        collect_glob(remote, plan, entry, matched, checked, compression(), c);
    }
    if (c.wrong.empty()) return std::nullopt;
    return remote_error("download_files: " + std::to_string(c.wrong.size()) + " file(s) of run " +
                            run + " on " + remote.name() + " are not as its job recorded them: " +
                            names_in_brief(c.wrong) + "; not downloaded",
                        "something changed them after the job ended; look at the remote dir");
}

// Ends a pull's hold on the host's checkpoint deletions; one that stays ends by itself after
// 10 min.
void end_checkpoint_pull(Remote& remote, const TrainPlan& plan) noexcept {
    try {
        JobDir(remote, plan.remote_dir, plan.model).end_checkpoint_pull();
    } catch (const std::exception& e) {
        spdlog::debug("checkpoints: the pull's hold stays on the host: {}", e.what());
    }
}

}  // namespace

std::string remote_log_dir_of(const TrainPlan& plan, const std::string& recorded) {
    if (!recorded.empty()) return recorded;
    if (!plan.remote_log_dir.empty()) return remote_path_in(plan.remote_dir, plan.remote_log_dir);
    return {};
}

LogsPull pull_logs(Remote& remote, const TrainPlan& plan, const std::string& recorded_log_dir,
                   const CompressionChoice& compression, PullReport report, LinkPool* links) {
    LogsPull pulled;
    // MLTK's CLI log sits beside its models dir: <cache>/cli_logs/train.log, kept locally as
    // train.log. Fetched first: when it exists, it is the local train.log.
    bool have_cli_log = false;
    if (fetches_cli_log(plan, recorded_log_dir)) {
        const fs::path cache = fs::path(recorded_log_dir).parent_path().parent_path();
        if (auto size = download_file_if_present(remote, (cache / "cli_logs/train.log").string(),
                                                 plan.local_logs + "/train.log")) {
            pulled.cli_log = {1, *size};
            have_cli_log = true;
        }
    }
    const std::string log_dir = remote_log_dir_of(plan, recorded_log_dir);
    if (log_dir.empty()) return pulled;
    pulled.log_dir_known = true;
    // checkpoints: the guard's ledger first (and its deletions held), so that only whole
    // checkpoints that stay come home. Before the guard's first look none is known to be
    // whole: a pull leaves them all there. A run whose host keeps no ledger (started without
    // `checkpoints:`) has all of them pulled, except by the --sync-every pulls.
    const bool checkpoints = plan.checkpoints.on();
    CheckpointLedger ledger;
    if (checkpoints) ledger = JobDir(remote, plan.remote_dir, plan.model).read_checkpoints(true);
    PullFilter leave_out;
    if (checkpoints && (ledger.read || ledger.not_yet || report == PullReport::quiet))
        leave_out = [&](const RemoteFileInfo& info) {
            return pull_leaves_out(plan.checkpoints, ledger, info);
        };
    // Only what is new or changed since the last pull (e.g. a --resume, or `download`).
    const std::vector<std::string> own = local_own_names(plan, have_cli_log);
    try {
        pulled.logs = sync_down(remote, log_dir, plan.local_logs, compression, own, report, links,
                                nullptr, leave_out);
    } catch (...) {
        if (checkpoints) end_checkpoint_pull(remote, plan);
        // What this pull brought before it failed was whole and kept in this ledger: the local
        // copy says so (a push after a failover reads it).
        if (ledger.read) {
            try {
                CheckpointTally unused;
                prune_local_checkpoints(plan.local_logs, plan.checkpoints, ledger,
                                        {own.begin(), own.end()}, unused);
            } catch (const std::exception& e) {
                spdlog::debug("checkpoints: the local ledger stays as it was: {}", e.what());
            }
        }
        throw;
    }
    if (!checkpoints) return pulled;
    end_checkpoint_pull(remote, plan);
    if (ledger.read)
        prune_local_checkpoints(plan.local_logs, plan.checkpoints, ledger, {own.begin(), own.end()},
                                pulled.checkpoints);
    pulled.checkpoints.held_back = pulled.logs.held_back;
    return pulled;
}

std::vector<std::string> local_own_names(const TrainPlan& plan, bool have_cli_log) {
    // The console copy (and MLTK's train.log) are mlt's own: a remote file of the same name
    // is stored aside instead of replacing them.
    std::vector<std::string> own;
    const fs::path console = fs::path(plan.local_console);
    if (console.parent_path() == fs::path(plan.local_logs))
        own.push_back(console.filename().string());
    if (have_cli_log) own.push_back("train.log");
    own.push_back(kMetricsFile);
    own.push_back(kPullStaging);
    if (plan.checkpoints.on()) own.push_back(kLocalLedger);
    return own;
}

bool logs_only_collection(const TrainPlan& plan) {
    return plan.download_files.empty() && !plan.mltk_train && !remote_log_dir_of(plan, "").empty();
}

void collected_in_place(const TrainPlan& plan, const JobResult& result, size_t files,
                        Reporter& reporter) {
    if (!plan.local_archive.empty()) no_archive_notice(plan, result, reporter);
    SyncResult logs;
    logs.unchanged = files;
    logs_notice(plan, logs, reporter);
}

void collect_results_ahead(Remote& remote, const TrainPlan& plan, const JobResult& result,
                           bool guess) {
    const std::string log_dir = remote_log_dir_of(plan, result.log_dir);
    if (!fetches_archive(plan, result) && !fetches_cli_log(plan, result.log_dir) &&
        !log_dir.empty())
        list_remote_file_info_ahead(remote, log_dir, guess);
}

TransferStats collect_results(Remote& remote, const TrainPlan& plan, const JobResult& result,
                              const CompressionChoice& compression, Reporter& reporter,
                              LinkPool* links) {
    TransferStats total;
    // A node of a multi-node run other than rank 0 leaves the archive to rank 0.
    std::optional<Error> no_archive;
    if (!plan.local_archive.empty())
        no_archive = collect_archive(remote, plan, result, reporter, total);
    collect_logs(remote, plan, result, compression, reporter, total, links);
    const std::optional<Error> not_as_recorded =
        collect_download_files(remote, plan, result, compression, reporter, total);
    if (no_archive) throw *no_archive;
    if (not_as_recorded) throw *not_as_recorded;
    return total;
}

}  // namespace mlt
