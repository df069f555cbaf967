// upload(): one tar stream, generated on demand while the exec channel asks for stdin.

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>
#include <memory>
#include <set>

#include "commands.h"
#include "internal.h"
#include "mlt/transfer/progress.h"
#include "mlt/util/shell.h"
#include "remote_scripts.h"

namespace mlt {

using namespace transfer_detail;

namespace {

// File data is read (and handed to libarchive) in pieces of this size, so memory stays
// bounded whatever the file sizes.
constexpr size_t kReadChunk = 1024 * 1024;

// Produces the archive piece by piece: each call of fill() advances libarchive by one
// header or one chunk of file data and hands out what it wrote.
class TarProducer {
  public:
    TarProducer(const std::vector<UploadItem>& items, TransferProgress* progress,
                Compression compression)
        : items_(items), progress_(progress) {
        archive_.reset(archive_write_new());
        if (!archive_) throw std::bad_alloc();
        // pax: exact (nanosecond) mtimes and names of any length and bytes.
        if (archive_write_set_format_pax(archive_.get()) != ARCHIVE_OK)
            throw fail("cannot start the upload archive");
        if (!add_upload_filter(archive_.get(), compression))
            throw fail(std::string("cannot start the ") +
                       (compression == Compression::zstd ? "zstd" : "gzip") +
                       " compression of the upload");
        // No blocking: every write goes straight to on_write (and from there, as far as it
        // fits, into the channel's buffer) instead of through a 10 KiB block buffer first.
        // That also leaves out the padding to a full block, which would follow a compressed
        // frame and which zstd refuses as trailing garbage.
        archive_write_set_bytes_per_block(archive_.get(), 0);
        if (archive_write_open(archive_.get(), this, nullptr, &TarProducer::on_write, nullptr) !=
            ARCHIVE_OK)
            throw fail("cannot start the upload archive");
        chunk_.resize(kReadChunk);
    }
    // Freeing an unfinished archive makes libarchive write its end marker through on_write:
    // that must happen while pending_ still exists.
    ~TarProducer() { archive_.reset(); }
    TarProducer(const TarProducer&) = delete;  // libarchive holds `this`
    TarProducer& operator=(const TarProducer&) = delete;

    // The InputSource: copies up to `capacity` archive bytes into `buffer`, 0 at the end.
    // Never throws (the channel code is not the place to unwind through); a failure ends
    // the stream early and is rethrown by rethrow_error().
    size_t fill(char* buffer, size_t capacity) {
        size_t n = std::min(capacity, pending_.size() - offset_);
        std::memcpy(buffer, pending_.data() + offset_, n);
        offset_ += n;
        if (offset_ == pending_.size()) {
            pending_.clear();
            offset_ = 0;
        }
        // Then more steps, each written by on_write directly behind what is in `buffer`.
        out_ = buffer;
        out_len_ = n;
        out_capacity_ = capacity;
        try {
            while (out_len_ < out_capacity_ && pending_.empty() && !finished_) step();
        } catch (...) {
            error_ = std::current_exception();
            finished_ = true;
            out_len_ = 0;
        }
        out_ = nullptr;
        return out_len_;
    }

    void rethrow_error() const {
        if (error_) std::rethrow_exception(error_);
    }
    const TransferStats& stats() const { return stats_; }

  private:
    // Into the buffer fill() was given, as far as it goes; the rest waits in pending_.
    static la_ssize_t on_write(archive*, void* self_ptr, const void* data, size_t size) {
        auto* self = static_cast<TarProducer*>(self_ptr);
        const char* bytes = static_cast<const char*>(data);
        size_t direct = 0;
        if (self->out_) {
            direct = std::min(size, self->out_capacity_ - self->out_len_);
            std::memcpy(self->out_ + self->out_len_, bytes, direct);
            self->out_len_ += direct;
        }
        self->pending_.append(bytes + direct, size - direct);
        return static_cast<la_ssize_t>(size);
    }

    Error fail(const std::string& what) {
        const char* detail = archive_error_string(archive_.get());
        return io_error(what + (detail ? std::string(": ") + detail : std::string()));
    }

    void step() {
        if (file_) {
            copy_chunk();
        } else if (next_ < items_.size()) {
            start_entry(items_[next_++]);
        } else {
            if (archive_write_close(archive_.get()) != ARCHIVE_OK)
                throw fail("cannot finish the upload archive");
            finished_ = true;
        }
    }

    void start_entry(const UploadItem& item) {
        const std::string& path = item.local_path;
        file_ = UniqueFd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
        struct stat st;
        if (!file_ || ::fstat(file_.get(), &st) != 0)
            throw io_error("cannot read " + path + ": " + std::strerror(errno));
        if (!S_ISREG(st.st_mode)) throw io_error("cannot upload " + path + ": not a regular file");
        EntryPtr entry(archive_entry_new());
        archive_entry_set_pathname(entry.get(), item.remote_path.c_str());
        archive_entry_set_filetype(entry.get(), AE_IFREG);
        archive_entry_set_perm(entry.get(), st.st_mode & 0777);
        archive_entry_set_size(entry.get(), st.st_size);
        // libarchive 3.6 writes a pax mtime as "<sec>.<nsec>", which reads as the wrong time
        // before 1970 (-2 s + 0.5 s is -1.5, not "-2.5"); hand it the digits that mean the
        // true time. (-1 s, 1 s) cannot be written at all and is simply resent next time.
        auto sec = st.st_mtim.tv_sec;
        auto nsec = st.st_mtim.tv_nsec;
        if (sec < -1 && nsec > 0) {
            sec += 1;
            nsec = 1000000000 - nsec;
        }
        archive_entry_set_mtime(entry.get(), sec, nsec);
        // ARCHIVE_WARN only reports a name that is not valid in the locale's charset; the
        // pax writer then stores the raw bytes, which is what a remote tar extracts.
        if (archive_write_header(archive_.get(), entry.get()) < ARCHIVE_WARN)
            throw fail("cannot add " + path + " to the upload archive");
        remaining_ = static_cast<uint64_t>(st.st_size);
        current_ = &item;
        stats_.files++;
    }

    void copy_chunk() {
        const std::string& path = current_->local_path;
        ssize_t n = 0;
        if (remaining_ > 0) {
            n = ::read(file_.get(), chunk_.data(), std::min<uint64_t>(chunk_.size(), remaining_));
            if (n < 0 && errno == EINTR) return;
            if (n < 0) throw io_error("cannot read " + path + ": " + std::strerror(errno));
            if (n > 0) {
                if (archive_write_data(archive_.get(), chunk_.data(), static_cast<size_t>(n)) < 0)
                    throw fail("cannot add " + path + " to the upload archive");
                remaining_ -= static_cast<uint64_t>(n);
                stats_.bytes += static_cast<uint64_t>(n);
                if (progress_) progress_->add_bytes(static_cast<uint64_t>(n));
            }
        }
        if (remaining_ == 0 || n == 0) {
            // The header already promised the size read at open time; libarchive pads a
            // file that shrank meanwhile with zeros, and growth is cut off.
            if (remaining_ > 0)
                spdlog::warn("{} shrank while it was being uploaded; the remote copy is padded",
                             path);
            if (archive_write_finish_entry(archive_.get()) != ARCHIVE_OK)
                throw fail("cannot add " + path + " to the upload archive");
            file_.reset();
            current_ = nullptr;
            if (progress_) progress_->file_done();
        }
    }

    const std::vector<UploadItem>& items_;
    TransferProgress* progress_;
    ArchiveWritePtr archive_;
    std::string pending_;  // archive bytes written by libarchive, not yet handed out
    size_t offset_ = 0;
    char* out_ = nullptr;  // during fill(): its buffer, out_len_ of out_capacity_ bytes used
    size_t out_len_ = 0;
    size_t out_capacity_ = 0;
    std::vector<char> chunk_;
    size_t next_ = 0;
    const UploadItem* current_ = nullptr;
    UniqueFd file_;
    uint64_t remaining_ = 0;
    bool finished_ = false;
    std::exception_ptr error_;
    TransferStats stats_;
};

// Before parallel streams, one round trip makes the directories of them all (make_dirs.sh
// says why).
void make_parent_dirs(Remote& remote, const std::string& remote_base,
                      const std::vector<UploadStream>& streams) {
    std::set<std::string> dirs;
    for (const auto& stream : streams)
        for (const auto& item : stream.items) {
            const size_t slash = item.remote_path.rfind('/');
            if (slash != std::string::npos) dirs.insert(item.remote_path.substr(0, slash));
        }
    if (dirs.empty()) return;
    std::string list;
    for (const auto& dir : dirs) list.append(dir).push_back('\0');
    const RemoteOutput out = remote.run(make_dirs_command(remote_base), list);
    if (out.exit_status != 0)
        throw remote_failure(remote, "creating the directories of the upload in " + remote_base,
                             out.exit_status, out.err);
}

}  // namespace

std::string transfer_detail::tar_unpack_command(const std::string& remote_base,
                                                Compression compression) {
    return shell_assignment("B", shell_quote_path(remote_base)) +
           shell_assignment("Z", shell_quote(tar_compression_flag(compression))) +
           std::string(scripts::transfer_tar_unpack);
}

std::string transfer_detail::make_dirs_command(const std::string& remote_base) {
    return shell_assignment("B", shell_quote_path(remote_base)) +
           std::string(scripts::transfer_make_dirs);
}

TransferStats upload(Remote& remote, const std::string& remote_base,
                     const std::vector<UploadItem>& items, TransferProgress* progress,
                     Compression compression) {
    return upload_streams(remote, remote_base, {UploadStream{items, compression}}, progress);
}

TransferStats upload_streams(Remote& remote, const std::string& remote_base,
                             const std::vector<UploadStream>& streams, TransferProgress* progress) {
    for (const auto& stream : streams) check_items(stream.items);
    if (streams.size() > 1) make_parent_dirs(remote, remote_base, streams);
    std::vector<std::unique_ptr<TarProducer>> producers;
    std::vector<BoundedTail> errors(streams.size());
    std::vector<StreamJob> jobs;
    for (size_t i = 0; i < streams.size(); ++i) {
        producers.push_back(
            std::make_unique<TarProducer>(streams[i].items, progress, streams[i].compression));
        TarProducer* producer = producers.back().get();
        StreamJob& job = jobs.emplace_back();
        job.command = tar_unpack_command(remote_base, streams[i].compression);
        job.input = [producer](char* buffer, size_t capacity) {
            return producer->fill(buffer, capacity);
        };
        job.on_stderr = errors[i].sink();
        job.data_stream = "the upload's tar stream into " + remote_base;
    }
    const std::vector<int> statuses = remote.stream_parallel(jobs);
    // A local failure cut an archive short, so the remote error is only its consequence.
    for (const auto& producer : producers) producer->rethrow_error();
    TransferStats total;
    for (size_t i = 0; i < streams.size(); ++i) {
        if (statuses[i] != 0)
            throw remote_failure(remote, "unpacking the upload into " + remote_base, statuses[i],
                                 errors[i].str());
        total.files += producers[i]->stats().files;
        total.bytes += producers[i]->stats().bytes;
    }
    spdlog::debug("uploaded {} files, {} bytes to {}:{} in {} stream(s)", total.files, total.bytes,
                  remote.name(), remote_base, streams.size());
    return total;
}

}  // namespace mlt
