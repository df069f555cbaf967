#pragma once
// The remote side of the ranges: the sh commands that send, receive, hash, prepare and finish
// the ranges of a file, and the parsers of what they print. Private to src/transfer/.

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "mlt/ssh/remote.h"
#include "range_plan.h"

namespace mlt::transfer_detail {

// "I:BLOCK:LEN", one range as the remote commands read it back: its index, its first block
// of kRangeBlock bytes (ranges start on one), its length.
std::string range_word(const Range& r);

// Whether `line` is "INDEX SHA256", what the remote prints for a range it hashed; sets
// `index` and `hash` when it is.
bool hash_line(const std::string& line, size_t& index, std::string& hash);
// The hashes the remote printed in `text`, by range index (the last line of each counts).
std::map<size_t, std::string> hash_lines(const std::string& text);

// Down: the line `token`, then `ranges` of the remote file `path` one after the other on
// stdout, each exactly its length (a file that shrank is padded with zeros: its hash then
// differs), each followed by its sha256 read from the file once more, as "INDEX SHA256" on
// stderr.
std::string send_ranges_command(const std::string& token, const std::string& path,
                                const std::vector<Range>& ranges);

// Up: takes ranges from its stdin until it ends, each a header line (its range_word) and its
// bytes, read off exactly into the remote partial file `partial` at its offset; then the
// sha256 of what landed goes into `<hashes>/<index>.sha` and, as "INDEX SHA256", to stderr.
std::string receive_ranges_command(const std::string& partial, const std::string& hashes);

// Up: creates `dir` and prepares `partial` (a symlink there is removed) and its hash dir
// `hashes`, then lists "INDEX SHA256" for each range an earlier attempt with the same `id`
// left there (of another id, they go and the id is written).
std::string prepare_ranges_command(const std::string& dir, const std::string& partial,
                                   const std::string& hashes, const std::string& id);

// Up: gives `partial` the mtime `mtime_ns` and the mode `mode`, renames it to `path` and
// removes `hashes`.
std::string finish_ranges_command(const std::string& partial, const std::string& hashes,
                                  int64_t mtime_ns, mode_t mode, const std::string& path);

// The command of remote_range_hashes (the ranges go on its stdin, a range_word a line).
std::string range_hashes_command(const std::string& path);

// The sha256 of each of `ranges` of the remote file `path`, up to 8 at a time: index -> hash
// (a range it could not read is left out).
std::map<size_t, std::string> remote_range_hashes(Remote& remote, const std::string& path,
                                                  const std::vector<Range>& ranges);

}  // namespace mlt::transfer_detail
