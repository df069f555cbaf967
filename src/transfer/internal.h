#pragma once
// Helpers shared by the transfer sources. Private to src/transfer/: the only code that
// includes libarchive.

#include <archive.h>
#include <archive_entry.h>
#include <sys/types.h>
#include <time.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "mlt/transfer/transfer.h"
#include "mlt/util/error.h"
#include "mlt/util/fd.h"
#include "mlt/util/text.h"

namespace mlt::transfer_detail {

struct ArchiveReadDeleter {
    void operator()(archive* a) const { archive_read_free(a); }
};
struct ArchiveWriteDeleter {
    void operator()(archive* a) const { archive_write_free(a); }
};
struct EntryDeleter {
    void operator()(archive_entry* e) const { archive_entry_free(e); }
};
using ArchiveReadPtr = std::unique_ptr<archive, ArchiveReadDeleter>;
using ArchiveWritePtr = std::unique_ptr<archive, ArchiveWriteDeleter>;
using EntryPtr = std::unique_ptr<archive_entry, EntryDeleter>;

using mlt::UniqueFd;

// A bounded byte pipe between one producer thread and one consumer thread: push() blocks
// while `capacity` bytes are queued, so a fast network cannot outrun a slow disk.
class ByteQueue {
  public:
    explicit ByteQueue(size_t capacity) : capacity_(capacity) {}
    // Producer: queues a copy of `data`; returns false (dropping it) once the consumer
    // has stopped reading.
    bool push(std::string_view data);
    // Producer: no more data will come.
    void close();
    // Consumer: waits for the next chunk; returns false at the end of the data.
    bool pop(std::string& chunk);
    // Consumer: stops reading; wakes a waiting producer, later pushes are dropped.
    void stop();

  private:
    std::mutex mutex_;
    std::condition_variable changed_;
    std::deque<std::string> chunks_;
    size_t queued_ = 0;
    size_t capacity_;
    bool closed_ = false;
    bool stopped_ = false;
};

// Throws unless every item can be sent: a relative remote path inside the remote dir, a
// readable regular local file. Checked before anything is sent, so that these errors leave
// the remote untouched.
void check_items(const std::vector<UploadItem>& items);

// The `/`-separated components of a relative path, without empty and `.` components.
std::vector<std::string> split_path(std::string_view path);

// True when a relative path has a `..` component.
bool has_dotdot(std::string_view path);

// "1700000000.123456789" (GNU find's %T@; any number of fraction digits) in nanoseconds;
// false when it is not such a number or does not fit (seconds past the year 2262).
bool parse_mtime(std::string_view text, int64_t& ns);

// Adds the upload compressor for `compression` to a libarchive writer: gzip or zstd at
// level 1 (nothing for none). Level 1 because the link, not the ratio, is what there is to
// win against; higher levels cost more CPU than they save time (tests/bench/README.md).
// False when libarchive refuses.
bool add_upload_filter(archive* a, Compression compression);

// Writes all of `data` to `fd` (retrying short writes and EINTR); throws io error naming
// `shown`.
void write_all(int fd, const char* data, size_t size, const std::string& shown);

// Opens `local_base` as a directory (created if missing) for *at() calls; throws io error.
UniqueFd open_base(const std::string& local_base);

// GNU tar's option for `compression` ("-z", "--zstd"), or "".
const char* tar_compression_flag(Compression compression);

// Nanoseconds since the epoch as a timespec (nsec in 0..999999999, also before 1970).
timespec to_timespec(int64_t ns);

// `.<leaf><suffix>`, a hidden name beside `leaf` for mlt's own use that leaves `extra` more
// characters within NAME_MAX: a leaf too long for it is cut and given a hash of the whole
// name, so that two long names that only differ after the cut never share one.
std::string side_name(const std::string& leaf, const std::string& suffix, size_t extra);

// The temporary name a file is written under before the rename: `.<name>.mlt-part-<pid>`
// (shortened so it still fits NAME_MAX).
std::string part_name(const std::string& name);

// Opens (creating as needed) the directory made of the first `count` of `parts` under
// `base_fd`, never following a symlink: a symlink on the way throws on_symlink(its path).
// A directory created last gets `last_mode`, the others 0755. Other failures throw io errors
// naming the path under `shown_base`.
UniqueFd open_dirs(int base_fd, const std::vector<std::string>& parts, size_t count,
                   mode_t last_mode, const std::string& shown_base,
                   const std::function<Error(const std::string&)>& on_symlink);

// `<local_base>/<name>`, a staging directory of mlt's own (0700): anything else under that
// name (a file, a symlink) is removed first, never followed. Its descriptor goes to
// `staging_fd`; returns its path. Throws io errors.
std::string open_staging(int base_fd, const std::string& local_base, const char* name,
                         UniqueFd& staging_fd);

// The hex sha256 of the regular file `staged` under `staging_fd` (never through a symlink);
// empty when it cannot be read.
std::string staged_sha256(int staging_fd, const std::string& staged);

// Renames `staged` (under `staging_fd`) to `local` under `base_fd` (shown as `local_base`),
// creating the directories on the way without following a symlink. False, and nothing
// moved, when a symlink on the way or a symlink or directory at `local` is in the way.
// Throws io errors.
bool publish_staged(int staging_fd, const std::string& staged, int base_fd,
                    const std::string& local_base, const std::string& local);

// What a tar stream may hold: the files asked for by name (each once, at most its announced
// size) and anything under the directories asked for ("." for all).
struct TarWanted {
    std::map<std::string, uint64_t> files;
    std::vector<std::string> trees;
};
// A size bound that is none.
constexpr uint64_t kAnySize = UINT64_MAX;

// Reads a tar stream from `a` (already opened) and writes its regular files and directories
// under the directory `base_fd`. Every entry's name goes through check_remote_name; an entry
// that was not asked for (`wanted`), a link or special file, or a file longer than its header
// or its announced size throws tampered, nothing written outside `local_base`. `remote` names
// the source in messages. Throws mlt::Error; sets `*damaged` when the stream itself was broken
// (so the caller can prefer the remote command's own error). `progress` may be null.
void extract_tar(archive* a, int base_fd, const std::string& local_base, const Remote& remote,
                 TarWanted wanted, TransferStats& stats, TransferProgress* progress, bool* damaged);

// Fetches `wanted` (its files and trees, relative to `remote_base`) as one tar stream into
// `local_base`, as download() does. With `entry_errors`, tar's exit 1 (a file changed while
// read) and 2 (a file it could not stat or read) are not errors when the stream itself is
// complete; tar's messages go to `*entry_errors` and the caller checks what arrived.
TransferStats download_tar(Remote& remote, const std::string& remote_base, TarWanted wanted,
                           const std::string& local_base, TransferProgress* progress,
                           Compression compression, std::string* entry_errors);

}  // namespace mlt::transfer_detail
