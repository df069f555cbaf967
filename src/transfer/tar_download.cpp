// download(): a remote tar stream extracted to disk with bounded memory.
//
// The channel pushes output into a sink while libarchive pulls its input, so the archive is
// read on a second thread, fed through a bounded queue: the sink blocks when the disk is
// slower than the network, and nothing ever holds the whole archive.

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <exception>
#include <filesystem>
#include <thread>

#include "commands.h"
#include "internal.h"
#include "mlt/util/shell.h"
#include "remote_scripts.h"

namespace mlt {

using namespace transfer_detail;

namespace {

constexpr size_t kQueueBytes = 8 * 1024 * 1024;

// GNU tar's "some files differ" (a file changed while it was read, e.g. a log being
// written): the archive is complete and valid, so it is a warning.
constexpr int kTarChanged = 1;
// GNU tar's "fatal error": also what it ends with after a file it could not read.
constexpr int kTarEntryFailed = 2;

// Thrown by the sink to abandon the channel once the reader has failed; download() then
// reports the reader's error.
struct ReaderFailed {};

// Runs extract_tar on its own thread over the bytes pushed into `queue`.
class ReaderThread {
  public:
    ReaderThread(ByteQueue& queue, int base_fd, const std::string& local_base, const Remote& remote,
                 TarWanted wanted, TransferProgress* progress)
        : queue_(queue) {
        thread_ = std::thread([this, base_fd, &local_base, &remote, progress,
                               wanted = std::move(wanted)]() mutable {
            try {
                ArchiveReadPtr a(archive_read_new());
                if (!a) throw std::bad_alloc();
                archive_read_support_format_tar(a.get());
                archive_read_support_filter_gzip(a.get());
                archive_read_support_filter_zstd(a.get());
                if (archive_read_open(a.get(), this, nullptr, &ReaderThread::on_read, nullptr) !=
                    ARCHIVE_OK) {
                    damaged_ = true;
                    const char* detail = archive_error_string(a.get());
                    throw remote_error("the tar stream from " + remote.name() + " is damaged" +
                                       (detail ? std::string(": ") + detail : std::string()));
                }
                extract_tar(a.get(), base_fd, local_base, remote, std::move(wanted), stats_,
                            progress, &damaged_);
            } catch (...) {
                error_ = std::current_exception();
                failed_.store(true);
            }
            // Whatever follows the end-of-archive marker (tar's block padding) or a failure
            // is not needed: later pushes are dropped instead of blocking the channel.
            queue_.stop();
        });
    }
    ReaderThread(const ReaderThread&) = delete;
    ReaderThread& operator=(const ReaderThread&) = delete;
    ~ReaderThread() { join(); }

    // Waits for the reader; ends its input first so it cannot wait forever.
    void join() {
        if (!thread_.joinable()) return;
        queue_.close();
        thread_.join();
    }
    bool failed() const { return failed_.load(); }
    bool damaged() const { return damaged_; }
    std::exception_ptr error() const { return error_; }
    const TransferStats& stats() const { return stats_; }

  private:
    static la_ssize_t on_read(archive*, void* self, const void** data) {
        auto* reader = static_cast<ReaderThread*>(self);
        if (!reader->queue_.pop(reader->chunk_)) return 0;
        *data = reader->chunk_.data();
        return static_cast<la_ssize_t>(reader->chunk_.size());
    }

    ByteQueue& queue_;
    std::string chunk_;  // the block libarchive is reading
    std::atomic<bool> failed_{false};
    bool damaged_ = false;
    std::exception_ptr error_;
    TransferStats stats_;
    std::thread thread_;
};

// The NUL-separated names of `wanted` for tar -T. They are the caller's (a listing's, after
// the gate, or a download_files entry's): one that is not relative and inside is a bug or a
// settings mistake, and is refused before anything runs.
std::string name_list(const TarWanted& wanted) {
    std::string list;
    auto add = [&](const std::string& p) {
        if (p.empty() || p[0] == '/' || has_dotdot(p) || p.find('\0') != std::string::npos)
            throw usage_error("cannot download '" + printable(p, 200) +
                                  "': the path must be relative and stay inside the remote "
                                  "directory",
                              "fix the download_files entry");
        list += p;
        list += '\0';
    };
    for (const auto& [name, size] : wanted.files) add(name);
    for (const auto& tree : wanted.trees) add(tree);
    return list;
}

}  // namespace

TransferStats download(Remote& remote, const std::string& remote_base,
                       const std::vector<std::string>& remote_paths, const std::string& local_base,
                       TransferProgress* progress, Compression compression) {
    return download_tar(remote, remote_base, TarWanted{{}, remote_paths}, local_base, progress,
                        compression, nullptr);
}

TransferStats download_listed(Remote& remote, const std::string& remote_base,
                              const std::vector<RemoteFileInfo>& files,
                              const std::string& local_base, TransferProgress* progress,
                              Compression compression) {
    TarWanted wanted;
    uint64_t bytes = 0;
    for (const auto& f : files) {
        wanted.files[f.path] = f.size;
        bytes += f.size;
    }
    check_free_space(local_base, bytes);
    return download_tar(remote, remote_base, std::move(wanted), local_base, progress, compression,
                        nullptr);
}

TransferStats download_listed_checked(Remote& remote, const std::string& remote_base,
                                      const std::vector<RemoteFileInfo>& files,
                                      const std::map<std::string, std::string>& sha256,
                                      const std::string& local_base,
                                      std::vector<std::string>& not_placed,
                                      Compression compression) {
    constexpr char kStaging[] = ".mlt-download";
    TarWanted wanted;
    uint64_t bytes = 0;
    for (const auto& f : files) {
        wanted.files[f.path] = f.size;
        bytes += f.size;
    }
    if (wanted.files.empty()) return {};
    check_free_space(local_base, bytes);
    UniqueFd base = open_base(local_base);
    UniqueFd staging_fd;
    const std::string staging = open_staging(base.get(), local_base, kStaging, staging_fd);
    TransferStats placed;
    try {
        download_tar(remote, remote_base, std::move(wanted), staging, nullptr, compression,
                     nullptr);
        for (const auto& f : files) {
            auto expected = sha256.find(f.path);
            if (expected != sha256.end() &&
                staged_sha256(staging_fd.get(), f.path) == expected->second &&
                publish_staged(staging_fd.get(), f.path, base.get(), local_base, f.path)) {
                placed.files += 1;
                placed.bytes += f.size;
            } else {
                not_placed.push_back(f.path);
            }
        }
    } catch (...) {
        std::error_code ec;
        std::filesystem::remove_all(staging, ec);
        throw;
    }
    std::error_code ec;
    std::filesystem::remove_all(staging, ec);
    return placed;
}

namespace transfer_detail {

std::string tar_pack_command(const std::string& remote_base, Compression compression) {
    return shell_assignment("B", shell_quote_path(remote_base)) +
           shell_assignment("Z", shell_quote(tar_compression_flag(compression))) +
           std::string(scripts::transfer_tar_pack);
}

TransferStats download_tar(Remote& remote, const std::string& remote_base, TarWanted wanted,
                           const std::string& local_base, TransferProgress* progress,
                           Compression compression, std::string* entry_errors) {
    if (wanted.files.empty() && wanted.trees.empty()) return {};
    const std::string list = name_list(wanted);
    UniqueFd base = open_base(local_base);
    const std::string command = tar_pack_command(remote_base, compression);

    ByteQueue queue(kQueueBytes);
    ReaderThread reader(queue, base.get(), local_base, remote, std::move(wanted), progress);
    BoundedTail said;
    StreamJob job;
    job.command = command;
    job.input = input_from(list);
    job.on_stdout = [&](std::string_view d) {
        // A failed reader stops the queue; aborting the channel saves downloading the rest
        // of a large archive for nothing.
        if (!queue.push(d) && reader.failed()) throw ReaderFailed{};
    };
    job.on_stderr = said.sink();
    job.data_stream = "the tar stream of " + remote_base;
    int status = -1;
    try {
        status = remote.stream_parallel({job}).front();
    } catch (const ReaderFailed&) {
        reader.join();
        std::rethrow_exception(reader.error());
    }
    reader.join();
    const std::string err = said.str();

    // A refused entry or a local write error is ours to report; a damaged stream is most
    // likely the consequence of a remote failure, whose stderr says more.
    if (reader.error() && !reader.damaged()) std::rethrow_exception(reader.error());
    // GNU tar ends with 2 after a file it could not stat or open (gone, unreadable) and
    // still writes a complete archive of the rest: the caller checks each file itself.
    const bool entry_failure = entry_errors && status == kTarEntryFailed && !reader.error();
    if (status != 0 && status != kTarChanged && !entry_failure)
        throw remote_failure(remote, "packing " + remote_base + " for download", status, err);
    if (reader.error()) std::rethrow_exception(reader.error());
    if (entry_errors) {
        *entry_errors = trim(err);
    } else if (status == kTarChanged) {
        spdlog::warn("files changed on {} while they were downloaded: {}", remote.name(),
                     trim(err));
    }
    spdlog::debug("downloaded {} files, {} bytes from {}:{}", reader.stats().files,
                  reader.stats().bytes, remote.name(), remote_base);
    return reader.stats();
}

}  // namespace transfer_detail

}  // namespace mlt
