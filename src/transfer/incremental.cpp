// Incremental transfers: a file whose size and mtime already match on the other side is not
// moved. Both directions keep mtimes to the nanosecond (pax headers), so equality is exact.

#include <sys/stat.h>

#include <unordered_map>

#include "mlt/transfer/transfer.h"

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
                              const std::vector<UploadItem>& items) {
    stat_remote_files_ahead(remote, remote_base, remote_paths(items));
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

std::vector<std::string> changed_for_download(const std::vector<RemoteFileInfo>& remote_files,
                                              const std::string& local_base) {
    std::vector<std::string> changed;
    for (const auto& info : remote_files) {
        struct stat st {};
        const std::string local = local_base + "/" + info.path;
        if (::lstat(local.c_str(), &st) != 0 || !S_ISREG(st.st_mode) ||
            static_cast<uint64_t>(st.st_size) != info.size || mtime_ns(st) != info.mtime_ns)
            changed.push_back(info.path);
    }
    return changed;
}

}  // namespace mlt
