// A staging dir of mlt's own beside the files it fills, and the step that moves a staged
// file into its place: the pulls of a log dir and the download_files globs.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "internal.h"
#include "mlt/util/sha256.h"

namespace mlt::transfer_detail {

std::string open_staging(int base_fd, const std::string& local_base, const char* name,
                         UniqueFd& staging_fd) {
    const std::string path = local_base + "/" + name;
    struct stat st;
    if (::fstatat(base_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISDIR(st.st_mode))
        ::unlinkat(base_fd, name, 0);
    if (::mkdirat(base_fd, name, 0700) != 0 && errno != EEXIST)
        throw io_error("cannot create " + path + ": " + std::strerror(errno));
    staging_fd = UniqueFd(::openat(base_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!staging_fd) throw io_error("cannot open " + path + ": " + std::strerror(errno));
    return path;
}

std::string staged_sha256(int staging_fd, const std::string& staged) {
    UniqueFd fd(::openat(staging_fd, staged.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd) return {};
    Sha256 hash;
    char buffer[1 << 16];
    for (;;) {
        const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
        if (n == 0) return hash.hex_digest();
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return {};
        hash.update(buffer, static_cast<size_t>(n));
    }
}

bool publish_staged(int staging_fd, const std::string& staged, int base_fd,
                    const std::string& local_base, const std::string& local) {
    const std::vector<std::string> parts = split_path(local);
    bool link = false;
    UniqueFd dir;
    try {
        dir = open_dirs(base_fd, parts, parts.size() - 1, 0755, local_base,
                        [&](const std::string& where) {
                            link = true;
                            return io_error(where + " is a symlink");
                        });
    } catch (const Error&) {
        if (!link) throw;
        return false;
    }
    struct stat st;
    if (::fstatat(dir.get(), parts.back().c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        (S_ISLNK(st.st_mode) || S_ISDIR(st.st_mode)))
        return false;
    if (::renameat(staging_fd, staged.c_str(), dir.get(), parts.back().c_str()) != 0)
        throw io_error("cannot write " + local_base + "/" + local + ": " + std::strerror(errno));
    return true;
}

}  // namespace mlt::transfer_detail
