// Incremental transfers: a file whose size and mtime already match on the other side is not
// moved. Both directions keep mtimes to the nanosecond (pax headers), so equality is exact.

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <unordered_map>

#include "internal.h"
#include "mlt/transfer/transfer.h"
#include "mlt/util/sha256.h"
#include "mlt/util/shell.h"

namespace mlt {

namespace {

int64_t mtime_ns(const struct stat& st) {
    return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}

std::vector<std::string> remote_paths(const std::vector<UploadItem>& items) {
    std::vector<std::string> paths;
    paths.reserve(items.size());
    for (const auto& item : items) paths.push_back(item.remote_path);
    return paths;
}

}  // namespace

void changed_for_upload_ahead(Remote& remote, const std::string& remote_base,
                              const std::vector<UploadItem>& items, bool guess) {
    stat_remote_files_ahead(remote, remote_base, remote_paths(items), guess);
}

std::vector<UploadItem> changed_for_upload(Remote& remote, const std::string& remote_base,
                                           const std::vector<UploadItem>& items) {
    const std::vector<std::string> paths = remote_paths(items);
    std::unordered_map<std::string, RemoteFileInfo> there;
    for (auto& info : stat_remote_files(remote, remote_base, paths)) there[info.path] = info;
    std::vector<UploadItem> changed;
    for (const auto& item : items) {
        struct stat st {};
        auto it = there.find(item.remote_path);
        // A local file that cannot be stat'ed is kept: upload() reports it properly.
        if (it == there.end() || ::stat(item.local_path.c_str(), &st) != 0 ||
            static_cast<uint64_t>(st.st_size) != it->second.size ||
            mtime_ns(st) != it->second.mtime_ns)
            changed.push_back(item);
    }
    return changed;
}

namespace {

// The names a test carries, at most, as they stand in its command line: over exec channels
// (a server without a control shell) that line is one argument of `sh -c`, which Linux caps
// at 128 KiB. Beyond this, the one round trip it would save is little beside the listing of
// that many files.
constexpr size_t kMaxTestNames = 96 * 1024;

// An mtime as GNU find's %T@ prints it: seconds, a dot, ten digits (the nanoseconds and a 0).
std::string find_time(const struct timespec& t) {
    std::string ns = std::to_string(t.tv_nsec);
    return std::to_string(t.tv_sec) + "." + std::string(9 - ns.size(), '0') + ns + "0";
}

// The records both sides hash, as GNU find's -printf writes them: "SIZE MTIME ./NAME\0".
constexpr const char* kFindRecord = "%s %T@ %p\\0";

// A local file's record in that form, without its NUL.
std::string find_record(const struct stat& st, const std::string& name) {
    return std::to_string(st.st_size) + " " + find_time(st.st_mtim) + " " + name;
}

// Adds a record and its NUL to `digest`.
void hash_record(Sha256& digest, const std::string& record) {
    digest.update(record);
    digest.update(std::string_view("\0", 1));
}

}  // namespace

std::optional<std::string> uploads_current_test(
    const std::map<std::string, std::vector<UploadItem>>& plan) {
    Sha256 want;
    // Per base: the names on stdin, one find per batch, each record "SIZE MTIME ./NAME\0" (the
    // format travels in $MLT_M, so it needs no quoting inside `sh -c '...'`).
    std::string listing;
    size_t total = 0;
    for (const auto& [base, items] : plan) {
        if (items.empty()) continue;
        std::string names;
        for (const auto& item : items) {
            struct stat st {};
            if (::stat(item.local_path.c_str(), &st) != 0 || st.st_mtim.tv_sec < 0)
                return std::nullopt;
            const std::string name = "./" + item.remote_path;
            hash_record(want, find_record(st, name));
            names += name + '\0';
            if (total + names.size() > kMaxTestNames) return std::nullopt;
        }
        const std::string literal = printf_literal(names);
        total += literal.size();
        if (total > kMaxTestNames) return std::nullopt;
        listing += "( cd -- " + shell_quote_path(base) + " 2>/dev/null && printf " + literal +
                   " | " + transfer_detail::find_each_named("-printf \"$MLT_M\"") + " ); ";
    }
    if (listing.empty()) return std::string("true");
    return "[ \"$(export MLT_M='" + std::string(kFindRecord) + "'; { " + listing +
           "} | sha256sum 2>/dev/null | cut -c 1-64)\" = " + want.hex_digest() + " ]";
}

std::optional<TreeDigest> local_tree_digest(const std::string& local_base,
                                            const std::vector<std::string>& own_names,
                                            size_t max_files) {
    namespace fs = std::filesystem;
    std::vector<std::string> records;
    std::error_code ec;
    if (!fs::exists(fs::symlink_status(local_base, ec)))
        return TreeDigest{Sha256().hex_digest(), 0};
    fs::recursive_directory_iterator it(local_base, ec), end;
    if (ec) return std::nullopt;
    for (; it != end; it.increment(ec)) {
        if (ec) return std::nullopt;
        const std::string rel = it->path().lexically_relative(local_base).generic_string();
        if (it.depth() == 0 &&
            std::find(own_names.begin(), own_names.end(), rel) != own_names.end()) {
            it.disable_recursion_pending();
            continue;
        }
        struct stat st {};
        if (::lstat(it->path().c_str(), &st) != 0) return std::nullopt;
        if (!S_ISREG(st.st_mode)) continue;
        if (st.st_mtim.tv_sec < 0 || records.size() >= max_files) return std::nullopt;
        records.push_back(find_record(st, "./" + rel));
    }
    if (ec) return std::nullopt;
    std::sort(records.begin(), records.end());
    Sha256 digest;
    for (const auto& record : records) hash_record(digest, record);
    return TreeDigest{digest.hex_digest(), records.size()};
}

std::string remote_tree_digest(const std::string& remote_dir) {
    return "cd -- " + shell_quote_path(remote_dir) +
           " 2>/dev/null && { LC_ALL=C find . -type f \\( -readable -printf '" + kFindRecord +
           "' -o -printf 'u\\0' \\) || printf 'x\\0'; } | LC_ALL=C sort -z | sha256sum "
           "2>/dev/null | cut -c 1-64";
}

bool local_copy_differs(const std::string& local_path, const RemoteFileInfo& info) {
    struct stat st {};
    return ::lstat(local_path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) ||
           static_cast<uint64_t>(st.st_size) != info.size || mtime_ns(st) != info.mtime_ns;
}

std::vector<std::string> changed_for_download(const std::vector<RemoteFileInfo>& remote_files,
                                              const std::string& local_base) {
    std::vector<std::string> changed;
    for (const auto& info : remote_files)
        if (local_copy_differs(local_base + "/" + info.path, info)) changed.push_back(info.path);
    return changed;
}

}  // namespace mlt
