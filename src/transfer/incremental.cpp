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
#include "remote_scripts.h"

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

// `bytes` as an argument of `printf %b` that prints exactly them: a backslash doubled, a byte
// outside printable ASCII (a NUL) as \0ooo. Unlike a printf format (printf_literal), a `%`
// stays as it is.
std::string printf_b_argument(std::string_view bytes) {
    std::string out;
    out.reserve(bytes.size() + bytes.size() / 8);
    for (char c : bytes) {
        const auto u = static_cast<unsigned char>(c);
        if (c == '\\') {
            out += "\\\\";
        } else if (u < 0x20 || u > 0x7e) {
            const char octal[] = {'\\',
                                  '0',
                                  static_cast<char>('0' + (u >> 6)),
                                  static_cast<char>('0' + ((u >> 3) & 7)),
                                  static_cast<char>('0' + (u & 7)),
                                  '\0'};
            out += octal;
        } else {
            out += c;
        }
    }
    return out;
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
    // Per base: the base and its names for `printf %b`, each ./NAME and a NUL; one find per
    // batch of them prints each record "SIZE MTIME ./NAME\0".
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
        const std::string literal = shell_quote(printf_b_argument(names));
        total += literal.size();
        if (total > kMaxTestNames) return std::nullopt;
        listing += " " + shell_quote_path(base) + " " + literal;
    }
    if (listing.empty()) return std::string("true");
    return "(" + shell_assignment("F", shell_quote(kFindRecord)) +
           shell_assignment("w", want.hex_digest()) +
           shell_assignment("s", shell_quote(scripts::transfer_find_named)) + "set --" + listing +
           "\n" + std::string(scripts::transfer_uploads_current) + ")";
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
    return shell_assignment("mlt_tree", shell_quote_path(remote_dir)) +
           shell_assignment("mlt_f", shell_quote(kFindRecord)) +
           std::string(scripts::transfer_tree_digest);
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
