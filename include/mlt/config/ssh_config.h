#pragma once

#include <optional>
#include <string>

namespace mlt {

// The value OpenSSH would take for `keyword` (case-insensitive) when connecting to `host`
// with the client config at `path`: the first value found in a `Host` block whose patterns
// match (`*`, `?`, `!negation`), or at top level. `Match` blocks and `Include` are not
// evaluated. Returns nullopt when the file is missing or sets nothing. Used for the options
// libssh parses but cannot report back (StrictHostKeyChecking).
std::optional<std::string> ssh_config_lookup(const std::string& path, const std::string& host,
                                             const std::string& keyword);

}  // namespace mlt
