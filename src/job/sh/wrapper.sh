# The wrapper of a run's job, run.sh (make_wrapper_script in scripts.cpp; docs/remote-protocol.md,
# "The wrapper"), after wrapper_common.sh and, with mlt_record, record_downloads.sh: mlt's
# bookkeeping around ONE batch of the user's commands. Inputs: j, mlt_run, mlt_model, mlt_spec,
# mlt_archive, mlt_log_dir (the one the settings name; empty: the batch finds it), mlt_batch (the
# batch's text), mlt_sweeper (sweeper.sh's, run by sh -c), mlt_guard (guard.sh's, run by sh -c;
# after guard_functions.sh),
# and the flags (1 or empty) mlt_clean,
# mlt_verbose, mlt_node_ifname, mlt_venv, mlt_record.
#
# While this shell runs it holds `running` locked (flock, where the host has it), before the start
# sees its pid: a follow waits on that lock and wakes as the job ends. A redirection that fails on
# `exec` would end the shell: a plain command tries it first. A follow's look at the lock holds it
# for an instant: up to 1 s is waited for it.
if command -v flock >/dev/null 2>&1 && true 2>/dev/null 9>>"$mlt_job/running"; then exec 9>>"$mlt_job/running"; flock -w 1 9 || exec 9>&-; fi
# setsid made this shell a process-group leader: its pid is the group id to signal.
echo $$ > "$mlt_job/pid.tmp" && mv -f "$mlt_job/pid.tmp" "$mlt_job/pid"
# The host's guard (guard_functions.sh), when the lock gives it a duty, its words in the console
# log. mlt_finish ends it with its group (its sleep too), unless it has an unattended shutdown to
# run after the job: this shell's own child, whose pid is not reused while it is not waited for.
# One that a --resume started again ends by itself within a second of the job.
mlt_guard_pid='' mlt_guard_stays=''
if mlt_guard_duty "$mlt_job/lock"; then
  mlt_start_guard "$mlt_guard" "$$" "$mlt_run" "$j"
  mlt_guard_pid=$!
  ! grep -q -e '^unattended=' -e '^notify=' -e '^ckpt=' "$mlt_job/lock" 2>/dev/null || mlt_guard_stays=1
fi
# Room for the last records, should the training fill the disk: freed as the job ends.
head -c 65536 /dev/zero > "$mlt_job/reserve" 2>/dev/null || rm -f "$mlt_job/reserve"
# mlt_sweep: the processes the training left behind end (sweeper.sh), in a process group of their
# own, without MLT_RUN_ID (so that the sweeper is none of them).
mlt_sweep() {
  trap '' TERM INT HUP
  (unset MLT_RUN_ID; exec setsid sh -c "$mlt_sweeper" sh "$$" "$mlt_run" "$j" 9>&-) &
  wait $!
}
# mlt_finish STATUS: the end of the job; ends the guard, records STATUS and exits with it. A job
# whose dir a newer run took over (a --force while it could not be killed) records nothing: its
# status and archive hash would be taken for the newer run's. A full disk is recorded (in the reserve's room) for mlt
# to name; the disk as the training left it, before the sweep's time lets anything (mlt's own
# records) free room on it. The archive counts only when this run wrote it: a file (not a symlink)
# changed after the start marker. Hashed from stdin: with a backslash or a newline in the path,
# sha256sum would escape its line, and the hash would start with a backslash.
mlt_finish() {
  mlt_status=$1
  if [ -n "$mlt_guard_pid" ] && [ -z "$mlt_guard_stays" ]; then kill -s TERM -- "-$mlt_guard_pid" 2>/dev/null; fi
  if [ "$(cat "$mlt_job/run_id" 2>/dev/null)" != "$mlt_run" ]; then mlt_sweep; exit "$mlt_status"; fi
  mlt_full=; (printf x > "$mlt_job/space.tmp") 2>/dev/null || mlt_full=1
  mlt_sweep
  rm -f "$mlt_job/space.tmp" "$mlt_job/reserve"
  [ -z "$mlt_full" ] || : > "$mlt_job/disk_full"
  mlt_a="$mlt_dir/$MLT_ARCHIVE"
  if [ -L "$mlt_a" ]; then
    echo "mlt: $MLT_ARCHIVE is a symlink; it is not collected"
  elif [ -f "$mlt_a" ] && [ -n "$(find "$mlt_a" -prune -newer "$mlt_job/started" 2>/dev/null)" ]; then
    sha256sum < "$mlt_a" 2>/dev/null | cut -d' ' -f1 > "$mlt_job/sha256"
  fi
  [ -z "$mlt_record" ] || mlt_record_downloads
  echo "mlt: job finished with exit status $mlt_status"
  printf '%s\n' "$mlt_status" > "$mlt_job/exit_status.tmp" && mv -f "$mlt_job/exit_status.tmp" "$mlt_job/exit_status"
  exit "$mlt_status"
}
# A TERM to the group reaches the batch and the training too; this shell waits for them, then
# records their status instead of dying without a word.
trap : TERM INT HUP
export MLT_MODEL="$mlt_model" MLT_RUN_ID="$mlt_run" MLT_SPEC="$mlt_spec" MLT_ARCHIVE="$mlt_archive"
# A log dir the settings name: relative to the remote dir, as every settings path.
if [ -n "$mlt_log_dir" ]; then
  case $mlt_log_dir in /*) MLT_LOG_DIR=$mlt_log_dir ;; *) MLT_LOG_DIR="$mlt_dir/$mlt_log_dir" ;; esac
  export MLT_LOG_DIR
fi
if [ -n "$mlt_clean" ] && [ "${MLT_ATTEMPT:-1}" = 1 ]; then export MLT_CLEAN=1; fi
[ -z "$mlt_verbose" ] || export MLT_VERBOSE=1
# A node of a multi-node run: the interface this node reaches rank 0 on, for NCCL and gloo (`lo` on
# loopback). The user's environment (exported later, in the batch) wins.
if [ -n "$mlt_node_ifname" ]; then
  mlt_if=$(ip route get "$MASTER_ADDR" 2>/dev/null | sed -n 's/.* dev \([^ ]*\).*/\1/p' | head -n 1)
  if [ -n "$mlt_if" ]; then export NCCL_SOCKET_IFNAME="${NCCL_SOCKET_IFNAME:-$mlt_if}" GLOO_SOCKET_IFNAME="${GLOO_SOCKET_IFNAME:-$mlt_if}"; fi
fi
printf '%s' "$mlt_batch" > "$mlt_job/batch.sh" || mlt_finish 1
mlt_login_batch "$mlt_job/batch.sh"
mlt_s=$?
# No `training` marker: the batch ended before the training started.
if [ "$mlt_s" -ne 0 ] && [ ! -e "$mlt_job/training" ]; then echo "mlt: the job's setup (environment, venv or startup_cmds) failed with exit status $mlt_s; the training did not start"; fi
if [ -n "$mlt_venv" ] && [ "$mlt_s" -eq 127 ] && [ -e "$mlt_job/training" ]; then echo "mlt: exit status 127: a command was not found in the venv $mlt_dir/.venv; if it is train_cmd's, make venv_packages install it, or remove the venv (rm -rf $mlt_dir/.venv) so that the next run makes it anew"; fi
mlt_finish "$mlt_s"
