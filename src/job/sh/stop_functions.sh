# How a job is stopped, for `stop` (stop.sh) and the host's guard (guard.sh), after alive.sh. A
# library of functions: it runs nothing itself. Both need g (the job's process group), o (its run
# id) and j (the job dir).
#
# mlt_wait_up_to S: waits up to S seconds while a process of the job lives.
# mlt_stop_job GRACE: TERM to the job's group and to every process of its run, a wait (up to GRACE
#   seconds) for them to go, then KILL. `stopped` says that mlt's stop ended the job, and with which
#   status: written before each signal, so that whoever sees the status the wrapper records sees it
#   too. A wrapper killed by KILL cannot record its status, so the stopper does.
mlt_wait_up_to() {
  mlt_t=$(($(date +%s) + $1))
  while mlt_job_alive "$g" "$o" "$j" && [ "$(date +%s)" -le "$mlt_t" ]; do sleep 0.1; done
}
mlt_stopped() { printf '%s\n' "$1" > "$j/stopped.tmp" && mv -f "$j/stopped.tmp" "$j/stopped"; }
mlt_stop_job() {
  mlt_stopped 143; mlt_signal TERM "$g" "$o" "$j"
  mlt_wait_up_to "$1"
  mlt_s=143
  if mlt_job_alive "$g" "$o" "$j"; then
    mlt_s=137; mlt_stopped 137; mlt_signal KILL "$g" "$o" "$j"
    mlt_wait_up_to 5
  fi
  [ -f "$j/exit_status" ] || { printf '%s\n' "$mlt_s" > "$j/exit_status.tmp" && mv -f "$j/exit_status.tmp" "$j/exit_status"; }
}
