// worth_compressing() and small_files_compress(): whether files shrink enough under the
// upload's compressor to pay for the CPU, judged from samples compressed in memory.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <vector>

#include "internal.h"
#include "mlt/transfer/sync.h"

namespace mlt {

using namespace transfer_detail;

namespace {

// Samples of this size are taken at evenly spread offsets (start and end included).
constexpr size_t kSampleSize = 64 * 1024;
constexpr int kSamples = 4;
// Small files are judged together: the head of up to this many, this much of each.
constexpr size_t kSmallSamples = 64;
constexpr size_t kSmallSampleBytes = 4096;

la_ssize_t count_bytes(archive*, void* total, const void*, size_t size) {
    *static_cast<uint64_t*>(total) += size;
    return static_cast<la_ssize_t>(size);
}

// Bytes that `compression` (at the upload's level 1) makes of `data`; nullopt if libarchive
// cannot do it.
std::optional<uint64_t> compressed_size(const std::string& data, Compression compression) {
    ArchiveWritePtr a(archive_write_new());
    if (!a || archive_write_set_format_raw(a.get()) != ARCHIVE_OK) return std::nullopt;
    if (!add_upload_filter(a.get(), compression)) return std::nullopt;
    archive_write_set_bytes_in_last_block(a.get(), 1);
    uint64_t total = 0;
    if (archive_write_open(a.get(), &total, nullptr, &count_bytes, nullptr) != ARCHIVE_OK)
        return std::nullopt;
    EntryPtr entry(archive_entry_new());
    archive_entry_set_pathname(entry.get(), "sample");
    archive_entry_set_filetype(entry.get(), AE_IFREG);
    archive_entry_set_size(entry.get(), static_cast<la_int64_t>(data.size()));
    if (archive_write_header(a.get(), entry.get()) != ARCHIVE_OK ||
        archive_write_data(a.get(), data.data(), data.size()) < 0 ||
        archive_write_close(a.get()) != ARCHIVE_OK)
        return std::nullopt;
    return total;
}

// Already-compressed data (archives, images, most weight files) and random bytes save a few
// per cent at most; below 10 % the compressor's CPU is not worth it, and on a fast link it
// would be the bottleneck (tests/bench/README.md).
bool sample_compresses(const std::string& sample, Compression compression) {
    const auto packed = compressed_size(sample, compression);
    if (!packed) return true;
    return static_cast<double>(*packed) < 0.9 * static_cast<double>(sample.size());
}

}  // namespace

bool worth_compressing(const std::string& path, Compression compression) {
    if (compression == Compression::none) return false;
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    struct stat st;
    // Unreadable: the upload reports it; small: the samples would be the whole file.
    if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return true;
    const uint64_t size = static_cast<uint64_t>(st.st_size);
    if (size < kSampledSize) return true;
    std::string sample;
    std::vector<char> piece(kSampleSize);
    for (int i = 0; i < kSamples; ++i) {
        const uint64_t offset = (size - kSampleSize) / (kSamples - 1) * static_cast<uint64_t>(i);
        const ssize_t n = ::pread(fd.get(), piece.data(), piece.size(), static_cast<off_t>(offset));
        if (n <= 0) return true;
        sample.append(piece.data(), static_cast<size_t>(n));
    }
    return sample_compresses(sample, compression);
}

bool small_files_compress(const std::vector<std::string>& paths, Compression compression) {
    if (compression == Compression::none) return false;
    if (paths.empty()) return true;
    // Up to kSmallSamples files, spread over the list, up to kSmallSampleBytes of each: the
    // way they sit side by side in the tar stream, so that what they share counts too.
    std::string sample;
    std::vector<char> piece(kSmallSampleBytes);
    const size_t count = std::min(paths.size(), kSmallSamples);
    for (size_t i = 0; i < count; ++i) {
        UniqueFd fd(::open(paths[i * paths.size() / count].c_str(), O_RDONLY | O_CLOEXEC));
        if (!fd) continue;
        const ssize_t n = ::read(fd.get(), piece.data(), piece.size());
        if (n > 0) sample.append(piece.data(), static_cast<size_t>(n));
    }
    // Too little to judge (a few tiny files): compress, it costs nothing.
    if (sample.size() < kSmallSampleBytes) return true;
    return sample_compresses(sample, compression);
}

}  // namespace mlt
