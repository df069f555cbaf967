// The remote sh commands of the ranges and the parsers of their output (see range_commands.h).

#include "range_commands.h"

#include <cstdio>
#include <sstream>

#include "mlt/transfer/ranges.h"
#include "mlt/util/shell.h"

namespace mlt {

namespace transfer_detail {

namespace {

// `f=<path>` for a remote command, with "./" before a relative path (never an option).
std::string remote_file_word(const std::string& var, const std::string& path) {
    return var + "=" + shell_quote_path(path) + "; case $" + var + " in /*) ;; *) " + var + "=./$" +
           var + " ;; esac; ";
}

// Shell words that write the bytes of the range in $2 and $3 (range_word) of the file in
// variable `file` to stdout, rounded up to whole blocks (a cut follows where it matters). One
// dd reading whole blocks copies a range once; `tail -c +OFF | head -c LEN` copied it twice
// in 8 KiB pieces, twice the remote's CPU for a download.
std::string range_read(const std::string& file) {
    const std::string b = std::to_string(kRangeBlock);
    return "dd if=\"$" + file + "\" bs=" + b + " skip=$2 count=$((($3 + " +
           std::to_string(kRangeBlock - 1) + ") / " + b + ")) 2>/dev/null";
}

// The head of a remote `for` loop over `ranges`, each in $1 $2 $3 (range_word).
std::string range_loop(const std::vector<Range>& ranges) {
    std::string words;
    for (const Range& r : ranges) words += (words.empty() ? "" : " ") + range_word(r);
    return "for r in " + words + "; do IFS=:; set -- $r; unset IFS; ";
}

// `p=<partial>; d=<hashes>; `
std::string partial_words(const std::string& partial, const std::string& hashes) {
    return "p=" + shell_quote_path(partial) + "; d=" + shell_quote_path(hashes) + "; ";
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
    return "printf '%s\\n' " + token + "; " + remote_hash_setup() + remote_file_word("f", path) +
           range_loop(ranges) + "{ " + range_read("f") +
           "; head -c $3 /dev/zero; } | head -c $3; h=$(" + range_read("f") +
           " | head -c $3 | $hash_cmd) || exit 1; echo \"$1 ${h%% *}\" >&2; done";
}

std::string receive_ranges_command(const std::string& partial, const std::string& hashes) {
    return partial_words(partial, hashes) + remote_hash_setup() +
           "while read -r r; do IFS=:; set -- $r; unset IFS; "
           "head -c $3 | dd of=\"$p\" bs=" +
           std::to_string(kRangeBlock) + " seek=$2 conv=notrunc 2>/dev/null || exit 1; h=$(" +
           range_read("p") +
           " | head -c $3 | $hash_cmd | cut -c1-64) && echo \"$h\" > \"$d/$1.sha\" || "
           "exit 1; echo \"$1 $h\" >&2; done";
}

std::string prepare_ranges_command(const std::string& dir, const std::string& partial,
                                   const std::string& hashes, const std::string& id) {
    return partial_words(partial, hashes) + "mkdir -p -- " + shell_quote_path(dir) +
           " && { [ ! -L \"$p\" ] || rm -f -- \"$p\"; } && mkdir -p -- \"$d\" || exit 1; "
           "if [ \"$(cat \"$d/id\" 2>/dev/null)\" = " +
           shell_quote(id) +
           " ]; then "
           "for h in \"$d\"/*.sha; do [ -f \"$h\" ] && n=${h##*/} && "
           "echo \"${n%.sha} $(cut -c1-64 \"$h\")\"; done; "
           "else rm -f -- \"$d\"/*.sha; printf '%s\\n' " +
           shell_quote(id) + " > \"$d/id\"; fi; true";
}

std::string finish_ranges_command(const std::string& partial, const std::string& hashes,
                                  int64_t mtime_ns, mode_t mode, const std::string& path) {
    const int64_t sec = mtime_ns / 1000000000;
    const int64_t nsec = mtime_ns % 1000000000;
    char mtime[48], octal[8];
    std::snprintf(mtime, sizeof mtime, "@%lld.%09lld", static_cast<long long>(sec),
                  static_cast<long long>(nsec));
    std::snprintf(octal, sizeof octal, "%o", static_cast<unsigned>(mode));
    // A file of no bytes has no range that would have created the partial file.
    return partial_words(partial, hashes) + ": >> \"$p\" && touch -m -d " + mtime +
           " \"$p\" && chmod " + octal + " \"$p\" && mv -f -- \"$p\" " + shell_quote_path(path) +
           " && rm -rf -- \"$d\"";
}

std::map<size_t, std::string> remote_range_hashes(Remote& remote, const std::string& path,
                                                  const std::vector<Range>& ranges) {
    if (ranges.empty()) return {};
    std::string specs;
    for (const Range& r : ranges) specs += range_word(r) + "\n";
    const RemoteOutput got = remote.run(
        remote_hash_setup() + remote_file_word("f", path) +
            "xargs -P 8 -n 1 sh -c 'IFS=:; set -- $1; unset IFS; "
            "f=$0; h=$(" +
            range_read("f") + " | head -c $3 | $hash_cmd) && echo \"$1 ${h%% *}\"' \"$f\"",
        specs);
    return hash_lines(got.out);
}

}  // namespace transfer_detail

std::string remote_hash_setup() {
    const std::string empty_sha256 =
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
    return "hash_cmd=sha256sum; [ \"$(printf '' | openssl dgst -sha256 -r 2>/dev/null | "
           "cut -c1-64)\" = " +
           empty_sha256 + " ] && hash_cmd='openssl dgst -sha256 -r'; export hash_cmd; ";
}

}  // namespace mlt
