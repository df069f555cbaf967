# The shell functions that say whether a job still runs and which processes are its: shared
# by the status query, the lock and the stop command, so that all judge a job the same way.
# A library of functions: sourced into a command's text, it runs nothing itself.
#
# mlt_group_pids PGID: the live processes of the group (ps needed).
# mlt_alive PGID: true when a process of the group is alive and not a zombie. Zombies count
#   as gone because containers often run a pid 1 that never reaps them (and `kill -0`
#   succeeds on a zombie). Without ps, falls back to `kill -s 0` (POSIX; dash has no
#   `kill -0 --`).
# mlt_run_pids RUN DIR: the processes whose environment holds MLT_RUN_ID=RUN and
#   MLT_JOB_DIR=$PWD/DIR (the wrapper exports both, and every process of the job inherits
#   them), found in /proc/*/environ: a training that left the process group (setsid,
#   setpgrp) is still found, and a job of another remote dir with the same run id is not.
#   Nothing where there is no /proc, or for the run id "" of an old lock. A zombie's environ
#   is empty.
# mlt_job_alive PGID RUN DIR: the group or a process of the run is alive.
# mlt_signal SIG PGID RUN DIR: sends SIG to the group and to every process of the run.
mlt_group_pids() {
  ps -eo pid=,pgid=,stat= 2>/dev/null | awk -v g="$1" '$2 == g && $3 !~ /^Z/ { print $1 }'
}
mlt_alive() {
  if command -v ps >/dev/null 2>&1; then
    [ -n "$(mlt_group_pids "$1")" ]
  else
    kill -s 0 -- "-$1" 2>/dev/null
  fi
}
mlt_run_pids() {
  [ -n "$1" ] && [ -r /proc/self/environ ] || return 0
  grep -lxzF -e "MLT_RUN_ID=$1" /proc/[0-9]*/environ 2>/dev/null |
    xargs -r grep -lxzF -e "MLT_JOB_DIR=$(pwd)/${2%/}" 2>/dev/null |
    sed -n 's|^/proc/\([0-9]*\)/environ$|\1|p'
}
mlt_job_alive() {
  { [ -n "$1" ] && mlt_alive "$1"; } || [ -n "$(mlt_run_pids "$2" "$3")" ]
}
mlt_signal() {
  [ -z "$2" ] || kill -s "$1" -- "-$2" 2>/dev/null
  for mlt_p in $(mlt_run_pids "$3" "$4"); do kill -s "$1" "$mlt_p" 2>/dev/null; done
  true
}
