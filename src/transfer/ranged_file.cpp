// The local helpers of ranged transfers: partial names, range reads and hashes, the log line.

#include "ranged_file.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "internal.h"
#include "mlt/util/sha256.h"

namespace mlt::transfer_detail {

std::pair<std::string, std::string> split_last(const std::string& path) {
    const size_t slash = path.rfind('/');
    if (slash == std::string::npos) return {".", path};
    return {slash == 0 ? "/" : path.substr(0, slash), path.substr(slash + 1)};
}

std::pair<std::string, std::string> partial_beside(const std::string& path) {
    const auto [dir, leaf] = split_last(path);
    return {dir, dir + "/" + side_name(leaf, ".mlt-ranges", 6)};
}

size_t read_at(int fd, char* buffer, uint64_t size, uint64_t at, const std::string& shown) {
    ssize_t n;
    do {
        n = ::pread(fd, buffer, size, static_cast<off_t>(at));
    } while (n < 0 && errno == EINTR);
    if (n <= 0)
        throw io_error("cannot read " + shown + ": " +
                       (n == 0 ? "it shrank" : std::string(std::strerror(errno))));
    return static_cast<size_t>(n);
}

std::string local_range_hash(int fd, const Range& r, const std::string& shown) {
    std::vector<char> buf(1024 * 1024);
    Sha256 hash;
    for (uint64_t at = r.offset, end = r.offset + r.length; at < end;) {
        const size_t n =
            read_at(fd, buf.data(), std::min<uint64_t>(buf.size(), end - at), at, shown);
        hash.update(buf.data(), n);
        at += n;
    }
    return hash.hex_digest();
}

RangeStats log_done(const char* way, const std::string& shown, RangeStats s, uint64_t moved,
                    Steady::time_point began) {
    s.bytes_moved = moved;
    const double seconds = std::chrono::duration<double>(Steady::now() - began).count();
    spdlog::debug(
        "{} {}: {} range(s), {} kept from before, {} moved again, {} link(s), "
        "{:.1f} MB/s",
        way, shown, s.ranges, s.kept, s.moved_again, s.links,
        seconds > 0 ? static_cast<double>(moved) / seconds / 1e6 : 0.0);
    return s;
}

}  // namespace mlt::transfer_detail
