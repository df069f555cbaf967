# The guard of a run's job (docs/remote-protocol.md, "The guard"), after alive.sh and
# stop_functions.sh: started by the wrapper beside the job, in the remote dir, in a session of its
# own and without MLT_RUN_ID and MLT_JOB_DIR (`stop` and the sweeper end every process that carries
# them, and it must outlive the job long enough to record why it stopped it). $1: the job's process
# group (the wrapper's pid), $2: the run id, $3: the job dir.
#
# It enforces the run's deadline (deadline= in the lock, by this host's clock; limit= names the
# limit that set it) whether or not an mlt is attached: 5 s after the deadline (an attached mlt
# stops the job at the deadline itself, and goes first) it records why in guard.stop ("limit
# NOTE"), says so in the console log, and stops the job as `stop` does (10 s of grace). It ends
# as soon as the job has ended (exit_status; the wrapper's mlt_finish also ends it), the wrapper
# is gone (killed with the job: the job is lost, and nothing is recorded for it), or the job dir
# became another run's. It looks every second: a `date`, a `sleep` and a few builtins.
g=$1 o=$2 j=$3
[ -n "$g" ] || exit 0
mlt_dl=$(sed -n 's/^deadline=//p' "$j/lock" 2>/dev/null)
mlt_limit=$(sed -n 's/^limit=//p' "$j/lock" 2>/dev/null)
case $mlt_dl in '' | *[!0-9]*) exit 0 ;; esac
mlt_dl=$((mlt_dl + 5))
while :; do
  [ ! -e "$j/exit_status" ] || exit 0
  kill -s 0 "$g" 2>/dev/null || exit 0
  mlt_r=; { IFS= read -r mlt_r < "$j/run_id"; } 2>/dev/null
  [ "$mlt_r" = "$o" ] || exit 0
  if [ "$(date +%s)" -ge "$mlt_dl" ]; then
    # A wrapper that lingers as a zombie: nothing is left to stop.
    mlt_job_alive "$g" "$o" "$j" || exit 0
    printf 'limit %s\n' "$mlt_limit" > "$j/guard.stop.tmp" && mv -f "$j/guard.stop.tmp" "$j/guard.stop"
    echo "mlt: $mlt_limit reached: the host's guard stops the job"
    mlt_stop_job 10
    exit 0
  fi
  sleep 1
done
