// The job's record of its download_files: parsing and reading (download_record.h).
#include "mlt/train/run/download_record.h"

#include <cctype>

#include "mlt/config/settings.h"
#include "mlt/job/job.h"
#include "mlt/transfer/transfer.h"
#include "mlt/util/remote_name.h"
#include "mlt/util/shell.h"
#include "mlt/util/text.h"

namespace mlt {

namespace {

// The record file is read up to this size; more is no honest record. What is kept of it
// costs about three times its size here (map nodes and strings).
constexpr uint64_t kMaxRecordBytes = 16ull * 1024 * 1024;
// A job's record file is missing: no record.
constexpr int kNoRecord = 3;

// The next space-separated word of `rest` (which loses it and the space).
std::string_view word(std::string_view& rest) {
    const size_t space = rest.find(' ');
    const std::string_view w = rest.substr(0, space);
    rest = space == std::string_view::npos ? std::string_view() : rest.substr(space + 1);
    return w;
}

bool is_sha256(std::string_view s) {
    if (s.size() != 64) return false;
    for (char c : s)
        if (!std::isxdigit(static_cast<unsigned char>(c)) ||
            std::isupper(static_cast<unsigned char>(c)))
            return false;
    return true;
}

bool parse_index(std::string_view s, size_t& index) {
    if (s.empty() || s.size() > 6) return false;
    index = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return false;
        index = index * 10 + static_cast<size_t>(c - '0');
    }
    return true;
}

}  // namespace

bool add_download_record(std::string_view record, DownloadRecord& into, size_t pairs) {
    std::string_view rest = record;
    const std::string_view kind = word(rest);
    size_t index = 0;
    if (kind == "r") {
        into.run_id = std::string(rest);
        return true;
    }
    if (kind == "f") {
        const std::string_view sha = word(rest);
        if (!is_sha256(sha) || !remote_name_problem(rest).empty()) return false;
        into.globs[std::string(rest)] = std::string(sha);
        return true;
    }
    if (kind == "x") {
        if (!parse_index(word(rest), index) || index >= pairs || rest.size() > kMaxRemoteName)
            return false;
        into.pair_paths[index] = std::string(rest);
        return true;
    }
    if (kind == "p") {
        if (!parse_index(word(rest), index) || index >= pairs) return false;
        const std::string_view sha = word(rest);
        if (!is_sha256(sha) || (!rest.empty() && !remote_name_problem(rest).empty())) return false;
        into.pairs[index][std::string(rest)] = std::string(sha);
        return true;
    }
    return false;
}

std::optional<DownloadRecord> read_download_record(Remote& remote, const std::string& remote_dir,
                                                   const std::string& model,
                                                   const std::string& run_id, size_t pairs) {
    const std::string path = remote_path_in(remote_dir, JobPaths(model).downloads);
    const std::string what = "the download_files record " + path + " on " + remote.name();
    const std::string command = "F=" + shell_quote_path(path) + "; [ -f \"$F\" ] || exit " +
                                std::to_string(kNoRecord) + "; head -c " +
                                std::to_string(kMaxRecordBytes + 1) + " -- \"$F\"";
    DownloadRecord record;
    uint64_t bytes = 0;
    std::string err;
    const int status = stream_remote_records(remote, what, command, err, [&](std::string_view r) {
        bytes += r.size() + 1;
        if (bytes > kMaxRecordBytes)
            throw tampered_error(what, "it is larger than " + format_bytes(kMaxRecordBytes));
        if (!add_download_record(r, record, pairs))
            throw tampered_error(what, "'" + printable(std::string(r), 200) + "' is no record");
    });
    if (status == kNoRecord) return std::nullopt;
    if (status != 0) throw remote_failure(remote, "reading " + path, status, err);
    if (record.run_id != run_id)
        throw tampered_error(what, "it names run '" + printable(record.run_id, 200) +
                                       "', not this run (" + run_id + ")");
    return record;
}

}  // namespace mlt
