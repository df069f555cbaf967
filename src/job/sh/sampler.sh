# mlt_sample TIME, the sampler of a follow (watch.every, before follow.sh): one line on stderr,
# "mlt-sample TIME [gpu=U,USED,TOTAL;...] load=L free=KIB", from the second after the segment's
# start and then every mlt_every seconds while the task runs (follow.sh keeps the time), in the
# follow's own loop (no command of its own): a job that ends within a second costs no sample. A
# library of functions: it runs nothing itself.
#
# When the run's guard samples the host (its samples file in the job dir, mlt_samples, exists), a
# follow takes no sample of its own: mlt_sample relays the guard's lines newer than the last one
# relayed (mlt_seen; from the segment's start less one period), among its last lines only (the
# file grows for as long as the job runs; at most a line or two is new at each call), and the
# host is sampled once.
mlt_sample() {
  if [ -n "$mlt_samples" ] && [ -f "$mlt_samples" ]; then
    [ -n "$mlt_seen" ] || mlt_seen=$(($1 - ${mlt_every:-0} - 1))
    mlt_seen=$(tail -n 10 "$mlt_samples" | awk -v t="$mlt_seen" '$1 == "mlt-sample" && $2 + 0 > t + 0 { print > "/dev/stderr"; t = $2 + 0 } END { print t }')
    return 0
  fi
  {
    printf 'mlt-sample %s' "$1"
    if command -v nvidia-smi >/dev/null 2>&1; then printf ' gpu=%s' "$(nvidia-smi --query-gpu=utilization.gpu,memory.used,memory.total --format=csv,noheader,nounits 2>/dev/null | tr -d ' ' | paste -sd ';' -)"; fi
    printf ' load=%s free=%s\n' "$(cut -d ' ' -f 1 /proc/loadavg 2>/dev/null)" "$(df -Pk . 2>/dev/null | awk 'NR == 2 { print $4 }')"
  } >&2
}
