// Writing a downloaded tar stream to disk without trusting it.
//
// Every directory is opened component by component with O_NOFOLLOW relative to the one
// before, starting from local_base, so no entry can be written through a symlink: neither
// one the archive tried to plant (symlinks are never created) nor one already on disk.

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <set>

#include "internal.h"
#include "mlt/transfer/progress.h"
#include "mlt/util/remote_name.h"

namespace mlt::transfer_detail {

namespace {

constexpr size_t kWriteChunk = 1024 * 1024;
// The permission bits a downloaded file keeps.
constexpr mode_t kKeptMode = 0775;

const char* type_name(mode_t type) {
    switch (type) {
        case AE_IFDIR:
            return "directory";
        case AE_IFLNK:
            return "symlink";
        case AE_IFCHR:
            return "character device";
        case AE_IFBLK:
            return "block device";
        case AE_IFIFO:
            return "fifo";
        case AE_IFSOCK:
            return "socket";
        default:
            return "special file";
    }
}

// A file being written under its temporary name; removed unless commit() succeeded.
class PartFile {
  public:
    PartFile(int dir_fd, std::string name, std::string shown)
        : dir_fd_(dir_fd),
          name_(std::move(name)),
          part_(part_name(name_)),
          shown_(std::move(shown)) {
        // A stale part file of an earlier run (or anything an attacker placed there) is
        // replaced, never opened: O_EXCL + O_NOFOLLOW.
        ::unlinkat(dir_fd_, part_.c_str(), 0);
        fd_ = UniqueFd(::openat(dir_fd_, part_.c_str(),
                                O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
        if (!fd_) throw io_error("cannot write " + shown_ + ": " + std::strerror(errno));
    }
    PartFile(const PartFile&) = delete;
    PartFile& operator=(const PartFile&) = delete;
    ~PartFile() {
        if (committed_) return;
        fd_.reset();
        ::unlinkat(dir_fd_, part_.c_str(), 0);
    }

    void write(const char* data, size_t size) { write_all(fd_.get(), data, size, shown_); }

    // Sets mode and mtime, then renames the file into place.
    void commit(mode_t mode, const timespec& mtime) {
        const timespec times[2] = {{0, UTIME_NOW}, mtime};
        if (::fchmod(fd_.get(), mode) != 0 || ::futimens(fd_.get(), times) != 0 ||
            fd_.reset() != 0 || ::renameat(dir_fd_, part_.c_str(), dir_fd_, name_.c_str()) != 0)
            throw io_error("cannot write " + shown_ + ": " + std::strerror(errno));
        committed_ = true;
    }

  private:
    int dir_fd_;
    std::string name_;
    std::string part_;
    std::string shown_;
    UniqueFd fd_;
    bool committed_ = false;
};

class Extractor {
  public:
    Extractor(archive* a, int base_fd, const std::string& local_base, const Remote& remote,
              TarWanted wanted, TransferStats& stats, TransferProgress* progress)
        : wanted_(std::move(wanted)),
          a_(a),
          base_fd_(base_fd),
          local_base_(local_base),
          remote_(remote),
          stats_(stats),
          progress_(progress) {
        buffer_.resize(kWriteChunk);
    }

    void run(bool* damaged) {
        for (;;) {
            archive_entry* entry = nullptr;
            int r = archive_read_next_header(a_, &entry);
            if (r == ARCHIVE_EOF) return;
            // ARCHIVE_WARN: a name that is not valid in the locale's charset; the raw bytes
            // are still there, and they are what the file system wants.
            if (r < ARCHIVE_WARN) {
                *damaged = true;
                throw damaged_stream();
            }
            extract_entry(entry, damaged);
        }
    }

  private:
    Error damaged_stream() const {
        const char* detail = archive_error_string(a_);
        return remote_error("the tar stream from " + remote_.name() + " is damaged" +
                                (detail ? std::string(": ") + detail : std::string()),
                            "run with -v for details");
    }

    Error tampered(const std::string& why) const {
        return tampered_error("the tar stream from " + remote_.name(), "it holds " + why);
    }

    Error refuse(const std::string& name, const std::string& why) const {
        return remote_error("refusing to write '" + name + "' from " + remote_.name() + ": " + why,
                            "the remote files may have been tampered with; nothing outside " +
                                local_base_ + " was written");
    }

    // Writes one entry: only one that was asked for (a named file, each once, or anything
    // under a named directory), never a file larger than announced (one that grew since it was
    // listed is skipped: the caller finds it missing).
    void extract_entry(archive_entry* entry, bool* damaged) {
        const char* raw = archive_entry_pathname(entry);
        if (!raw) throw tampered("an entry without a usable name");
        std::string name = raw;
        const mode_t type = archive_entry_filetype(entry);
        if (type == AE_IFDIR && name.size() > 1 && name.back() == '/') name.pop_back();
        check_remote_name(name, "the tar stream from " + remote_.name());
        const uint64_t announced = admit(name);
        // A link or special file is never written. An honest tar sends one when a listed
        // file was replaced by it after the listing: skipped, and missing from the count.
        if (archive_entry_hardlink(entry) || (type != AE_IFREG && type != AE_IFDIR)) {
            spdlog::warn("skipping {} '{}' from {}",
                         archive_entry_hardlink(entry) ? "hard link" : type_name(type),
                         printable(name, 200), remote_.name());
            return;
        }
        const std::vector<std::string> parts = split_path(name);
        if (type == AE_IFDIR) {
            if (announced != kAnySize)
                throw tampered("a directory '" + printable(name, 200) +
                               "' where a file was asked for");
            open_dir(parts, parts.size(), name, (archive_entry_perm(entry) & kKeptMode) | 0700);
            return;
        }
        if (archive_entry_size_is_set(entry) &&
            static_cast<uint64_t>(archive_entry_size(entry)) > announced) {
            spdlog::debug("{} from {} grew after it was listed; not written", printable(name),
                          remote_.name());
            return;
        }
        UniqueFd dir = open_dir(parts, parts.size() - 1, name, 0755);
        write_file(entry, dir.get(), parts.back(), name, announced, damaged);
    }

    // The size an entry may have (kAnySize under a named directory) when it was asked for;
    // throws tampered otherwise. A named file is admitted once.
    uint64_t admit(const std::string& name) {
        auto exact = wanted_.files.find(name);
        if (exact != wanted_.files.end()) {
            const uint64_t size = exact->second;
            wanted_.files.erase(exact);
            done_.insert(name);
            return size;
        }
        for (const auto& tree : wanted_.trees)
            if (tree == "." || name == tree || name.compare(0, tree.size() + 1, tree + "/") == 0)
                return kAnySize;
        throw tampered("'" + printable(name, 200) + "', which was not asked for" +
                       (done_.count(name) ? " again" : ""));
    }

    UniqueFd open_dir(const std::vector<std::string>& parts, size_t count, const std::string& name,
                      mode_t last_mode) {
        return open_dirs(
            base_fd_, parts, count, last_mode, local_base_,
            [&](const std::string& where) { return refuse(name, where + " is a symlink"); });
    }

    void write_file(archive_entry* entry, int dir_fd, const std::string& leaf,
                    const std::string& name, uint64_t announced, bool* damaged) {
        const std::string target = local_base_ + "/" + name;
        struct stat st;
        if (::fstatat(dir_fd, leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
            // The rename would replace the link itself, not its target; refusing still keeps
            // a link the user set up from silently becoming a plain file.
            if (S_ISLNK(st.st_mode)) throw refuse(name, target + " is a symlink");
            if (S_ISDIR(st.st_mode)) throw io_error("cannot write " + target + ": is a directory");
        }
        PartFile part(dir_fd, leaf, target);
        uint64_t written = 0;
        for (;;) {
            la_ssize_t n = archive_read_data(a_, buffer_.data(), buffer_.size());
            if (n == 0) break;
            if (n < 0) {
                *damaged = true;
                throw damaged_stream();
            }
            if (static_cast<uint64_t>(n) > announced - written)
                throw tampered("more bytes of '" + printable(name, 200) + "' than its header said");
            part.write(buffer_.data(), static_cast<size_t>(n));
            written += static_cast<uint64_t>(n);
            if (progress_) progress_->add_bytes(static_cast<uint64_t>(n));
        }
        timespec mtime{archive_entry_mtime(entry), archive_entry_mtime_nsec(entry)};
        // The mirror of tar_upload.cpp: libarchive 3.6 reads GNU tar's "-1.5" as -1 s plus
        // 0.5 s. The true time is -2 s plus 0.5 s.
        if (mtime.tv_sec < 0 && mtime.tv_nsec > 0) {
            mtime.tv_sec -= 1;
            mtime.tv_nsec = 1000000000 - mtime.tv_nsec;
        }
        // No setuid, setgid or sticky bit, and nothing world-writable, whatever the remote said.
        part.commit(archive_entry_perm(entry) & kKeptMode, mtime);
        stats_.files++;
        stats_.bytes += written;
        if (progress_) progress_->file_done();
    }

    TarWanted wanted_;            // what may still come
    std::set<std::string> done_;  // the named files that came
    archive* a_;
    int base_fd_;
    const std::string& local_base_;
    const Remote& remote_;
    TransferStats& stats_;
    TransferProgress* progress_;
    std::vector<char> buffer_;
};

}  // namespace

UniqueFd open_dirs(int base_fd, const std::vector<std::string>& parts, size_t count,
                   mode_t last_mode, const std::string& shown_base,
                   const std::function<Error(const std::string&)>& on_symlink) {
    auto shown = [&](size_t n) {
        std::string s = shown_base;
        for (size_t i = 0; i < n; ++i) s += "/" + parts[i];
        return s;
    };
    UniqueFd dir(::fcntl(base_fd, F_DUPFD_CLOEXEC, 0));
    if (!dir) throw io_error("cannot open " + shown_base + ": " + std::strerror(errno));
    for (size_t i = 0; i < count; ++i) {
        const char* part = parts[i].c_str();
        const int flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
        int fd = ::openat(dir.get(), part, flags);
        if (fd < 0 && errno == ENOENT) {
            const mode_t mode = i + 1 == count ? last_mode : 0755;
            // EEXIST: created meanwhile; the openat below decides what it is.
            if (::mkdirat(dir.get(), part, mode) != 0 && errno != EEXIST)
                throw io_error("cannot create " + shown(i + 1) + ": " + std::strerror(errno));
            fd = ::openat(dir.get(), part, flags);
        }
        if (fd < 0) {
            const int saved = errno;
            struct stat st;
            if (::fstatat(dir.get(), part, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
                throw on_symlink(shown(i + 1));
            throw io_error("cannot create " + shown(i + 1) + ": " + std::strerror(saved));
        }
        dir = UniqueFd(fd);
    }
    return dir;
}

void extract_tar(archive* a, int base_fd, const std::string& local_base, const Remote& remote,
                 TarWanted wanted, TransferStats& stats, TransferProgress* progress,
                 bool* damaged) {
    Extractor(a, base_fd, local_base, remote, std::move(wanted), stats, progress).run(damaged);
}

}  // namespace mlt::transfer_detail
