#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mlt/ssh/remote.h"

namespace mlt {

class TransferProgress;

// How tar streams are compressed on the wire (setting `compression`). gzip and zstd need
// GNU tar's -z / --zstd on the remote (zstd: the `zstd` program). Single-file pulls
// (download_file) are never compressed.
enum class Compression { none, gzip, zstd };

// "none", "gzip", "zstd" -> Compression; nullopt for anything else.
std::optional<Compression> parse_compression(std::string_view text);

// Totals of one transfer, for messages and the run history.
struct TransferStats {
    uint64_t files = 0;
    uint64_t bytes = 0;  // file content bytes moved
};

// One local file to send, and where it goes relative to the upload's remote base.
struct UploadItem {
    std::string local_path;   // a regular file (symlinks are followed)
    std::string remote_path;  // relative, `/`-separated, no `..`, e.g. "data/a.csv"
};

// Sends `items` as ONE tar stream (libarchive) into `tar -xf -` run in `remote_base` on the
// remote (created with mkdir -p; `~` means the remote home). Modes and mtimes (to the
// nanosecond) are kept; memory stays bounded whatever the file sizes. Throws mlt::Error
// (io, exit 2) for an unreadable local file before anything is sent (also when it becomes
// unreadable midway), mlt::Error (usage) for a remote_path that is absolute or has `..`, and
// mlt::Error (remote) with tar's stderr when the remote side fails.
// `progress` (optional) counts the content bytes and the files as they are sent.
TransferStats upload(Remote& remote, const std::string& remote_base,
                     const std::vector<UploadItem>& items, TransferProgress* progress = nullptr,
                     Compression compression = Compression::none);

// One tar stream of an upload: its files, and the compression they travel with.
struct UploadStream {
    std::vector<UploadItem> items;
    Compression compression = Compression::none;
};

// Like upload() for several tar streams into the same `remote_base`, sent side by side
// (Remote::stream_parallel: one channel each). Every item is checked before anything is
// sent; a failure of any stream throws after all of them have ended.
TransferStats upload_streams(Remote& remote, const std::string& remote_base,
                             const std::vector<UploadStream>& streams,
                             TransferProgress* progress = nullptr);

// Lists the regular files under `remote_base` (recursively; relative paths, `/`-separated,
// sorted), in one round trip. A missing base gives an empty list; symlinks are not followed.
// Throws mlt::Error (remote) with find's stderr when the listing fails.
std::vector<std::string> list_remote_files(Remote& remote, const std::string& remote_base);

// The whole seconds of a time in nanoseconds since the epoch, rounded down (before 1970 too),
// as `stat -c %Y` gives them.
int64_t floor_seconds(int64_t ns);

// One remote regular file with what an incremental transfer compares, and what a pull checks
// to know that the copy it got is one version of the file (see sync_down).
struct RemoteFileInfo {
    std::string path;      // relative to the listed base, `/`-separated
    uint64_t size = 0;     // bytes
    int64_t mtime_ns = 0;  // modification time, nanoseconds since the epoch
    int64_t ctime_ns = 0;  // status change time: set by every write, and never by a user
    uint64_t inode = 0;
    bool readable = true;  // the remote user may read it (find -readable)

    // Same inode, size, mtime and ctime: nothing wrote to the file between the two looks.
    bool same_version(const RemoteFileInfo& other) const {
        return inode == other.inode && size == other.size && mtime_ns == other.mtime_ns &&
               ctime_ns == other.ctime_ns;
    }
};

// Runs `command` and calls `each` with every NUL-terminated record of its stdout as it
// streams in, as the listings do: one record held at a time; a record longer than a name
// allows (and some fields), or more than a million of them, ends it as tampered (`what` names
// the source). Returns the exit status; the tail of stderr goes to `err`.
int stream_remote_records(Remote& remote, const std::string& what, const std::string& command,
                          std::string& err, const std::function<void(std::string_view)>& each);

// Like list_remote_files, with sizes, mtimes, ctimes, inodes and readability (GNU find
// -printf); upload() keeps mtimes to the nanosecond, so an unchanged file compares equal.
// `clock_ns` (optional) receives the remote clock (`date`, nanoseconds since the epoch) read
// just before the files were looked at; 0 for a missing base. Same errors as list_remote_files,
// except that with `unlisted`, entries find could not read (a dir without permission, one removed
// while it walked the tree, a name too long) are left out and their find messages appended there.
std::vector<RemoteFileInfo> list_remote_file_info(Remote& remote, const std::string& remote_base,
                                                  int64_t* clock_ns = nullptr,
                                                  std::vector<std::string>* unlisted = nullptr);
// Sends that listing ahead (Remote::run_ahead, or run_ahead_on_guess with `guess`), for a
// list_remote_file_info() of the same base after the next command.
void list_remote_file_info_ahead(Remote& remote, const std::string& remote_base, bool guess);

// The same for just `paths` (relative to `remote_base`) in one round trip; paths that are
// missing or not regular files are left out. A missing base gives an empty list.
std::vector<RemoteFileInfo> stat_remote_files(Remote& remote, const std::string& remote_base,
                                              const std::vector<std::string>& paths,
                                              int64_t* clock_ns = nullptr);
// Sends that listing ahead (Remote::run_ahead), for a stat_remote_files() of the same
// arguments after the next command.
void stat_remote_files_ahead(Remote& remote, const std::string& remote_base,
                             const std::vector<std::string>& paths, bool guess = false);

// The items whose remote copy under `remote_base` is missing or differs in size or mtime
// (a file whose size and mtime match is not sent, as rsync does). One round trip.
std::vector<UploadItem> changed_for_upload(Remote& remote, const std::string& remote_base,
                                           const std::vector<UploadItem>& items);
// Sends that listing ahead (stat_remote_files_ahead); a `guess` may go unasked.
void changed_for_upload_ahead(Remote& remote, const std::string& remote_base,
                              const std::vector<UploadItem>& items, bool guess = false);

// A remote shell test that holds exactly when changed_for_upload() would find nothing to
// send in `plan` (remote base -> items) as the local files are now: every item there as a
// regular file of its local size and mtime, to the nanosecond. The local side is written
// down as GNU find prints it, hashed; the remote hashes what find prints there (sha256sum).
// A remote that prints otherwise, or lacks sha256sum, fails the test, never passes it
// wrongly. nullopt when a local file cannot be stat'ed or has an mtime before 1970, or when
// the names would take more than 96 KiB of the command line. The test is a subshell (its
// variables and positional parameters stay in it), or `true` when the plan is empty.
std::optional<std::string> uploads_current_test(
    const std::map<std::string, std::vector<UploadItem>>& plan);

// A local dir written down as the remote lists its copy (remote_tree_digest): every regular
// file under it, symlinks not followed, as "SIZE MTIME ./PATH\0" records (GNU find's %s %T@
// %p), sorted bytewise, hashed. `own_names`: first path components left out (mlt's own
// files there). nullopt when the dir cannot be read through, or holds more than
// `max_files` files; a missing dir holds none.
struct TreeDigest {
    std::string sha256;
    size_t files = 0;
};
std::optional<TreeDigest> local_tree_digest(const std::string& local_base,
                                            const std::vector<std::string>& own_names,
                                            size_t max_files);
// A remote shell command that prints the sha256 of `remote_dir`'s records as
// local_tree_digest writes them. Any file that is not readable, or an error of find, adds a
// record that no local dir has; a missing dir, or a remote without GNU find, sort -z or
// sha256sum, prints no such sha256. Meant for a command substitution: it sets the variables
// mlt_tree and mlt_f.
std::string remote_tree_digest(const std::string& remote_dir);

// The remote files (from list_remote_file_info) whose copy under `local_base` is missing or
// differs in size or mtime.
std::vector<std::string> changed_for_download(const std::vector<RemoteFileInfo>& remote_files,
                                              const std::string& local_base);
// Whether `local_path`, the local copy of the remote file `info`, is missing or differs from
// it in size or mtime (a symlink or a directory there differs).
bool local_copy_differs(const std::string& local_path, const RemoteFileInfo& info);

// Fetches `remote_paths` (relative to `remote_base`; files or directories) as ONE tar stream
// from `tar -cf -` and writes them under `local_base`. Only what was asked for is written (a
// named file once, anything under a named directory), only regular files and directories,
// and only by names that pass check_remote_name: anything else in the stream (an entry not
// asked for, a link, a device, `..`) throws tampered, and nothing is written outside
// `local_base`, never through a symlink (an io error names a local one in the way). Each file is
// written to a temporary name in its directory and renamed into place when complete, so a file is
// either the old one or the whole new one. Modes (& 0775) and mtimes are kept; `local_base`
// is created if missing. A file that changed remotely while it was read is a warning; a
// missing remote path throws mlt::Error (remote) with tar's stderr, after the other files
// have been written.
// `progress` (optional) counts the bytes and files as they are written.
TransferStats download(Remote& remote, const std::string& remote_base,
                       const std::vector<std::string>& remote_paths, const std::string& local_base,
                       TransferProgress* progress = nullptr,
                       Compression compression = Compression::none);
// The same for listed files (list_remote_file_info): each at most its listed size (one that
// grew since is skipped, and missing from the count), after check_free_space for them all.
TransferStats download_listed(Remote& remote, const std::string& remote_base,
                              const std::vector<RemoteFileInfo>& files,
                              const std::string& local_base, TransferProgress* progress = nullptr,
                              Compression compression = Compression::none);
// download_listed for files whose sha256 is known (a job's record, by path relative to
// `remote_base`): they arrive in a staging dir (`<local_base>/.mlt-download`) and each is
// moved into its place only when its sha256 is the one given; the paths of those that were
// not (or that a local symlink or directory was in the way of) go to `not_placed`.
TransferStats download_listed_checked(Remote& remote, const std::string& remote_base,
                                      const std::vector<RemoteFileInfo>& files,
                                      const std::map<std::string, std::string>& sha256,
                                      const std::string& local_base,
                                      std::vector<std::string>& not_placed,
                                      Compression compression = Compression::none);

// Throws io error naming the sizes unless `bytes` and a margin of kFreeSpaceMargin fit in
// the free space of the file system that holds `local_path` (or its nearest existing parent).
void check_free_space(const std::string& local_path, uint64_t bytes);
// Room kept free beyond what a pull announced: 64 MiB.
constexpr uint64_t kFreeSpaceMargin = 64ull * 1024 * 1024;

// Fetches one remote file (`~` = remote home) to `local_path` (parent directories created)
// in one round trip, keeping its mtime; returns its size. A remote symlink counts as the
// file it points to. The bytes go to `.<name>.mlt-resume-<remote mtime ns>` next to
// `local_path`, renamed into place when complete. A transfer
// cut off (lost link, Ctrl+C, a full disk) leaves that file; the next call fetches only the
// rest if the remote file's mtime is unchanged and it has not shrunk, else starts over.
// `progress` (optional) counts the bytes (those kept from before too) and the file. Throws
// mlt::Error (remote, with the remote stderr) when it is missing remotely, (io) when it cannot be
// written.
uint64_t download_file(Remote& remote, const std::string& remote_path,
                       const std::string& local_path, TransferProgress* progress = nullptr);

// download_file, with nullopt (and nothing written) when there is no remote file (nothing
// there, or a directory).
std::optional<uint64_t> download_file_if_present(Remote& remote, const std::string& remote_path,
                                                 const std::string& local_path,
                                                 TransferProgress* progress = nullptr);

// What fetch_file found at the remote path.
enum class RemoteEntry { file, missing, directory, symlink };

struct FetchResult {
    RemoteEntry found = RemoteEntry::missing;
    uint64_t size = 0;  // of the file fetched (found == file)
    // With FetchOptions::mismatch_is_result: the copy did not have expect_sha256 and was
    // dropped (found == file, size 0).
    bool mismatched = false;
};

struct FetchOptions {
    TransferProgress* progress = nullptr;  // counts the bytes and the file
    // When set: the SHA-256 the local copy must have. It is read back from the finished
    // temporary file, the one the rename puts in place; a copy that differs is dropped, the
    // local file stays as it was, and mlt::Error (remote) is thrown.
    std::string expect_sha256;
    // False: a remote symlink is not read (found == symlink), for files the job wrote.
    bool follow_links = true;
    // A copy that differs from expect_sha256 is a result (FetchResult::mismatched), not an
    // error.
    bool mismatch_is_result = false;
};

// download_file, reporting instead of fetching when the remote path is missing, a directory,
// or (without options.follow_links) a symlink; then nothing is written.
FetchResult fetch_file(Remote& remote, const std::string& remote_path,
                       const std::string& local_path, const FetchOptions& options = {});

// MLTK-style glob match of a `/`-separated relative path: `*` and `?` stay within one path
// segment, `[...]` classes, `**` matches any number of segments (also none).
bool glob_match(const std::string& pattern, const std::string& path);
// The same match as a POSIX extended regular expression of the whole `./PATH`, as GNU find's
// `-regextype posix-extended -regex` sees a path under `find .` (in the C locale): the job
// finds and hashes a download_files glob's files with it on the remote.
std::string glob_find_regex(const std::string& pattern);

// The local files matching an upload glob (relative to `base_dir`), as UploadItems whose
// remote_path is the path relative to base_dir, sorted. A pattern without wildcards that
// names a directory gives all files under it; a glob matches files only (`*` also matches
// names starting with a dot). Directory symlinks are never followed. Files found by a
// wildcard or under a named directory are left out when is_secret_path (workspace.h) says
// so or when they link out of base_dir; their paths (relative to base_dir) are appended to
// `skipped` when given. A pattern without wildcards naming a file (a file symlink too)
// gives that file. Nothing matching gives an empty list; an absolute pattern or one with
// `..` throws mlt::Error (usage).
std::vector<UploadItem> expand_local_glob(const std::string& base_dir, const std::string& pattern,
                                          std::vector<std::string>* skipped = nullptr);

}  // namespace mlt
