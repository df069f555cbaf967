# Starts the run's guard again (JobDir::start_guard in guard.cpp), after run_functions.sh, alive.sh
# and guard_functions.sh, when its process is gone (killed) while the job runs: as the wrapper
# starts it, its words in the console log. Input: mlt_guard (guard.sh's text, with its libraries). Prints "started", or nothing
# when the job does not run, the lock gives the guard no duty, or a guard runs.
{ mlt_mine && mlt_files_mine; } || mlt_foreign
g=$(cat "$j/pid" 2>/dev/null)
[ -n "$g" ] && mlt_job_alive "$g" "$r" "$j" || exit 0
mlt_guard_duty "$j/lock" || exit 0
gp=$(cat "$j/guard.pid" 2>/dev/null)
if [ -n "$gp" ] && kill -s 0 "$gp" 2>/dev/null; then exit 0; fi
mlt_start_guard "$mlt_guard" "$g" "$r" "$j" >> "$j/console.log" 2>&1
echo started
