# The functions of every command that acts for one run (run_command in job_shell.cpp). They expect
# `j` (the job dir) and `r` (the run id) set, and the exit statuses mlt_st_gone, mlt_st_foreign and
# mlt_st_nospace (there, from the C++ constants). The lock names its run on a `run=` line; a lock of
# an older mlt has none, which reads as the run id "". A library of functions: it runs nothing
# itself.
# shellcheck disable=SC2154
mlt_lock_run() { { while IFS= read -r mlt_l || [ -n "$mlt_l" ]; do case $mlt_l in run=*) printf '%s\n' "${mlt_l#run=}";; esac; done < "$j/lock"; } 2>/dev/null; }
mlt_mine() { [ -f "$j/lock" ] && [ "$(mlt_lock_run)" = "$r" ]; }
mlt_files_mine() { mlt_id=; { read -r mlt_id < "$j/run_id"; } 2>/dev/null; [ "$mlt_id" = "$r" ]; }
mlt_phase() { mlt_mine && sed "s/^phase=.*/phase=$1/" "$j/lock" > "$j/lock.$$.tmp" && mv -f "$j/lock.$$.tmp" "$j/lock"; }
mlt_foreign() {
  if [ ! -d "$PWD/$j" ]; then echo "the remote dir holds no job of this model any more" >&2; exit "$mlt_st_gone"
  elif [ ! -f "$j/lock" ]; then echo "its lock was released" >&2
  elif ! mlt_mine; then echo "the lock belongs to run '$(mlt_lock_run)'" >&2
  else echo "the job files belong to run '$(cat "$j/run_id" 2>/dev/null)'" >&2; fi
  exit "$mlt_st_foreign"
}
mlt_full() { [ "$(df -Pk . 2>/dev/null | awk 'NR == 2 { print $4 }')" = 0 ]; }
mlt_nospace() { if mlt_full; then echo "no space left on device in $(pwd)" >&2; exit "$mlt_st_nospace"; fi; }
