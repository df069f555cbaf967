#pragma once
// Starting the programs under test from a small process, so that their peak RSS is their own.
//
// A child made by fork() starts with a copy of its parent's page tables, and Linux records
// the RSS of that copy as the child's peak (ru_maxrss) when it execs: every program the test
// binary forks would report at least the test binary's own RSS at that moment (hundreds of
// MiB after a test that held a big string, more under AddressSanitizer, whose quarantine
// keeps freed memory). So the test binary forks one helper while it is still small, before
// main(), and that helper forks and execs the programs, reaps them with wait4 and reports
// each one's status and ru_maxrss. A program started this way is still a process the test
// can signal by pid (and by process group: it starts in a session of its own).

#include <sys/types.h>

#include <string>
#include <vector>

namespace mlt_test {

// Starts argv (argv[0] searched in `env`'s PATH, as execvpe does) with exactly `env`, in a
// new session, with `fds` as its stdin, stdout and stderr, in `cwd` (unless empty), with
// SIGPIPE at its default and no signal blocked. An exec (or chdir) failure makes it exit
// 127 with "exec failed: <argv0>: <reason>" on its stderr. Returns its pid; throws
// std::runtime_error when it cannot be started. The caller closes its copies of `fds`.
pid_t spawn(const std::vector<std::string>& argv, const std::vector<std::string>& env,
            const std::string& cwd, const int fds[3]);

// waitpid(pid, status, options) for a spawned program (options: 0 or WNOHANG): returns pid
// once it was reaped (with its wait status and its peak RSS in KiB, the ru_maxrss of wait4),
// 0 while it runs (WNOHANG), -1 with errno ECHILD for a pid that is not a spawned program
// (or was reaped already) and EINTR never.
pid_t spawn_wait(pid_t pid, int* status, int options, long* peak_rss_kib);

}  // namespace mlt_test
