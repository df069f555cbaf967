# Stops the model's job (stop_job, stop_and_release), after alive.sh and stop_functions.sh: as
# mlt_stop_job does. Prints "stopped", "finished" (it had ended, its results are not collected) or
# "none". Flags (1 or empty): mlt_scoped, the job files must be run r's; mlt_and_release, the lock
# is removed in the same command, and only if it still names the run that held it when the stop
# began, never a finished job's (--resume collects it).
[ -z "$mlt_scoped" ] || mlt_files_mine || mlt_foreign
h=; if [ -n "$mlt_and_release" ] && [ -f "$j/lock" ]; then h=1; mlt_held=$(mlt_lock_run); fi
mlt_release() { if [ -n "$h" ] && [ -f "$j/lock" ] && [ "$(mlt_lock_run)" = "$mlt_held" ]; then rm -f "$j/lock"; fi; true; }
g=$(cat "$j/pid" 2>/dev/null); o=$(cat "$j/run_id" 2>/dev/null)
if ! mlt_job_alive "$g" "$o" "$j"; then
  if [ -e "$j/exit_status" ] && [ -f "$j/lock" ] && [ "$(sed -n 's/^phase=//p' "$j/lock")" != collected ]; then echo finished; exit 0; fi
  mlt_release; echo none; exit 0
fi
mlt_stop_job "$mlt_grace"
mlt_release; echo stopped
