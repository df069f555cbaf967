# The checkpoint ledger for a pull (JobDir::read_checkpoints, docs/remote-protocol.md,
# "Checkpoints"), after job_dir_command (j), guard_rules.sh and checkpoints.sh. Inputs:
# mlt_done (1: the pull ended, the hold goes) or mlt_hold (1: the guard holds its deletions
# while JOBDIR/ckpt.pulling is younger than 10 min). Prints "ledger" and the ledger, its kept
# lines first, up to 1000000 bytes (a remote command's output is read up to 1 MiB); or "no
# ledger yet" when the run has checkpoints but the guard has not looked yet; or nothing.
if [ -n "$mlt_done" ]; then
  rm -f "$j/ckpt.pulling"
  exit 0
fi
# A job that ended: after its guard's last look (waited for up to 10 s while the guard lives),
# that look once more here, without the hold of a pull while the job ran (which kept that
# look from deleting): nothing changes the checkpoints after it. A pull is then no reason to
# hold anything.
if [ -f "$j/checkpoints" ] && [ -f "$j/exit_status" ]; then
  n=0
  while [ ! -f "$j/ckpt.final" ] && [ "$n" -lt 10 ] && [ -f "$j/guard.pid" ] && kill -s 0 "$(cat "$j/guard.pid" 2> /dev/null)" 2> /dev/null; do
    sleep 1
    n=$((n + 1))
  done
  rm -f "$j/ckpt.pulling"
  mlt_ckpt_final "$j" "$(date +%s)" ended
elif [ -n "$mlt_hold" ] && [ -f "$j/checkpoints" ]; then
  touch "$j/ckpt.pulling" 2> /dev/null
fi
if [ -f "$j/ckpt.ledger" ]; then
  echo ledger
  { LC_ALL=C awk -F '\t' '$7 == "kept"' "$j/ckpt.ledger"; LC_ALL=C awk -F '\t' '$7 != "kept"' "$j/ckpt.ledger"; } | head -c 1000000
elif [ -f "$j/checkpoints" ]; then
  echo 'no ledger yet'
fi
exit 0
