# Starts the run's guard again (JobDir::start_guard in guard.cpp), after run_functions.sh, alive.sh
# and guard_functions.sh, when its process is gone (killed) while the job runs: as the wrapper
# starts it, its words in the console log. Inputs: mlt_guard (guard.sh's text, with its
# libraries); with mlt_set_deadline=1, mlt_budget_s and mlt_limit: the run's deadline (by this
# host's clock) and limit first replace those of the lock (none: removed), which a running guard
# reads again within 5 s. Prints "started", or nothing when the job does not run, the lock gives
# the guard no duty, or a guard runs.
{ mlt_mine && mlt_files_mine; } || mlt_foreign
g=$(cat "$j/pid" 2>/dev/null)
[ -n "$g" ] && mlt_job_alive "$g" "$r" "$j" || exit 0
if [ -n "$mlt_set_deadline" ]; then
  mlt_t=$(date +%s)
  if ! { { grep -v -e '^deadline=' -e '^limit=' "$j/lock"
    [ -z "$mlt_budget_s" ] || printf 'deadline=%s\nlimit=%s\n' "$((mlt_t + mlt_budget_s))" "$mlt_limit"; } > "$j/lock.$$.tmp" &&
    mv -f "$j/lock.$$.tmp" "$j/lock"; }; then rm -f "$j/lock.$$.tmp"; mlt_nospace; exit 1; fi
fi
mlt_guard_duty "$j/lock" || exit 0
gp=$(cat "$j/guard.pid" 2>/dev/null)
if [ -n "$gp" ] && kill -s 0 "$gp" 2>/dev/null; then exit 0; fi
mlt_start_guard "$mlt_guard" "$g" "$r" "$j" >> "$j/console.log" 2>&1
echo started
