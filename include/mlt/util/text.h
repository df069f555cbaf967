#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mlt {

// Text from outside (remote stderr, file names, user input) made safe to print on one
// terminal line: control characters, DEL, C1 controls and bytes that are not UTF-8 become
// escapes (`\n`, `\t`, `\r`, `\xNN`); valid UTF-8 stays as it is. At most `max_bytes` of the
// result are kept, cut at a character boundary, with ` ... (N more bytes)` added.
std::string printable(std::string_view text, size_t max_bytes = 400);

// printable() for text of several lines: each line (cut at `\n`, which stays) made printable()
// within `max_line_bytes`, so that a remote's message keeps its lines but no line can move the
// cursor, clear the screen or set the title.
std::string printable_lines(std::string_view text, size_t max_line_bytes = 400);

// The last `max_lines` non-blank lines of a command's output, each made printable() within
// `max_line_bytes`, joined with ` | `; when earlier lines were left out, the result starts
// with `... ` (a 200 KB login banner before a tar error leaves the error in view).
std::string last_lines(std::string_view text, size_t max_lines = 3, size_t max_line_bytes = 200);

// The first `shown` of `names` joined with ", ", then ` and N more` for the rest: a warning
// about many files stays one line.
std::string names_in_brief(const std::vector<std::string>& names, size_t shown = 10);

// "999 B", "1.0 KiB", "108.4 MiB": binary units as rsync -h and curl show them, one decimal
// from KiB up (never "1024.0 KiB": that is "1.0 MiB").
std::string format_bytes(uint64_t bytes);

// `s` without leading and trailing blanks (spaces, tabs, CR, LF).
std::string trim(std::string_view s);

// A whole decimal number within [lo, hi]: digits with an optional leading `-`, nothing else
// (no blanks, `+`, `0x`, exponent or trailing text). nullopt otherwise.
std::optional<long long> parse_decimal(std::string_view text, long long lo, long long hi);

// A number as a person writes it: "%g" (0.5, 2, 1e+06).
std::string number_text(double value);

// `text` cut at each `sep` (empty fields kept: "a,,b" is 3 fields; "" is one empty field).
std::vector<std::string> split(std::string_view text, char sep);

// A finite decimal number within [lo, hi]: digits, one optional `.`, an optional leading `-`
// and an optional exponent (`1e-3`, `1e+3`); no blanks, leading `+`, hex, `inf` or `nan`. nullopt
// otherwise.
std::optional<double> parse_real(std::string_view text, double lo, double hi);

// An amount of US dollars: "$0.42", "$1234.50" (two decimals; below a cent "$0.004").
std::string format_usd(double usd);

// OpenSSH's match_pattern: `*` stands for any run of characters and `?` for one; every other
// character (`[` included) stands for itself. With `fold_case`, ASCII letters match either case.
bool wildcard_match(std::string_view pattern, std::string_view text, bool fold_case);

// Damerau-Levenshtein distance (optimal string alignment: an insertion, a deletion, a
// substitution or a swap of two neighbours costs 1), for "did you mean" suggestions.
size_t edit_distance(std::string_view a, std::string_view b);

// "mlt-" and 128 random bits in hex: a marker no output of a remote command can fake.
std::string random_token();

}  // namespace mlt
