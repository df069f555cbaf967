#pragma once

namespace mlt {

// Configures spdlog for the CLI: messages go to stderr as `mlt: <text>`, warnings as
// `mlt: warning: <text>`; verbosity 0 shows info and up, 1 (-v) debug, 2 (-vv) trace.
void setup_logging(int verbosity);

}  // namespace mlt
