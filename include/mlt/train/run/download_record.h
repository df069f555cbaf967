#pragma once
// The record a job writes of its download_files at its end (JobPaths::downloads): the
// sha256 of each file they name, as the job left it; the collection places a copy only
// when it has that sha256 (docs/remote-protocol.md, "download_files record").

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "mlt/ssh/remote.h"
#include "mlt/transfer/sync.h"

namespace mlt {

struct DownloadRecord {
    std::string run_id;
    // The files of the globs: path relative to the remote dir -> sha256.
    ExpectedHashes globs;
    // Per pair (its index among the pairs of download_files): its remote side as the job
    // expanded it, and its files (a path under the directory, "" for a file) -> sha256.
    std::map<size_t, std::string> pair_paths;
    std::map<size_t, ExpectedHashes> pairs;
};

// Adds one record of the file ("r RUN", "f SHA PATH", "x INDEX PATH", "p INDEX SHA PATH");
// false when it is none of these, its name or hash is no such thing, or its INDEX is not
// below `pairs` (the number of pairs in download_files).
bool add_download_record(std::string_view record, DownloadRecord& into, size_t pairs);

// The record of `model`'s job in `remote_dir`, whose download_files have `pairs` pairs;
// nullopt when the job wrote none (it was killed, or has no download_files). Throws tampered
// when it is malformed, larger than 16 MiB (a record of some 200,000 files; what it costs
// here stays within tens of MiB), or names another run than `run_id`.
std::optional<DownloadRecord> read_download_record(Remote& remote, const std::string& remote_dir,
                                                   const std::string& model,
                                                   const std::string& run_id, size_t pairs);

}  // namespace mlt
