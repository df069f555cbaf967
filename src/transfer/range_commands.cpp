// The remote sh commands of the ranges and the parsers of their output (see range_commands.h).

#include "range_commands.h"

#include <cstdio>
#include <sstream>

#include "internal.h"
#include "mlt/transfer/ranges.h"
#include "mlt/util/shell.h"
#include "remote_scripts.h"

namespace mlt {

namespace transfer_detail {

namespace {

// The block of the remote dd, as range_*.sh read it.
std::string block_word() {
    return shell_assignment("b", std::to_string(kRangeBlock));
}

}  // namespace

std::string range_word(const Range& r) {
    return std::to_string(r.index) + ":" + std::to_string(r.offset / kRangeBlock) + ":" +
           std::to_string(r.length);
}

bool hash_line(const std::string& line, size_t& index, std::string& hash) {
    const size_t space = line.find(' ');
    if (space == 0 || space == std::string::npos || space > 18 ||
        line.find_first_not_of("0123456789") != space || line.size() != space + 65 ||
        line.find_first_not_of("0123456789abcdef", space + 1) != std::string::npos)
        return false;
    index = std::stoul(line.substr(0, space));
    hash = line.substr(space + 1);
    return true;
}

std::map<size_t, std::string> hash_lines(const std::string& text) {
    std::map<size_t, std::string> out;
    std::istringstream in(text);
    std::string line, hash;
    size_t index = 0;
    while (std::getline(in, line))
        if (hash_line(line, index, hash)) out[index] = hash;
    return out;
}

std::string send_ranges_command(const std::string& token, const std::string& path,
                                const std::vector<Range>& ranges) {
    std::string words;
    for (const Range& r : ranges) words += (words.empty() ? "" : " ") + range_word(r);
    return shell_assignment("t", shell_quote(token)) +
           shell_assignment("f", shell_quote_path(path)) + block_word() +
           shell_assignment("rs", shell_quote(words)) + remote_hash_setup() +
           std::string(scripts::transfer_range_send);
}

std::string receive_ranges_command(const std::string& partial, const std::string& hashes) {
    return shell_assignment("p", shell_quote_path(partial)) +
           shell_assignment("d", shell_quote_path(hashes)) + block_word() + remote_hash_setup() +
           std::string(scripts::transfer_range_receive);
}

std::string prepare_ranges_command(const std::string& dir, const std::string& partial,
                                   const std::string& hashes, const std::string& id) {
    return shell_assignment("p", shell_quote_path(partial)) +
           shell_assignment("d", shell_quote_path(hashes)) +
           shell_assignment("w", shell_quote_path(dir)) + shell_assignment("id", shell_quote(id)) +
           std::string(scripts::transfer_range_prepare);
}

std::string finish_ranges_command(const std::string& partial, const std::string& hashes,
                                  int64_t mtime_ns, mode_t mode, const std::string& path) {
    // Sign and magnitude: touch reads "@-1.5" as 1.5 s before 1970 (both parts negative).
    const uint64_t magnitude =
        mtime_ns < 0 ? 0 - static_cast<uint64_t>(mtime_ns) : static_cast<uint64_t>(mtime_ns);
    char mtime[48], octal[8];
    std::snprintf(mtime, sizeof mtime, "@%s%llu.%09llu", mtime_ns < 0 ? "-" : "",
                  static_cast<unsigned long long>(magnitude / 1000000000),
                  static_cast<unsigned long long>(magnitude % 1000000000));
    std::snprintf(octal, sizeof octal, "%o", static_cast<unsigned>(mode));
    return shell_assignment("p", shell_quote_path(partial)) +
           shell_assignment("d", shell_quote_path(hashes)) +
           shell_assignment("m", shell_quote(mtime)) + shell_assignment("o", shell_quote(octal)) +
           shell_assignment("f", shell_quote_path(path)) +
           std::string(scripts::transfer_range_finish);
}

std::string range_hashes_command(const std::string& path) {
    return shell_assignment("f", shell_quote_path(path)) + block_word() +
           shell_assignment("s", shell_quote(scripts::transfer_range_hash)) + remote_hash_setup() +
           std::string(scripts::transfer_range_hashes);
}

std::map<size_t, std::string> remote_range_hashes(Remote& remote, const std::string& path,
                                                  const std::vector<Range>& ranges) {
    if (ranges.empty()) return {};
    std::string specs;
    for (const Range& r : ranges) specs += range_word(r) + "\n";
    return hash_lines(remote.run(range_hashes_command(path), specs).out);
}

}  // namespace transfer_detail

std::string remote_hash_setup() {
    return std::string(scripts::transfer_hash_setup);
}

}  // namespace mlt
