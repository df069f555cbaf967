#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace mlt {

// The debug log file's cap: once a message would take it past kLogFileBytes it is rotated
// (FILE -> FILE.1 -> FILE.2), and kLogFilesKept older files stay besides it.
constexpr uint64_t kLogFileBytes = 8 * 1024 * 1024;
constexpr int kLogFilesKept = 2;
// The most of one log message that is written (to the file and the console), the rest
// replaced by " ... (N more bytes)".
constexpr size_t kMaxLogMessage = 64 * 1024;
// The most of a warning or error line shown on the console (printable(): one line, escaped):
// it quotes outside text (settings keys, remote names).
constexpr size_t kMaxWarningLine = 2000;

// Configures spdlog for the CLI: messages go to the process's reporter() (looked up per
// message) as Event::log lines `mlt: <text>`, warnings as `mlt: warning: <text>`, which the
// default reporter writes to stderr; verbosity 0 shows info and up, 1 (-v) debug, 2 (-vv) trace.
// When `file_path` is given, debug and up also go there with timestamps (rotated at
// kLogFileBytes, kLogFilesKept older files kept); a file that cannot be opened is skipped
// silently. Every message is cut at kMaxLogMessage, and in both each line of a message is
// escaped (printable_lines(): remote stderr and names keep no control character).
void setup_logging(int verbosity, const std::string& file_path = {});

// Writes one line to the file log that setup_logging() opened (nothing without one), at
// warning level: the warnings a Reporter shows go there as spdlog's do.
void log_to_file(std::string_view line);

}  // namespace mlt
