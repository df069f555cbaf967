# How the host's guard is started, for the wrapper (wrapper.sh), its start again (guard_start.sh)
# and `status` (status.sh). A library of functions: it runs nothing itself.
#
# mlt_guard_duty LOCK: true when the lock gives the run's guard something to do (deadline=,
#   silent=, unattended=, idle=, rules=, notify=).
# mlt_start_guard TEXT GROUP RUN JOBDIR: starts the guard (TEXT: guard.sh's, with its libraries)
#   in the background, from the remote dir: in a session of its own (its pid is its
#   group's, in $!), without the run's MLT_RUN_ID and MLT_JOB_DIR (stop and the sweeper end every
#   process that carries them), stdin from /dev/null, the wrapper's lock (fd 9) not passed on.
mlt_guard_duty() { grep -q -e '^deadline=' -e '^silent=' -e '^unattended=' -e '^idle=' -e '^rules=' -e '^notify=' -e '^ckpt=' "$1" 2>/dev/null; }
mlt_start_guard() {
  (unset MLT_RUN_ID MLT_JOB_DIR; exec setsid sh -c "$1" sh "$2" "$3" "$4" < /dev/null 9>&-) &
}
