#pragma once
// The remote shell function that says whether a process group still runs. Shared by the
// status query and the stop command so both judge a job the same way.

namespace mlt::job_detail {

// `mlt_alive PGID`: true when a process of the group is alive and not a zombie. Zombies
// count as gone because containers often run a pid 1 that never reaps them (and `kill -0`
// succeeds on a zombie). Without ps, falls back to `kill -s 0` (POSIX; dash has no `kill -0 --`).
constexpr const char* kAliveFunction = R"sh(mlt_alive() {
  if command -v ps >/dev/null 2>&1; then
    ps -eo pgid=,stat= 2>/dev/null | awk -v g="$1" '$1 == g && $2 !~ /^Z/ { found = 1 } END { exit !found }'
  else
    kill -s 0 -- "-$1" 2>/dev/null
  fi
}
)sh";

}  // namespace mlt::job_detail
