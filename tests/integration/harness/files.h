#pragma once

#include <sys/types.h>

#include <cstddef>
#include <string>
#include <vector>

namespace mlt_test {

// The whole content of a file; throws std::runtime_error when it cannot be read.
std::string read_file(const std::string& path);

// Creates or truncates `path` with `content`, then sets `mode`; throws on failure.
void write_file(const std::string& path, const std::string& content, mode_t mode = 0644);

// Appends `content` to `path` (created 0644 if missing); throws on failure.
void append_file(const std::string& path, const std::string& content);

// Creates a directory with `mode` (parents must exist; existing is fine); throws on failure.
void make_dir(const std::string& path, mode_t mode = 0700);

// True when `path` exists (lstat).
bool path_exists(const std::string& path);

// The permission bits (mode & 07777) of `path`; -1 when it does not exist.
int file_mode(const std::string& path);

// The lines of `text` without their '\n' (a final newline gives no empty last line).
std::vector<std::string> split_lines(const std::string& text);

// The whitespace-separated fields of `line`.
std::vector<std::string> split_fields(const std::string& line);

// `text` without leading and trailing whitespace.
std::string trim(const std::string& text);

// True when `haystack` contains `needle`, ignoring ASCII case.
bool contains_icase(const std::string& haystack, const std::string& needle);

// The number of non-overlapping occurrences of `needle` in `haystack`.
std::size_t count_occurrences(const std::string& haystack, const std::string& needle);

}  // namespace mlt_test
