# Sets up attempt mlt_attempt of a gang that restarts every node together (begin_gang_attempt),
# after alive.sh, guard_rules.sh and checkpoints.sh: clears what the attempt before left (its start marker, process group, exit status,
# barrier files, result records), keeping the run's files and console log, and writes the attempt's
# run.sh (mlt_run_sh: its rendezvous may differ) and its number into the lock. Once per attempt (its marker): a retry after a
# lost link finds it and changes nothing.
{ mlt_mine && mlt_files_mine; } || mlt_foreign
[ ! -e "$j/gang.$mlt_attempt" ] || exit 0
if mlt_job_alive "$(cat "$j/pid" 2>/dev/null)" "$r" "$j"; then echo 'the job of the attempt before still runs' >&2; exit 1; fi
# checkpoints: the look after the end (checkpoints.sh; the guard's, if it took one, changed
# nothing since).
if [ -f "$j/checkpoints" ] && ! mlt_ckpt_final "$j" "$(date +%s)"; then
  echo "cannot take the checkpoints' look after the end in $j (is the disk full?)" >&2; exit 1
fi
rm -f "$j/started" "$j/pid" "$j/exit_status" "$j/sha256" "$j/stopped" "$j/guard.stop" "$j/guard.pid" "$j/shutdown.unattended" "$j/disk_full" \
  "$j/download_files" "$j/training" "$j/ready" "$j/go" "$j/start.claimed" \
  "$j/shutdown.started" "$j/shutdown.pid" "$j/shutdown.status" "$j"/started.[0-9]* || exit 1
{ printf '%s' "$mlt_run_sh" > "$j/run.sh.tmp" && mv -f "$j/run.sh.tmp" "$j/run.sh"; } || { mlt_nospace; exit 1; }
# A lock this run took for an earlier attempt that never started here names that attempt.
{ { grep -v '^attempt=' "$j/lock" && printf 'attempt=%s\n' "$mlt_attempt"; } > "$j/lock.$$.tmp" && mv -f "$j/lock.$$.tmp" "$j/lock"; } || { rm -f "$j/lock.$$.tmp"; mlt_nospace; exit 1; }
: > "$j/gang.$mlt_attempt" || { mlt_nospace; exit 1; }
