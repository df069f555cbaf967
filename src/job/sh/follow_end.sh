# The end of a job's follow (follow.sh), after the log's last byte; result.sh follows. For a run's
# job (mlt_scoped; released.sh before), phase finished, only over phase running: a follow that an
# mlt left behind (killed, or cut off) may still reach the end after a newer mlt of the run recorded
# collected, which it must not undo. The lock must still be the run's, as set_run_phase requires;
# one that another follow of the run released is said (`gone=1`), for mlt to take it back before it
# collects. Then the result, on stderr after its marker line: never mixed with the log's bytes.
mlt_gone=
if [ -n "$mlt_scoped" ]; then
  if mlt_mine; then [ "$(sed -n 's/^phase=//p' "$j/lock")" != running ] || mlt_phase finished
  elif mlt_released; then mlt_gone=1
  else mlt_foreign; fi
fi
exec >&2
echo mlt-follow-result
[ -z "$mlt_gone" ] || echo gone=1
