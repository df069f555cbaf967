# The batch of a run's shutdown_cmds (shutdown.batch.sh, make_shutdown_script in scripts.cpp) after
# the settings' environment: one batch in the login shell, as MLTK, so that `cd` and variables carry
# over from one command to the next; without `set -e`, a failing command is reported and the others
# still run (they may be what stops the billing). With mlt_venv (1 or empty), the remote dir's venv
# when there is one (`command .`: see batch_venv.sh). Each command is followed by `mlt_done
# COMMAND`, and the batch ends with mlt_end: its status is the last failure's (0: none).
if [ -n "$mlt_venv" ] && [ -f "$MLT_REMOTE_DIR/.venv/bin/activate" ]; then command . "$MLT_REMOTE_DIR/.venv/bin/activate"; fi
mlt_status=0
mlt_done() {
  mlt_s=$?
  if [ "$mlt_s" -ne 0 ]; then mlt_status=$mlt_s; printf 'mlt: shutdown command failed: %s (exit status %s)\n' "$1" "$mlt_s"; fi
}
mlt_end() { exit "$mlt_status"; }
