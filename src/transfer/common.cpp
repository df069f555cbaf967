// What the transfer sources share: compression names, free space, the byte queue, paths.

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "internal.h"
#include "mlt/util/interrupt.h"
#include "mlt/util/sha256.h"

namespace mlt {

std::optional<Compression> parse_compression(std::string_view text) {
    if (text == "none") return Compression::none;
    if (text == "gzip") return Compression::gzip;
    if (text == "zstd") return Compression::zstd;
    return std::nullopt;
}

void check_free_space(const std::string& local_path, uint64_t bytes) {
    std::filesystem::path at = local_path.empty() ? "." : local_path;
    struct statvfs fs;
    while (::statvfs(at.c_str(), &fs) != 0) {
        if (errno != ENOENT || !at.has_relative_path()) return;  // not ours to judge here
        at = at.parent_path().empty() ? "." : at.parent_path();
    }
    const uint64_t free = static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize;
    if (bytes <= free && free - bytes >= kFreeSpaceMargin) return;
    auto mib = [](uint64_t b) { return std::to_string((b + (1 << 20) - 1) >> 20) + " MiB"; };
    throw io_error("not enough free space for " + local_path + ": the remote announced " +
                       mib(bytes) + ", and " + mib(free) + " are free here (" +
                       mib(kFreeSpaceMargin) + " are kept free)",
                   "free some space, or check what the remote dir holds");
}

int64_t floor_seconds(int64_t ns) {
    return ns >= 0 ? ns / 1000000000 : -((-ns + 999999999) / 1000000000);
}

}  // namespace mlt

namespace mlt::transfer_detail {

const char* tar_compression_flag(Compression compression) {
    switch (compression) {
        case Compression::gzip:
            return "-z";
        case Compression::zstd:
            return "--zstd";
        case Compression::none:
            break;
    }
    return "";
}

// The waits below end when the other side calls close() or stop(): download() guarantees
// both on every path (including exceptions), and the network side has its own timeouts.
bool ByteQueue::push(std::string_view data) {
    std::unique_lock<std::mutex> lock(mutex_);
    // A chunk larger than the whole capacity is still accepted into an empty queue. The
    // producer is a channel's reader: while a slow disk holds it here, a signal still ends
    // the transfer within a poll.
    while (!changed_.wait_for(lock, std::chrono::milliseconds(100), [&] {
        return stopped_ || chunks_.empty() || queued_ + data.size() <= capacity_;
    })) {
        lock.unlock();
        throw_if_interrupted();
        lock.lock();
    }
    if (stopped_) return false;
    chunks_.emplace_back(data);
    queued_ += data.size();
    changed_.notify_all();
    return true;
}

void ByteQueue::close() {
    std::lock_guard<std::mutex> lock(mutex_);
    closed_ = true;
    changed_.notify_all();
}

bool ByteQueue::pop(std::string& chunk) {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return !chunks_.empty() || closed_ || stopped_; });
    if (chunks_.empty() || stopped_) return false;
    chunk = std::move(chunks_.front());
    chunks_.pop_front();
    queued_ -= chunk.size();
    changed_.notify_all();
    return true;
}

void ByteQueue::stop() {
    std::lock_guard<std::mutex> lock(mutex_);
    stopped_ = true;
    chunks_.clear();
    queued_ = 0;
    changed_.notify_all();
}

std::vector<std::string> split_path(std::string_view path) {
    std::vector<std::string> parts;
    size_t start = 0;
    while (start <= path.size()) {
        size_t slash = path.find('/', start);
        size_t end = slash == std::string_view::npos ? path.size() : slash;
        std::string_view part = path.substr(start, end - start);
        if (!part.empty() && part != ".") parts.emplace_back(part);
        if (slash == std::string_view::npos) break;
        start = slash + 1;
    }
    return parts;
}

bool has_dotdot(std::string_view path) {
    for (const auto& part : split_path(path))
        if (part == "..") return true;
    return false;
}

// find prints tv_sec, '.', tv_nsec: before 1970 the fraction still counts forward from the
// (negative) whole second, so "-2.5" is -1.5 s, not -2.5 s.
bool parse_mtime(std::string_view text, int64_t& ns) {
    size_t dot = text.find('.');
    std::string_view whole = text.substr(0, dot);
    std::string_view frac =
        dot == std::string_view::npos ? std::string_view() : text.substr(dot + 1);
    bool negative = !whole.empty() && whole[0] == '-';
    if (negative) whole.remove_prefix(1);
    if (whole.empty()) return false;
    // Seconds past this (the year 2262) would overflow the nanoseconds.
    constexpr int64_t kMaxSeconds = (INT64_MAX - 999999999) / 1000000000;
    int64_t sec = 0;
    for (char c : whole) {
        if (c < '0' || c > '9') return false;
        sec = sec * 10 + (c - '0');
        if (sec > kMaxSeconds) return false;
    }
    int64_t nsec = 0;
    for (size_t i = 0; i < 9; ++i) {
        char c = i < frac.size() ? frac[i] : '0';
        if (c < '0' || c > '9') return false;
        nsec = nsec * 10 + (c - '0');
    }
    ns = (negative ? -sec : sec) * 1000000000 + nsec;
    return true;
}

bool add_upload_filter(archive* a, Compression compression) {
    if (compression == Compression::none) return true;
    const bool zstd = compression == Compression::zstd;
    return (zstd ? archive_write_add_filter_zstd(a) : archive_write_add_filter_gzip(a)) ==
               ARCHIVE_OK &&
           archive_write_set_filter_option(a, zstd ? "zstd" : "gzip", "compression-level", "1") ==
               ARCHIVE_OK;
}

void write_all(int fd, const char* data, size_t size, const std::string& shown) {
    while (size > 0) {
        ssize_t n = ::write(fd, data, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) throw io_error("cannot write " + shown + ": " + std::strerror(errno));
        data += n;
        size -= static_cast<size_t>(n);
    }
}

UniqueFd open_base(const std::string& local_base) {
    std::error_code ec;
    std::filesystem::create_directories(local_base, ec);
    UniqueFd fd(::open(local_base.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!fd)
        throw io_error("cannot create " + local_base + ": " +
                       (ec ? ec.message() : std::string(std::strerror(errno))));
    return fd;
}

std::string part_name(const std::string& name) {
    const std::string suffix = ".mlt-part-" + std::to_string(::getpid());
    // A name near NAME_MAX would make the temporary name too long to create; the prefix
    // of the name is enough to recognise it.
    const size_t room = NAME_MAX - 1 - suffix.size();
    return "." + name.substr(0, room) + suffix;
}

std::string side_name(const std::string& leaf, const std::string& suffix, size_t extra) {
    const size_t room = NAME_MAX - 1 - suffix.size() - extra;
    if (leaf.size() <= room) return "." + leaf + suffix;
    Sha256 hash;
    hash.update(leaf);
    const std::string tag = "~" + hash.hex_digest().substr(0, 16);
    return "." + leaf.substr(0, room - tag.size()) + tag + suffix;
}

void check_items(const std::vector<UploadItem>& items) {
    for (const auto& item : items) {
        const std::string& rp = item.remote_path;
        if (rp.empty() || rp[0] == '/' || has_dotdot(rp) || split_path(rp).empty())
            throw usage_error("cannot upload " + item.local_path + " as '" + rp +
                                  "': the remote path must be relative and stay inside the "
                                  "remote directory",
                              "fix the upload_files entry");
        // Opening (not just stat-ing) is the only reliable readability check.
        UniqueFd fd(::open(item.local_path.c_str(), O_RDONLY | O_CLOEXEC));
        struct stat st;
        if (!fd || ::fstat(fd.get(), &st) != 0)
            throw io_error("cannot read " + item.local_path + ": " + std::strerror(errno));
        if (!S_ISREG(st.st_mode))
            throw io_error("cannot upload " + item.local_path + ": not a regular file");
    }
}

timespec to_timespec(int64_t ns) {
    int64_t sec = ns / 1000000000;
    int64_t nsec = ns % 1000000000;
    if (nsec < 0) {
        sec -= 1;
        nsec += 1000000000;
    }
    return {static_cast<time_t>(sec), static_cast<long>(nsec)};
}

}  // namespace mlt::transfer_detail
