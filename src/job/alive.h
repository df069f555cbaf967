#pragma once
// The remote shell functions that say whether a job still runs and which processes are its.
// Shared by the status query, the lock and the stop command so all judge a job the same way.

#include <string>

#include "remote_scripts.h"

namespace mlt::job_detail {

// The shell functions of src/job/sh/alive.sh (mlt_alive, mlt_job_alive, mlt_signal, ...).
inline const std::string kAliveFunction{scripts::job_alive};

}  // namespace mlt::job_detail
