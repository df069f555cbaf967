#pragma once
// Big files as ranges over several SSH connections at once, both ways, resumable range by
// range and verified with sha256 (docs/architecture.md, "Big files").
//
// One OpenSSH channel moves at most its window (2 MiB in sshd) per round trip, and one TCP
// connection at most its socket buffer: a far host is slow over one stream whatever the link.
// So a file of kRangeThreshold or more is cut into ranges that go side by side over several
// connections (the caller's and a LinkPool's), needing nothing on the remote but sh, tail,
// head, dd and sha256sum (or openssl, faster, when there); over a near link, where one
// stream is faster (ranges_pay), a file under kNearRangeThreshold is one range over the
// caller's link. Each range's sha256 is taken on both ends as it moves; the receiver writes
// it at its offset in a partial file next to the destination and records it as done only
// when both hashes agree. A transfer cut off keeps its done ranges; the next one (a
// reconnect, --resume, the next pull) moves only the others. The partial file is renamed
// into place once every range is done and the source is still the version whose ranges were
// moved (same size, mtime, ctime and inode); a source that changed meanwhile has its ranges
// hashed again and only those that differ are moved again.

#include <cstddef>
#include <cstdint>
#include <string>

#include "mlt/ssh/remote.h"
#include "mlt/transfer/link_pool.h"
#include "mlt/transfer/transfer.h"

namespace mlt {

class TransferProgress;

// Files at least this big move as ranges (smaller ones in tar streams).
constexpr uint64_t kRangeThreshold = 32ull * 1024 * 1024;
// The size of one range: a multiple of kRangeBlock (the remote dd's block), at least 16 MiB
// (mscp's lower bound: smaller ones cost a round trip each for too few bytes), more for
// files over 4 GiB so that a file has at most 256 of them.
constexpr uint64_t kRangeBlock = 64 * 1024;
uint64_t range_size_for(uint64_t file_size);

// A link whose round trip is shorter than this is near: one stream there is bound by one
// core's cipher, not by the window (sshd's 2 MiB per round trip still carries 1 Gbit/s),
// and a connection or a remote command more costs more than it brings, unless the file is
// at least kNearRangeThreshold. The quickest reply includes the server's scheduling: over
// loopback on a loaded 2-core machine it was 8-14 ms before an upload.
constexpr double kNearRoundTrip = 0.016;
// Whether `remote` is a near link: its quickest round trip so far is under kNearRoundTrip
// (one not known yet counts as far).
bool is_near(const Remote& remote);
// The same for a link whose quickest round trip is `round_trip_s` (-1: not known).
bool is_near_round_trip(double round_trip_s);
// The connections a transfer of ranges starts with under transfer.connections auto, the
// caller's own included: over a near link also the most it uses; over a far one it grows
// from there up to kAutoConnections (link_pool.h).
size_t auto_start_connections(bool near);
constexpr uint64_t kNearRangeThreshold = 256ull * 1024 * 1024;

// Shell words that set `hash_cmd` (exported) to the remote command that prints the sha256
// of its stdin as the first 64 characters of its output: `openssl dgst -sha256 -r` when
// openssl is there and hashes the empty input right, else `sha256sum`. OpenSSL's hash uses
// the CPU's SHA instructions, and coreutils' does not: 0.57 s of CPU a GiB against 2.1 here,
// on a remote that hashes every range it sends or receives.
std::string remote_hash_setup();
// Whether a file of `size` moves as ranges over several connections rather than in one
// stream over `remote`: kRangeThreshold or more over a far link (or one whose round trip
// is not known) or when `links` were asked for by number (transfer.connections N);
// kNearRangeThreshold or more over a near one with `auto`.
bool ranges_pay(const Remote& remote, uint64_t size, const LinkPool* links);
// Whether a file of `size` moves over `links` besides the caller's link: ranges pay, and it
// has more ranges than the caller's link takes at once.
bool uses_links(const Remote& remote, uint64_t size, const LinkPool* links);

// What one ranged transfer did, for -v and the tests.
struct RangeStats {
    uint64_t bytes_moved = 0;  // range bytes sent over the links (a range moved twice counts twice)
    size_t ranges = 0;         // ranges of the file
    size_t kept = 0;           // ranges found done from before (resumed)
    size_t moved_again = 0;    // ranges moved again (a hash that did not match, a changed source)
    size_t links = 1;          // links used at the most
    // Down: the remote file as the look after its ranges moved showed it (the version the
    // local copy is, unless it kept changing), and the remote clock of that look.
    RemoteFileInfo seen;
    int64_t seen_clock_ns = 0;
};

struct RangeOptions {
    LinkPool* links = nullptr;             // none: one range at a time over `remote`
    TransferProgress* progress = nullptr;  // counts the bytes (kept ranges too) and the file
};

// Fetches the remote regular file `remote_path` (`~` = remote home), whose listing is
// `listed`, to `local_path` (its directory must exist; written by rename, never through a
// symlink). Keeps the remote mtime. Throws mlt::Error: remote when it cannot be read there,
// or when it kept changing over 3 rounds; io for local write errors; link loss as the
// transport does (the done ranges stay for the next call).
RangeStats download_ranges(Remote& remote, const std::string& remote_path,
                           const RemoteFileInfo& listed, const std::string& local_path,
                           const RangeOptions& options = {});

// Sends the local regular file `local_path` to `remote_path` (relative to the remote login
// dir, or absolute, `~` allowed; its directory is created), keeping its mtime and mode.
// Throws mlt::Error: io when the local file cannot be read or kept changing over 3 rounds;
// remote when the remote side fails (a full disk); link loss as the transport does (the done
// ranges stay for the next call).
RangeStats upload_ranges(Remote& remote, const std::string& local_path,
                         const std::string& remote_path, const RangeOptions& options = {});
// Sends the first command of that upload_ranges ahead (Remote::run_ahead), for a call of the
// same arguments after the next command: it prepares the remote partial file and lists the
// ranges an earlier attempt left (mlt's own files beside the destination; running it unasked
// leaves what an interrupted upload leaves).
void upload_ranges_ahead(Remote& remote, const std::string& local_path,
                         const std::string& remote_path, const RangeOptions& options = {});

}  // namespace mlt
