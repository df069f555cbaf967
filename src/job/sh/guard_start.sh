# Starts the run's guard again (JobDir::start_guard in guard.cpp), after run_functions.sh and
# alive.sh, when its process is gone (killed) while the job runs: as the wrapper starts it, beside
# the job, in a session of its own, without the run's MLT_RUN_ID and MLT_JOB_DIR, its words in the
# console log. Input: mlt_guard (guard.sh's text, with its libraries). Prints "started", or nothing
# when the job does not run, the lock gives the guard no duty, or a guard runs.
{ mlt_mine && mlt_files_mine; } || mlt_foreign
g=$(cat "$j/pid" 2>/dev/null)
[ -n "$g" ] && mlt_job_alive "$g" "$r" "$j" || exit 0
grep -q -e '^deadline=' -e '^silent=' -e '^unattended=' "$j/lock" 2>/dev/null || exit 0
gp=$(cat "$j/guard.pid" 2>/dev/null)
if [ -n "$gp" ] && kill -s 0 "$gp" 2>/dev/null; then exit 0; fi
(unset MLT_RUN_ID MLT_JOB_DIR; exec setsid sh -c "$mlt_guard" sh "$g" "$r" "$j" < /dev/null >> "$j/console.log" 2>&1 &)
echo started
