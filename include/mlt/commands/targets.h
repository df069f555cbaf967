#pragma once
// The connection options of `mlt ssh` and the nodes they name (Target).

#include <optional>
#include <string>
#include <vector>

#include "mlt/config/settings.h"
#include "mlt/train/run/target.h"

namespace mlt {

// The connection options of `mlt ssh` (before COMMAND; train also takes -h/-p/-i/--password
// after MODEL, as MLTK does).
struct SshCommandLine {
    std::vector<std::string> hosts;        // -h, repeatable
    int port = 0;                          // -p
    std::string identity_file;             // -i
    std::optional<std::string> password;   // --password
    std::vector<std::string> ssh_options;  // -o Key=Value
    std::string ssh_config;                // -F
};

// Combines the command line with the settings into one Target per node (command line over
// settings; the ssh config layer is applied later by Session::open). Throws mlt::Error
// (usage, exit 2) for a bad -h/-o value or when no host is known at all.
std::vector<Target> resolve_targets(const SshCommandLine& cli, const SshSettings& settings);

}  // namespace mlt
