#pragma once
// Incremental transfers as the train flow uses them: compare, then move only what differs,
// with a progress line on a terminal.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mlt/transfer/transfer.h"

namespace mlt {

class LinkPool;

// What one sync moved, skipped, and how long it took.
struct SyncResult {
    TransferStats moved;
    uint64_t unchanged = 0;  // files whose other copy already matched (size and mtime)
    uint64_t skipped = 0;    // remote files a pull left out (see sync_down)
    double seconds = 0;
    // A pull with expected hashes: the files it did not fetch because the record does not
    // name them, and those whose copy did not have the recorded sha256 (not published).
    std::vector<std::string> unrecorded, not_as_recorded;
    uint64_t held_back = 0;  // files the pull's `leave_out` kept on the remote (not skipped)
};

// The sha256 each file must have, by its path relative to the remote base (a job's record).
using ExpectedHashes = std::map<std::string, std::string>;

// "3 file(s), 1,234 bytes (9 unchanged)" (", 2 skipped" inside the parentheses when a pull
// left files out), plus " in 1.2 s, 5.6 MiB/s" when bytes moved.
std::string describe(const SyncResult& result);

// Remote files at least this big are pulled one by one as ranges (download_ranges), so that a
// pull cut off midway continues inside them next time instead of starting them over.
constexpr uint64_t kResumableSize = 32ull * 1024 * 1024;

// `wanted`, or Compression::none (with a notice) when the remote has no program for it
// (`zstd`, `gzip`): one round trip, none for Compression::none.
Compression usable_compression(Remote& remote, Compression wanted);

// Files at least this big are sampled one by one before an upload (worth_compressing), the
// smaller ones together (small_files_compress); what does not compress goes in streams
// without compression.
constexpr uint64_t kSampledSize = 1024 * 1024;

// Whether `compression` (at the upload's level 1) saves at least 10 % on the file at `path`:
// true for files under kSampledSize (see small_files_compress) and for files that cannot be
// read (the upload reports them); otherwise judged from 4 samples of 64 KiB.
// False for Compression::none.
bool worth_compressing(const std::string& path, Compression compression);

// The same verdict for the files under kSampledSize of an upload, taken together: the first
// 4 KiB of up to 64 of them (spread over the list) are compressed as one piece. True when
// that is under 4 KiB in all (too little to judge); false for Compression::none.
bool small_files_compress(const std::vector<std::string>& paths, Compression compression);

// Uploads go in up to kMaxUploadStreams tar streams side by side, one more per
// kBytesPerUploadStream to send: each SSH channel has its own window (2 MiB in sshd), which
// caps one stream at 2 MiB per round trip (36 MB/s at 50 ms).
constexpr size_t kMaxUploadStreams = 4;
constexpr uint64_t kBytesPerUploadStream = 8ull * 1024 * 1024;

// One file to upload, as plan_upload_streams sees it.
struct PlannedFile {
    UploadItem item;
    uint64_t size = 0;
    bool compress = false;  // worth_compressing() said yes
};

// Splits the files to send into streams: n = bytes / kBytesPerUploadStream, at least 1, at
// most `most_streams` (kMaxUploadStreams, or fewer where the cost model says more streams do
// not pay for their logins: upload_streams_worth); files to compress (with `compression`)
// and files to send as they are get streams of their own, in proportion to their bytes
// (with `most_streams` 1, one stream, compressed when most of the bytes compress); within
// each kind, the biggest file goes first into the stream with the fewest bytes. Each stream
// keeps the order the files came in; empty streams are left out.
std::vector<UploadStream> plan_upload_streams(const std::vector<PlannedFile>& files,
                                              Compression compression,
                                              size_t most_streams = kMaxUploadStreams);

// The most tar streams worth opening for `bytes` over `remote`'s link: with `links` on auto
// (or none), each is a channel whose login (Remote::login_cost_s) must pay back in time
// saved (channel_cost.h); kMaxUploadStreams when that cost was not measured, or when a
// number of connections was asked for.
size_t upload_streams_worth(const Remote& remote, uint64_t bytes, const LinkPool* links = nullptr);

// The compression for the next stream, asked only when a stream is about to start: e.g. the
// train flow's one-time check of the remote (usable_compression).
using CompressionChoice = std::function<Compression()>;

// A CompressionChoice that, when first called, asks usable_compression of the Remote
// `remote()` gives then, and keeps the answer (a reconnect does not change the remote's
// programs). `wanted` is a settings word ("none", "gzip", "zstd"); anything else is none.
CompressionChoice checked_compression(std::function<Remote&()> remote, const std::string& wanted);

// checked_compression whose one check may also travel ahead of another command.
class CompressionCheck {
  public:
    CompressionCheck(std::function<Remote&()> remote, const std::string& wanted);
    // The CompressionChoice: asks the remote when first called, then keeps the answer.
    const CompressionChoice& choice() const { return choice_; }
    // Sends the check ahead (Remote::run_ahead) when it is still to be made, and returns
    // whether it went: then choice() must be called right after the command it went with
    // (and after the replies sent ahead before it), or the control shell drops them all.
    bool send_ahead();

  private:
    struct State {
        std::function<Remote&()> remote;
        Compression wanted;
        std::optional<Compression> known;
    };
    std::shared_ptr<State> state_;
    CompressionChoice choice_;
};

// Uploads, per remote base, the items whose remote copy is missing or differs (one listing
// round trip, then the streams of plan_upload_streams side by side; files that
// worth_compressing() rejects go uncompressed; `choose` is called only if something is to
// be sent). Logs a size summary first when the files to send
// are more than 1 GiB or 10,000; shows one progress line for all bases when stderr is a
// terminal. Nothing remote is deleted.
// Files for which ranges pay (ranges_pay: 32 MiB or more, 256 MiB over a near link) and that
// do not compress go as ranges (upload_ranges), over `links` at once when given.
SyncResult sync_up(Remote& remote, const std::map<std::string, std::vector<UploadItem>>& plan,
                   const CompressionChoice& choose, LinkPool* links = nullptr);
SyncResult sync_up(Remote& remote, const std::map<std::string, std::vector<UploadItem>>& plan,
                   Compression compression = Compression::none);
// Sends sync_up's listings of `plan` ahead (Remote::run_ahead): called just before another
// command (the lock), their round trips overlap that one's. With `links`, over a far link,
// a local file big enough for them starts the first one connecting (LinkPool::open_first):
// whether it changed is known only from the listing. As a `guess`, the listings may go unasked
// (a start sent ahead on the condition that nothing changed, which started the job).
void sync_up_ahead(Remote& remote, const std::map<std::string, std::vector<UploadItem>>& plan,
                   LinkPool* links = nullptr, bool guess = false);

// The private dir in a pull's local base where files wait until they are checked.
constexpr char kPullStaging[] = ".mlt-pull";

// Pulls the files under `remote_base` whose local copy under `local_base` is missing or
// differs, tolerating a remote that changes meanwhile (a training still writing): files of
// kResumableSize or more one by one (resumable), the rest as one tar stream (compressed as
// asked; `choose` is called only for that stream), all into `<local_base>/.mlt-pull` first.
// One more round trip then checks each file on the remote; only a file whose inode, size,
// mtime and ctime did not change since the listing is renamed into place, so a published
// file is always one whole version of the remote one. Files that changed are fetched again
// (at most 3 rounds in all; a file is read no earlier than 0.1 s after its ctime, 2 s on
// file systems with whole-second times, so a round may first wait that long);
// files that vanished, kept changing, cannot be read, have a path too long for this machine,
// or have a local symlink or directory in their place are skipped, and one warning line
// each (changes; what cannot be copied) names them. A remote file whose first path
// component is in `own_names` (names directly in `local_base` that are mlt's own, e.g. the
// console log copy) or is .mlt-pull is stored as `<name>.remote`, with one warning. A missing
// remote base pulls nothing. Nothing local is deleted. Throws mlt::Error (remote) when the
// listing or the tar stream fails as a whole, (io) for local write errors.
// With PullReport::quiet (a pull in the background, beside a run's own status line) there is
// no progress line, and the warnings above go to the debug log instead.
// Big files move as ranges (download_ranges): where they pay (ranges_pay) over `links` at
// once when given, else over `remote`.
enum class PullReport { shown, quiet };
// With `expected`: only the files it names are fetched, and a copy is published only when its
// sha256 is the one named (SyncResult::unrecorded, not_as_recorded). With `leave_out`: the
// listed files (in the version listed) for which it is true are not fetched, without a
// warning (SyncResult::held_back; checkpoints not yet whole, or about to be deleted).
using PullFilter = std::function<bool(const RemoteFileInfo&)>;
SyncResult sync_down(Remote& remote, const std::string& remote_base, const std::string& local_base,
                     const CompressionChoice& choose, const std::vector<std::string>& own_names,
                     PullReport report = PullReport::shown, LinkPool* links = nullptr,
                     const ExpectedHashes* expected = nullptr, const PullFilter& leave_out = {});
SyncResult sync_down(Remote& remote, const std::string& remote_base, const std::string& local_base,
                     Compression compression = Compression::none);

}  // namespace mlt
