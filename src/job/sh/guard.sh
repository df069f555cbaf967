# The guard of a run's job (docs/remote-protocol.md, "The guard"), after alive.sh and
# stop_functions.sh: started by the wrapper beside the job, in the remote dir, in a session of its
# own and without MLT_RUN_ID and MLT_JOB_DIR (`stop` and the sweeper end every process that carries
# them, and it must outlive the job long enough to record why it stopped it). $1: the job's process
# group (the wrapper's pid), $2: the run id, $3: the job dir.
#
# Whether or not an mlt is attached, it enforces:
# - the run's deadline (deadline= in the lock, by this host's clock; limit= names the limit that
#   set it): 5 s after it (an attached mlt stops the job at the deadline itself, and goes first);
# - silence (silent= in the lock, seconds): when the console log got no new byte that long, it
#   says so in the console log, once per silence; with silent_stop=1 it stops the job instead.
# To stop the job it records why in guard.stop ("limit NOTE", "silent SECONDS"), says so in the
# console log, and stops the job as `stop` does (10 s of grace). It ends as soon as the job has
# ended (exit_status; the wrapper's mlt_finish also ends it), the wrapper is gone (killed with the
# job: the job is lost, and nothing is recorded for it), or the job dir became another run's. It
# looks every second: a `date`, a `wc`, a `sleep` and a few builtins.
g=$1 o=$2 j=$3
[ -n "$g" ] || exit 0
mlt_dl=$(sed -n 's/^deadline=//p' "$j/lock" 2>/dev/null)
mlt_limit=$(sed -n 's/^limit=//p' "$j/lock" 2>/dev/null)
mlt_quiet=$(sed -n 's/^silent=//p' "$j/lock" 2>/dev/null)
mlt_quiet_stop=$(sed -n 's/^silent_stop=//p' "$j/lock" 2>/dev/null)
case $mlt_dl in '' | *[!0-9]*) mlt_dl= ;; *) mlt_dl=$((mlt_dl + 5)) ;; esac
case $mlt_quiet in '' | *[!0-9]* | 0) mlt_quiet= ;; esac
[ -n "$mlt_dl$mlt_quiet" ] || exit 0
# Its pid, for `status` (and a --resume that starts it again when it is gone): removed as it ends
# by itself; left by a signal, which `status` then tells from a live one.
echo $$ > "$j/guard.pid.tmp" && mv -f "$j/guard.pid.tmp" "$j/guard.pid"
trap 'rm -f "$j/guard.pid"' EXIT
trap 'exit 0' TERM HUP INT
# mlt_guard_stop WHY WORDS: records WHY, says WORDS, stops the job; a wrapper that lingers as a
# zombie leaves nothing to stop.
mlt_guard_stop() {
  mlt_job_alive "$g" "$o" "$j" || exit 0
  printf '%s\n' "$1" > "$j/guard.stop.tmp" && mv -f "$j/guard.stop.tmp" "$j/guard.stop"
  echo "mlt: $2: the host's guard stops the job"
  mlt_stop_job 10
  exit 0
}
mlt_size=-1 mlt_since=0
while :; do
  [ ! -e "$j/exit_status" ] || exit 0
  kill -s 0 "$g" 2>/dev/null || exit 0
  mlt_r=; { IFS= read -r mlt_r < "$j/run_id"; } 2>/dev/null
  [ "$mlt_r" = "$o" ] || exit 0
  mlt_now=$(date +%s)
  if [ -n "$mlt_dl" ] && [ "$mlt_now" -ge "$mlt_dl" ]; then mlt_guard_stop "limit $mlt_limit" "$mlt_limit reached"; fi
  if [ -n "$mlt_quiet" ]; then
    mlt_n=$(wc -c < "$j/console.log" 2>/dev/null) || mlt_n=0
    mlt_n=$((mlt_n))
    if [ "$mlt_n" != "$mlt_size" ]; then mlt_size=$mlt_n mlt_since=$mlt_now
    elif [ $((mlt_now - mlt_since)) -ge "$mlt_quiet" ]; then
      mlt_words="no new console output for $mlt_quiet s (watch.silent_minutes)"
      [ -z "$mlt_quiet_stop" ] || mlt_guard_stop "silent $mlt_quiet" "$mlt_words"
      echo "mlt: $mlt_words: the job may hang (watch.stop_silent would stop it)"
      mlt_since=$mlt_now
    fi
  fi
  sleep 1
done
