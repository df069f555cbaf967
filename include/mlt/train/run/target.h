#pragma once
// Target: one node a run works on (a host of the command line or of the settings).

#include <string>

#include "mlt/ssh/session.h"

namespace mlt {

// One node to work on: how to connect and where the remote working directory is.
struct Target {
    ConnectSpec connect;
    std::string remote_dir;
};

}  // namespace mlt
