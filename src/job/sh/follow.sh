# One bounded piece of a follow of a task's log (follow_log in follow.cpp), after run_functions.sh,
# alive.sh, mlt_nap (nap.sh or nap_on_job.sh) and, with samples, sampler.sh; follow_end.sh or
# follow_end_shutdown.sh follows. Inputs: l, s and mlt_pidf (the task's log, status and pid files),
# o (the offset already sent), mlt_seconds (the segment's time), q (how many quick looks first),
# mlt_scoped (1: the job files must be run r's), mlt_every (empty: no samples) with mlt_samples (the
# guard's samples file, which sampler.sh relays when it exists) and mlt_seen, mlt_st_not_started
# and mlt_st_segment_over.
#
# Polls the log's size and sends exactly the bytes between the offset and that size, so the remote
# side knows what it sent: when the task has ended, one last send reaches the end of the log and
# nothing is left for a catch-up. Exit 0: ended; mlt_st_segment_over: the segment's time is up, by
# the remote clock (a count of sleeps would stretch under load). From the start of the log it polls
# every 0.05 s for 2 s, then every 0.2 s: a short task's end is seen sooner, a long one costs no
# more. Each poll looks at the log and the status file with builtins and one `wc`; the processes
# (ps) and the clock only every 5th: a task that ends writes its status, and only one killed
# outright is seen by ps, up to 1 s later (the poll's own processes took CPU from the task it
# follows).
[ -z "$mlt_scoped" ] || mlt_files_mine || mlt_foreign
g=$(cat "$mlt_pidf" 2>/dev/null)
[ -n "$g" ] || [ -e "$s" ] || { echo 'it has not started' >&2; exit "$mlt_st_not_started"; }
mlt_send() { n=$(wc -c < "$l" 2>/dev/null) || return 0; n=$((n)); if [ "$n" -gt "$o" ]; then tail -c +$((o + 1)) "$l" | head -c $((n - o)); o=$n; fi; }
e=$(($(date +%s) + mlt_seconds)); w=$((e - mlt_seconds + 1))
k=0
while :; do
  [ -z "$mlt_scoped" ] || mlt_files_mine || mlt_foreign
  mlt_send
  if [ -e "$s" ] || [ -z "$g" ] || { [ "$k" = 0 ] && ! mlt_alive "$g"; }; then mlt_send; break; fi
  if [ "$k" = 0 ]; then
    t=$(date +%s); [ -z "$mlt_every" ] || [ "$t" -lt "$w" ] || { mlt_sample "$t"; w=$((t + mlt_every)); }
    [ "$t" -lt "$e" ] || exit "$mlt_st_segment_over"
  fi
  k=$(((k + 1) % 5))
  if [ "$q" -gt 0 ]; then q=$((q - 1)); mlt_nap 0.05; else mlt_nap 0.2; fi
done
