#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace mlt {

// The user's home directory: $HOME when set (so tests can use a temporary one), else the
// password database. Throws mlt::Error (io) when neither gives one.
std::string home_dir();

// Expands a leading `~` or `~/` with home_dir(); other paths are returned unchanged.
std::string expand_user(std::string_view path);

// One piece of a path: plain text, or the name of a variable it refers to.
struct PathPiece {
    std::string text;  // the text, or the variable's name
    bool variable = false;
};

// Splits `path` at `$NAME` and `${NAME}` (NAME: a letter or `_`, then letters, digits, `_`),
// the references os.path.expandvars knows; every other `$` is plain text.
std::vector<PathPiece> split_variable_references(std::string_view path);

// Replaces `$NAME` / `${NAME}` by the local environment's value; an unset variable stays as
// written (as MLTK's os.path.expandvars does).
std::string expand_env_vars(std::string_view path);

// The local mlt/MLTK directory: $MLTK_CACHE_DIR, else ~/.mltk.
std::string mltk_dir();

// Writes `data` to `path` atomically (temporary file in the same directory, fsync, rename)
// with the given mode. Throws mlt::Error (io) on failure; the target is then untouched.
void write_file_atomic(const std::string& path, std::string_view data, unsigned mode);

// Reads a whole local file. Throws mlt::Error (io) when it cannot be read.
std::string read_file(const std::string& path);

}  // namespace mlt
