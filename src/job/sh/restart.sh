# Restarts the run's lost job in place as attempt mlt_attempt (restart_job), after alive.sh,
# launch.sh, log_line.sh, guard_rules.sh and checkpoints.sh, and prints its process group. Lost: its process group is recorded and
# gone, with no exit status, its results were not collected, no shutdown_cmds started, and the lock
# records the attempt before; else the command ends with mlt_st_not_lost, saying why. The first
# caller (the attempt's marker, created atomically) sets the attempt up: the old pid removed, the
# marker line in the console log, attempt=N in the lock; a second one (a retry, a concurrent
# --resume) waits for that and then for the job's process group.
{ mlt_mine && mlt_files_mine; } || mlt_foreign
mlt_lock_attempt() { mlt_a=$(sed -n 's/^attempt=//p' "$j/lock" 2>/dev/null); echo "${mlt_a:-1}"; }
# With mlt_failed (a watch.on_failure `restart`), a job that ended with a failing status of its
# own (not 0, not a stop by mlt or the guard) counts as lost too: its status moves aside.
mlt_why() {
  g=$(cat "$j/pid" 2>/dev/null)
  if [ -e "$j/exit_status" ]; then
    mlt_x=$(cat "$j/exit_status")
    if [ -z "$mlt_failed" ] || [ "$mlt_x" = 0 ] || [ -s "$j/stopped" ] || [ -e "$j/guard.stop" ]; then
      echo "it ended with exit status $mlt_x"; return 0
    fi
  elif [ -z "$g" ]; then echo 'it has not started'; return 0
  elif mlt_job_alive "$g" "$r" "$j"; then echo 'it is running'; return 0
  fi
  if [ -e "$j/shutdown.started" ] || [ "$(sed -n 's/^phase=//p' "$j/lock")" = collected ]; then echo 'its results were collected'
  elif [ "$(mlt_lock_attempt)" != "$((mlt_attempt - 1))" ]; then echo "it is attempt $(mlt_lock_attempt)"
  fi
}
if [ ! -e "$j/started.$mlt_attempt" ] && [ -n "$(mlt_why)" ] && [ ! -e "$j/started.$mlt_attempt" ]; then
  echo "the job is not lost: $(mlt_why)" >&2; exit "$mlt_st_not_lost"
fi
mlt_fresh() {
  # checkpoints: the look after the end (mlt_ckpt_final; the guard's, if it took one, changed
  # nothing since): what is not whole then never settles in the next attempt.
  # On failure the attempt's marker goes too, so that a --resume sets the attempt up again.
  if [ -f "$j/checkpoints" ] && ! mlt_ckpt_final "$j" "$(date +%s)"; then
    rm -f "$j/started.$mlt_attempt"
    echo "cannot take the checkpoints' look after the end in $j (is the disk full?)" >&2; exit 1
  fi
  rm -f "$j/pid" "$j/training" "$j/disk_full" || exit 1
  mlt_how='the job was lost'
  if [ -e "$j/exit_status" ]; then
    mlt_how="the job failed with exit status $(cat "$j/exit_status")"
    { mv -f "$j/exit_status" "$j/exit_status.$((mlt_attempt - 1))" && rm -f "$j/sha256" "$j/download_files"; } || exit 1
  fi
  mlt_log_line "==== mlt: attempt $mlt_attempt of run $r ($mlt_how) ===="
  if ! { { sed '/^attempt=/d' "$j/lock" && echo "attempt=$mlt_attempt"; } > "$j/lock.$$.tmp" && mv -f "$j/lock.$$.tmp" "$j/lock"; }; then mlt_nospace; exit 1; fi
  mlt_phase starting
}
mlt_again() {
  mlt_w=$(($(date +%s) + 10))
  while [ "$(mlt_lock_attempt)" != "$mlt_attempt" ] && [ "$(date +%s)" -le "$mlt_w" ]; do sleep 0.05; done
}
mlt_launch "$j/started.$mlt_attempt" "$j/run.sh" "$j/console.log" "$j/pid" "$j/exit_status" "$mlt_attempt"
mlt_phase running
cat "$j/pid"
