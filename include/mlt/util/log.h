#pragma once

#include <string>

namespace mlt {

// Configures spdlog for the CLI: messages go to the process's reporter() (looked up per
// message) as Event::log lines `mlt: <text>`, warnings as `mlt: warning: <text>`, which the
// default reporter writes to stderr; verbosity 0 shows info and up, 1 (-v) debug, 2 (-vv) trace.
// When `file_path` is given, debug and up also go there with timestamps (rotated at 1 MiB,
// 3 files kept); a file that cannot be opened is skipped silently. In both, each line of a
// message is escaped (printable_lines(): remote stderr and names keep no control character).
void setup_logging(int verbosity, const std::string& file_path = {});

}  // namespace mlt
