#pragma once
// The remote commands of the transfer layer (but the ranges': range_commands.h), each a
// script of src/transfer/sh/ after its inputs, set as quoted variables. Private to
// src/transfer/; the unit tests render each for fixed inputs and check it.

#include <cstdint>
#include <string>

#include "mlt/transfer/transfer.h"

namespace mlt::transfer_detail {

// list_files.sh: the files under `remote_base`, NUL-separated (list_remote_files).
std::string list_files_command(const std::string& remote_base);

// list_info.sh: the clock, then a record per file under `remote_base`
// (list_remote_file_info).
std::string list_info_command(const std::string& remote_base);

// stat_files.sh: the clock, then a record per file of `remote_base` named on its stdin
// (stat_remote_files).
std::string stat_files_command(const std::string& remote_base);

// fetch_file.sh: "SIZE MTIME", then the remote file `remote_path` from `offset` (when within
// it); exits kMissingStatus, kSymlinkStatus (unless `follow`) or kDirectoryStatus.
std::string fetch_command(const std::string& remote_path, uint64_t offset, bool follow);
constexpr int kMissingStatus = 3;
constexpr int kSymlinkStatus = 4;
constexpr int kDirectoryStatus = 5;

// tar_unpack.sh: unpacks the tar stream on its stdin into `remote_base` (created).
std::string tar_unpack_command(const std::string& remote_base, Compression compression);

// make_dirs.sh: creates `remote_base` and the directories named on its stdin under it.
std::string make_dirs_command(const std::string& remote_base);

// tar_pack.sh: packs the names on its stdin under `remote_base` as a tar stream on stdout.
std::string tar_pack_command(const std::string& remote_base, Compression compression);

// has_compressor.sh: prints "yes" when the remote has the compressor of `wanted` (gzip or
// zstd).
std::string compressor_check(Compression wanted);

}  // namespace mlt::transfer_detail
