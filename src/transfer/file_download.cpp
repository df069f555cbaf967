// download_file(): one remote file, in one round trip, resumed where an earlier attempt was
// cut off.
//
// The bytes go to `.<name>.mlt-resume-<mtime>` (the remote file's mtime in nanoseconds) and
// the file is renamed into place when complete. A transfer that stops early (lost link,
// Ctrl+C, even kill -9) leaves that file: the next attempt asks for the bytes after it and
// keeps them only if the remote file still has that mtime and at least that size;
// otherwise it starts over.

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "commands.h"
#include "internal.h"
#include "mlt/transfer/progress.h"
#include "mlt/util/sha256.h"
#include "mlt/util/shell.h"
#include "mlt/util/text.h"
#include "remote_scripts.h"

namespace mlt {

using namespace transfer_detail;

namespace {

// The header "<size> <mtime>" is some 40 bytes; anything much longer is not one.
constexpr size_t kMaxHeader = 256;

// The resume file names of `leaf` start with this (see side_name).
std::string resume_prefix(const std::string& leaf) {
    return side_name(leaf, ".mlt-resume-", 21);
}

// The mtime in a resume file's name: integer nanoseconds as std::to_string wrote them (not
// find's "<seconds>.<fraction>" that parse_mtime reads); false for anything else.
bool parse_ns(const std::string& text, int64_t& ns) {
    if (text.empty() || text.size() > 20) return false;
    errno = 0;
    char* end = nullptr;
    const long long v = std::strtoll(text.c_str(), &end, 10);
    const bool sign_or_digit = text[0] == '-' || (text[0] >= '0' && text[0] <= '9');
    if (errno != 0 || end != text.c_str() + text.size() || !sign_or_digit) return false;
    ns = v;
    return true;
}

// Thrown by the sink when the remote file is not the one the resume file was cut from.
struct StartOver {};

class Fetch {
  public:
    Fetch(int dir_fd, const std::string& leaf, std::string shown, TransferProgress* progress)
        : dir_fd_(dir_fd),
          prefix_(resume_prefix(leaf)),
          shown_(std::move(shown)),
          progress_(progress) {}

    // Finds the resume file of an earlier attempt: returns its size (0: none) and sets
    // `mtime` to the remote mtime in its name. Other resume files of this name (and
    // anything under such a name that is not a plain file) are removed.
    uint64_t existing(int64_t& mtime) {
        uint64_t size = 0;
        // A new open of the directory, not a dup(): a dup shares the read position, so the
        // second attempt after a StartOver would start at the end and find nothing.
        const int fd = ::openat(dir_fd_, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR* dir = fd < 0 ? nullptr : ::fdopendir(fd);
        if (!dir) {
            if (fd >= 0) ::close(fd);
            return 0;
        }
        std::vector<std::string> stale;
        while (const dirent* e = ::readdir(dir)) {
            const std::string name = e->d_name;
            if (name.compare(0, prefix_.size(), prefix_) != 0) continue;
            struct stat st;
            int64_t ns = 0;
            if (name_.empty() && parse_ns(name.substr(prefix_.size()), ns) &&
                ::fstatat(dir_fd_, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                S_ISREG(st.st_mode)) {
                name_ = name;
                mtime = ns;
                size = static_cast<uint64_t>(st.st_size);
            } else {
                stale.push_back(name);
            }
        }
        ::closedir(dir);
        for (const auto& name : stale) ::unlinkat(dir_fd_, name.c_str(), 0);
        return size;
    }

    // Takes the command's output: the header line, then the bytes.
    void feed(std::string_view d, uint64_t offset, int64_t resume_mtime) {
        if (!header_done_) {
            header_.append(d);
            const size_t nl = header_.find('\n');
            if (nl == std::string::npos && header_.size() > kMaxHeader)
                throw tampered_error(
                    "reading " + shown_,
                    "a header line longer than " + std::to_string(kMaxHeader) + " bytes");
            if (nl == std::string::npos) return;
            start(header_.substr(0, nl), offset, resume_mtime);
            d = std::string_view(header_).substr(nl + 1);
            header_done_ = true;
            write(d);
            header_.clear();
            return;
        }
        write(d);
    }

    // Closes the complete file with the remote mtime; returns the SHA-256 of what now lies
    // under the temporary name (read back from the disk, not the bytes as they came) when
    // asked, else "".
    std::string finish(bool hash) {
        if (!fd_) open_fresh();  // an empty remote file sends no bytes at all
        if (received_ != announced_)
            throw remote_error("reading " + shown_ + ": it shrank while it was read (" +
                                   std::to_string(received_) + " of " + std::to_string(announced_) +
                                   " bytes)",
                               "run the command again once nothing writes the file");
        const timespec times[2] = {{0, UTIME_NOW}, to_timespec(remote_mtime_)};
        ::futimens(fd_.get(), times);  // best effort: a wrong mtime only costs a resend
        if (fd_.reset() != 0)
            throw io_error("cannot write " + shown_ + ": " + std::strerror(errno));
        return hash ? hash_file() : std::string();
    }

    // Renames the finished file into place.
    uint64_t commit(const std::string& leaf) {
        if (::renameat(dir_fd_, name_.c_str(), dir_fd_, leaf.c_str()) != 0)
            throw io_error("cannot write " + shown_ + ": " + std::strerror(errno));
        if (progress_) progress_->file_done();
        return received_;
    }

    // After a failure: a resume file with bytes in it is kept for the next attempt.
    void keep_for_resume() {
        if (!fd_) return;
        struct stat st;
        const bool keep = ::fstat(fd_.get(), &st) == 0 && st.st_size > 0;
        fd_.reset();
        if (!keep) ::unlinkat(dir_fd_, name_.c_str(), 0);
    }

    // Drops the bytes (a file that failed its check): no resume file is left.
    void discard() {
        fd_.reset();
        if (!name_.empty()) ::unlinkat(dir_fd_, name_.c_str(), 0);
    }

    bool resumed() const { return resumed_; }

  private:
    void start(const std::string& header, uint64_t offset, int64_t resume_mtime) {
        const size_t sp = header.find(' ');
        const auto listed = sp == std::string::npos
                                ? std::nullopt
                                : parse_decimal(header.substr(0, sp), 0, LLONG_MAX);
        if (!listed || !parse_mtime(header.substr(sp + 1), remote_mtime_))
            throw remote_error("unexpected reply when reading " + shown_ + ": " +
                               printable(header, 200));
        const auto size = static_cast<uint64_t>(*listed);
        announced_ = size;
        const bool tail = offset > 0 && offset <= size;
        if (tail && remote_mtime_ != resume_mtime) throw StartOver{};
        if (tail) {
            fd_ = UniqueFd(
                ::openat(dir_fd_, name_.c_str(), O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC));
            struct stat st;
            if (!fd_ || ::fstat(fd_.get(), &st) != 0 || !S_ISREG(st.st_mode) ||
                static_cast<uint64_t>(st.st_size) != offset)
                throw StartOver{};
            resumed_ = true;
            received_ = offset;
        } else {
            open_fresh();
        }
        if (progress_) progress_->add_bytes(received_);
    }

    void open_fresh() {
        if (!name_.empty()) ::unlinkat(dir_fd_, name_.c_str(), 0);
        name_ = prefix_ + std::to_string(remote_mtime_);
        ::unlinkat(dir_fd_, name_.c_str(), 0);
        // O_EXCL + O_NOFOLLOW: whatever was placed under this name is replaced, never opened.
        fd_ = UniqueFd(::openat(dir_fd_, name_.c_str(),
                                O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666));
        if (!fd_) throw io_error("cannot write " + shown_ + ": " + std::strerror(errno));
    }

    void write(std::string_view d) {
        // The command sends at most the size it announced: more is not an honest host's.
        if (d.size() > announced_ - received_)
            throw tampered_error("reading " + shown_, "the remote sent more than the " +
                                                          std::to_string(announced_) +
                                                          " bytes it announced");
        write_all(fd_.get(), d.data(), d.size(), shown_);
        received_ += d.size();
        if (progress_) progress_->add_bytes(d.size());
    }

    // The SHA-256 of the file under the temporary name, the one the rename puts in place.
    std::string hash_file() const {
        UniqueFd in(::openat(dir_fd_, name_.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
        if (!in) throw io_error("cannot read " + shown_ + ": " + std::strerror(errno));
        Sha256 hash;
        std::vector<char> buf(1 << 20);
        for (;;) {
            const ssize_t n = ::read(in.get(), buf.data(), buf.size());
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) throw io_error("cannot read " + shown_ + ": " + std::strerror(errno));
            if (n == 0) return hash.hex_digest();
            hash.update(buf.data(), static_cast<size_t>(n));
        }
    }

    int dir_fd_;
    std::string prefix_;
    std::string name_;  // the resume file in use (or found)
    std::string shown_;
    TransferProgress* progress_;
    std::string header_;
    bool header_done_ = false;
    bool resumed_ = false;
    int64_t remote_mtime_ = 0;
    uint64_t announced_ = 0;  // the size in the header
    uint64_t received_ = 0;
    UniqueFd fd_;
};

// The directories `open_base` is about to create for `dir` (those missing now, deepest
// last). Removed again, if still empty, when nothing lands in them: a missing remote file
// leaves no trace locally.
class NewDirs {
  public:
    explicit NewDirs(std::filesystem::path dir) {
        std::error_code ec;
        for (; !dir.empty() && !std::filesystem::exists(dir, ec); dir = dir.parent_path()) {
            made_.push_back(dir);
            if (dir == dir.parent_path()) break;
        }
    }
    ~NewDirs() {
        for (const auto& d : made_) ::rmdir(d.c_str());  // deepest first; fails if not empty
    }
    NewDirs(const NewDirs&) = delete;
    NewDirs& operator=(const NewDirs&) = delete;
    void keep() { made_.clear(); }

  private:
    std::vector<std::filesystem::path> made_;
};

}  // namespace

std::string transfer_detail::fetch_command(const std::string& remote_path, uint64_t offset,
                                           bool follow) {
    return shell_assignment("f", shell_quote_path(remote_path)) +
           shell_assignment("o", std::to_string(offset)) +
           shell_assignment("l", follow ? "1" : "''") +
           shell_assignment("mlt_st_missing", std::to_string(kMissingStatus)) +
           shell_assignment("mlt_st_symlink", std::to_string(kSymlinkStatus)) +
           shell_assignment("mlt_st_dir", std::to_string(kDirectoryStatus)) +
           std::string(scripts::transfer_fetch_file);
}

FetchResult fetch_file(Remote& remote, const std::string& remote_path,
                       const std::string& local_path, const FetchOptions& options) {
    std::filesystem::path target(local_path);
    std::filesystem::path dir = target.parent_path();
    if (dir.empty()) dir = ".";
    const std::string leaf = target.filename().string();
    if (leaf.empty() || leaf == "." || leaf == "..")
        throw io_error("cannot write " + local_path + ": not a file name");
    NewDirs new_dirs(dir);
    UniqueFd dir_fd = open_base(dir.string());

    for (int attempt = 0;; ++attempt) {
        Fetch fetch(dir_fd.get(), leaf, local_path, options.progress);
        int64_t resume_mtime = 0;
        uint64_t offset = fetch.existing(resume_mtime);
        if (attempt > 0) offset = 0;  // the resume file is stale: replaced as soon as data comes
        BoundedTail err;
        StreamJob job;
        job.command = fetch_command(remote_path, offset, options.follow_links);
        job.on_stdout = [&](std::string_view d) { fetch.feed(d, offset, resume_mtime); };
        job.on_stderr = err.sink();
        job.data_stream = "the download of " + remote_path;
        int status = -1;
        try {
            status = remote.stream_parallel({job}).front();
        } catch (const StartOver&) {
            if (attempt > 0) throw io_error("cannot resume " + local_path);
            continue;  // the remote file changed since the cut: fetch it whole
        } catch (const Error& e) {
            // What a lying host sent is not kept to be resumed from.
            if (e.kind() == ErrorKind::tampered)
                fetch.discard();
            else
                fetch.keep_for_resume();
            throw;
        } catch (...) {
            fetch.keep_for_resume();
            throw;
        }
        if (status == kMissingStatus) return {RemoteEntry::missing, 0};
        if (status == kSymlinkStatus) return {RemoteEntry::symlink, 0};
        if (status == kDirectoryStatus) return {RemoteEntry::directory, 0};
        if (status != 0) {
            fetch.keep_for_resume();
            throw remote_failure(remote, "reading " + remote_path, status, err.str());
        }
        if (fetch.resumed()) spdlog::info("resumed {} after {} bytes", local_path, offset);
        const std::string& expect = options.expect_sha256;
        const std::string digest = fetch.finish(!expect.empty());
        if (digest != expect) {
            // Checked on the very file the rename would put in place: the local file stays
            // what it was.
            fetch.discard();
            if (options.mismatch_is_result) return {RemoteEntry::file, 0, true};
            throw remote_error("the downloaded " + leaf + " does not match its remote sha256 (" +
                                   digest + " vs " + expect +
                                   "); the local file was left as it was",
                               "fetch it again with 'mlt ssh ... download MODEL'");
        }
        const uint64_t size = fetch.commit(leaf);
        new_dirs.keep();
        return {RemoteEntry::file, size};
    }
}

std::optional<uint64_t> download_file_if_present(Remote& remote, const std::string& remote_path,
                                                 const std::string& local_path,
                                                 TransferProgress* progress) {
    FetchOptions options;
    options.progress = progress;
    const FetchResult got = fetch_file(remote, remote_path, local_path, options);
    if (got.found != RemoteEntry::file) return std::nullopt;
    return got.size;
}

uint64_t download_file(Remote& remote, const std::string& remote_path,
                       const std::string& local_path, TransferProgress* progress) {
    auto size = download_file_if_present(remote, remote_path, local_path, progress);
    if (!size)
        throw remote_failure(remote, "reading " + remote_path, kMissingStatus,
                             "no such regular file: " + remote_path,
                             "check the path; it is relative to the remote dir");
    return *size;
}

}  // namespace mlt
