# Takes the run's lock back (retake_run), after released.sh: only a lock of the run to keep (the
# run's, one a follow of the run released, one being released); otherwise nothing is written.
# `retaken` first, which no follow's release passes (release_at_end.sh looks for it after it moved
# the lock aside); then the lock put back: the released one linked into place (fails when another
# took its place), a release under way waited for, briefly.
mlt_releasing() { set -- "$j"/lock.release.*; [ -e "$1" ]; }
if mlt_mine || mlt_released || mlt_releasing; then
  (printf '%s\n' "$r" > "$j/retaken") 2>/dev/null || { mlt_nospace; echo "cannot write $j/retaken" >&2; exit 1; }
else mlt_foreign; fi
n=0
until mlt_mine; do
  [ "$n" -lt 20 ] || mlt_foreign
  n=$((n + 1))
  if mlt_released; then ln "$j/released" "$j/lock" 2>/dev/null && rm -f "$j/released"
  elif mlt_releasing; then sleep 0.05
  else mlt_foreign; fi
done
