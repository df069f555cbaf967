#pragma once

#include <string>
#include <string_view>

namespace mlt {

// The user's home directory: $HOME when set (so tests can use a temporary one), else the
// password database. Throws mlt::Error (io) when neither gives one.
std::string home_dir();

// Expands a leading `~` or `~/` with home_dir(); other paths are returned unchanged.
std::string expand_user(std::string_view path);

// The local mlt/MLTK directory: $MLTK_CACHE_DIR, else ~/.mltk.
std::string mltk_dir();

// Writes `data` to `path` atomically (temporary file in the same directory, fsync, rename)
// with the given mode. Throws mlt::Error (io) on failure; the target is then untouched.
void write_file_atomic(const std::string& path, std::string_view data, unsigned mode);

// Reads a whole local file. Throws mlt::Error (io) when it cannot be read.
std::string read_file(const std::string& path);

}  // namespace mlt
