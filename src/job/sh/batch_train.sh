# The job's batch between the setup (startup_cmds) and the training command, which follows. Inputs:
# mlt_model, mlt_command (the training command, echoed), and the flags (1 or empty) mlt_find_log_dir
# (the settings name no log dir), mlt_ask_mltk (train_cmd is MLTK's), mlt_clean_own (--clean, of a
# log dir the settings do not name), mlt_gang (a node of a multi-node run).
set +e
mlt_job=${MLT_JOB_DIR:?}
# The log dir the settings leave open: the remote MLTK is asked, as MLTK's own `mltk ssh` does
# (without a GPU: its import is slow), else MLTK's default under the remote MLTK_CACHE_DIR.
if [ -n "$mlt_find_log_dir" ]; then
  MLT_LOG_DIR=
  [ -z "$mlt_ask_mltk" ] || MLT_LOG_DIR=$(python3 -c "import os,sys;os.environ['CUDA_VISIBLE_DEVICES']='-1';from mltk.core import load_mltk_model;m=load_mltk_model(sys.argv[1]);print('MLTK_LOG_DIR='+m.log_dir)" "$mlt_model" 2>/dev/null | sed -n 's/^MLTK_LOG_DIR=//p' | tail -n 1)
  [ -n "$MLT_LOG_DIR" ] || MLT_LOG_DIR="${MLTK_CACHE_DIR:-$HOME/.mltk}/models/$mlt_model"
  export MLT_LOG_DIR
fi
# The log dir is recorded for collection, only while the job dir is still this run's.
mlt_ours=
if [ "$(cat "$mlt_job/run_id" 2>/dev/null)" = "$MLT_RUN_ID" ]; then
  # checkpoints: a new run in the log dir of the run before it here, with nothing pushed, goes
  # on from what that run's ledger knew (docs/remote-protocol.md, "Checkpoints"): its kept lines
  # as the seed; a save it had not seen whole yet (its last look never came) whole when it ended
  # with 0, else never. Before log_dir: the guard looks only once that is written.
  if [ -f "$mlt_job/checkpoints" ] && [ ! -f "$mlt_job/ckpt.seed" ] && [ ! -f "$mlt_job/ckpt.ledger" ] &&
    [ -f "$mlt_job/previous/ckpt.ledger" ] && [ "$(cat "$mlt_job/previous/log_dir" 2>/dev/null)" = "$MLT_LOG_DIR" ]; then
    mlt_ck_end=2
    [ "$(cat "$mlt_job/previous/exit_status" 2>/dev/null)" != 0 ] || mlt_ck_end=1
    LC_ALL=C awk -F '\t' -v OFS='\t' -v end="$mlt_ck_end" 'NF == 7 && $7 == "kept" { if ($5 == 0) $5 = end; print }' \
      "$mlt_job/previous/ckpt.ledger" > "$mlt_job/ckpt.seed.tmp" && mv -f "$mlt_job/ckpt.seed.tmp" "$mlt_job/ckpt.seed"
  fi
  printf '%s\n' "$MLT_LOG_DIR" > "$mlt_job/log_dir.tmp" && mv -f "$mlt_job/log_dir.tmp" "$mlt_job/log_dir"
  mlt_ours=1
fi
# --clean of a log dir mlt did not name: only what is MLTK's per-model dir. Not for a restart
# (MLT_ATTEMPT 2 on): its checkpoints stay.
if [ -n "$mlt_clean_own" ] && [ "${MLT_ATTEMPT:-1}" = 1 ]; then
  case $MLT_LOG_DIR in */models/"$mlt_model") rm -rf -- "$MLT_LOG_DIR" ;; esac
fi
# A run that moved here (a failover, a gang's standby host: the lock names where it came from)
# finds this host's earlier files in the log dir, another run's: set aside once per run, whole,
# so that the training resumes from what was pushed, never from them. Never the remote dir, one
# above it, or a dir holding .mlt.
if [ -n "$mlt_ours" ] && grep -q '^from=' "$mlt_job/lock" 2>/dev/null && [ -d "$MLT_LOG_DIR" ] &&
  [ "$(cat "$mlt_job/log_dir_aside" 2>/dev/null)" != "$MLT_RUN_ID" ]; then
  mlt_d=$(cd -- "$MLT_LOG_DIR" && pwd -P) && mlt_here=$(pwd -P) || mlt_d=/
  case "$mlt_here/" in "$mlt_d"/*) mlt_d=/ ;; esac
  if [ "$mlt_d" != / ] && [ ! -e "$MLT_LOG_DIR/.mlt" ] && [ -n "$(ls -A -- "$MLT_LOG_DIR")" ]; then
    mlt_aside="$MLT_LOG_DIR.before-$MLT_RUN_ID"
    if mv -- "$MLT_LOG_DIR" "$mlt_aside"; then
      echo "mlt: this host's earlier files of the log dir are set aside in $mlt_aside"
    else
      echo "mlt: could not set aside this host's earlier files in $MLT_LOG_DIR"; exit 1
    fi
  fi
  printf '%s\n' "$MLT_RUN_ID" > "$mlt_job/log_dir_aside"
fi
mkdir -p -- "$MLT_LOG_DIR" || exit 1
# What --restore or a failover pushed: into the log dir before the training starts, as hard links
# where the file system allows (no second copy of the checkpoints), with their mtimes (the
# collection then finds them unchanged).
if [ -d "$mlt_job/restore" ]; then
  echo "mlt: restoring the pushed log dir into $MLT_LOG_DIR"
  if ! { { cp -Rlf "$mlt_job/restore/." "$MLT_LOG_DIR/" 2>/dev/null || cp -Rpf "$mlt_job/restore/." "$MLT_LOG_DIR/"; } && rm -rf "$mlt_job/restore"; }; then
    echo "mlt: could not restore the pushed log dir into $MLT_LOG_DIR"; exit 1
  fi
fi
# Every node set up before any trains: mlt creates `go` on all nodes once each has its `ready` (a
# node that fails instead stops the others while they wait).
if [ -n "$mlt_gang" ]; then
  : > "$mlt_job/ready"
  [ -e "$mlt_job/go" ] || echo 'mlt: set up; waiting for every node'
  while [ ! -e "$mlt_job/go" ]; do sleep 0.2; done
fi
# checkpoints: MLT_CHECKPOINT, the newest whole checkpoint by the guard's ledger, or by the seed
# that came with what mlt pushed (mlt_ckpt_pick; docs/usage.md, "Checkpoints"). A newer one that
# is not whole stays where it is, with a warning.
if [ -f "$mlt_job/checkpoints" ]; then
  mlt_ck=$(mlt_ckpt_pick "$mlt_job" "$MLT_LOG_DIR")
  while IFS= read -r mlt_l; do
    case $mlt_l in
      'torn '*) printf 'mlt: warning: checkpoint %s is newer but not whole (a save cut off?): it stays, and is not MLT_CHECKPOINT\n' "${mlt_l#torn }" ;;
      'pick '*) MLT_CHECKPOINT=$MLT_LOG_DIR/${mlt_l#pick }; export MLT_CHECKPOINT
        printf 'mlt: MLT_CHECKPOINT=%s (the newest whole checkpoint)\n' "$MLT_CHECKPOINT" ;;
    esac
  done <<MLTEOF
$mlt_ck
MLTEOF
fi
# The `training` marker: the setup is over (a node stopped at the barrier never trained).
[ -z "$mlt_ours" ] || : > "$mlt_job/training"
printf 'mlt: training: %s\n' "$mlt_command"
trap : TERM INT HUP
