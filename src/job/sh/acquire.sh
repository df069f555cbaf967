# Takes the job lock for a new run (acquire_run in lock.cpp), after run_functions.sh and alive.sh;
# tickets.sh follows. Inputs: mlt_owner, mlt_lock_more (the lock's lines after phase=), mlt_budget_s
# and mlt_limit (the run's deadline: below; empty: none), mlt_pending_shutdown (the shutdown script
# the guard runs unattended, written as shutdown.pending.sh; empty: none), mlt_rules (the
# watch.stop_when rules the guard decides, written as rules; empty: none), mlt_archive
# (the model archive, relative to the remote dir), mlt_cmd (the training command, for people); the
# wrapper on stdin. Prints "acquired", or "held" when another run holds the model.
#
# The lock first (O_EXCL through noclobber: of concurrent launches exactly one wins), then the
# previous run aside (one mv), then this run's files; run_id last, so that its presence says the
# rest is done. A retry finds the lock its own and redoes only what is missing, without emptying
# previous/ a second time: what previous/ holds already stays, and a file of that name still in the
# job dir is this run's own half-written one, removed. The lock is written whole under a name of its
# own, then linked into place (atomic, fails when one exists): a full disk leaves no empty lock
# behind. A job of the previous run that still lives (its group, or a process of its run that left
# the group) keeps the model, lock or no lock.
mkdir -p "$j" || exit 1
if mlt_mine; then :
elif mlt_job_alive "$(cat "$j/pid" 2>/dev/null)" "$(cat "$j/run_id" 2>/dev/null)" "$j"; then echo held; exit 0
else
  t="$j/lock.new.$$"
  # started= by the remote clock: `status` subtracts it from the remote's `date`. With a budget
  # (mlt_budget_s: the seconds left of it), the run's deadline by the same clock, which the host's
  # guard enforces, and the limit that sets it (mlt_limit).
  mlt_t=$(date +%s)
  if ! ( { printf 'owner=%s\nstarted=%s\nrun=%s\nphase=uploading\n%s' "$mlt_owner" "$mlt_t" "$r" "$mlt_lock_more" &&
    { [ -z "$mlt_budget_s" ] || printf 'deadline=%s\nlimit=%s\n' "$((mlt_t + mlt_budget_s))" "$mlt_limit"; }; } > "$t") 2>/dev/null; then rm -f "$t"; mlt_nospace; echo "cannot write $t" >&2; exit 1; fi
  # A run that never knew its log dir (it failed before its batch) leaves the ledger of the run
  # before it, and that run's log dir, in previous/ for the next run (checkpoints.sh).
  mlt_keep_ledger() {
    [ ! -e "$j/ckpt.ledger" ] && [ ! -e "$j/log_dir" ] && [ -f "$j/previous/ckpt.ledger" ] && [ -f "$j/previous/log_dir" ] || return 0
    mv -f "$j/previous/ckpt.ledger" "$j/ckpt.ledger" && mv -f "$j/previous/log_dir" "$j/log_dir"
  }
  if ln "$t" "$j/lock" 2>/dev/null; then rm -f "$t"; mlt_keep_ledger; rm -rf "$j/previous" "$j"/*.tmp "$j/released" "$j/retaken" || exit 1
  else rm -f "$t"; mlt_mine || { echo held; exit 0; }; fi
fi
if ! mlt_files_mine; then
  mkdir -p "$j/previous" || exit 1
  set --
  # The files of the previous run (docs/remote-protocol.md, "Layout"), and the markers of its later
  # attempts.
  for f in "$j/run_id" "$j/run.sh" "$j/cmd" "$j/started" "$j/pid" "$j/console.log" \
    "$j/exit_status" "$j/sha256" "$j/stopped" "$j/guard.stop" "$j/guard.pid" "$j/samples" "$j/rules" "$j/rules.state" "$j/checkpoints" "$j/ckpt.ledger" "$j/ckpt.seed" "$j/ckpt.pulling" "$j/ckpt.metric" "$j/ckpt.final" "$j/ckpt.lock" "$j"/notify.* "$j/shutdown.pending.sh" "$j/shutdown.unattended" "$j/disk_full" "$j/download_files" \
    "$j/shutdown.sh" "$j/shutdown.started" "$j/shutdown.pid" "$j/shutdown.log" \
    "$j/shutdown.status" "$j/batch.sh" "$j/shutdown.batch.sh" "$j/log_dir" "$j/training" \
    "$j/restore" "$j/start.claimed" "$j"/started.[0-9]* "$j"/gang.[0-9]*; do
    if [ ! -e "$f" ]; then :
    elif [ -e "$j/previous/${f##*/}" ]; then rm -rf "$f" || exit 1
    else set -- "$@" "$f"; fi
  done
  [ $# = 0 ] || mv -f -- "$@" "$j/previous/" || exit 1
  if [ -e "$mlt_archive" ]; then mv -f -- "$mlt_archive" "$j/previous/" || exit 1; fi
  if ! { : > "$j/console.log" && cat > "$j/run.sh.tmp" && mv -f "$j/run.sh.tmp" "$j/run.sh" && printf '%s\n' "$mlt_cmd" > "$j/cmd" &&
    { [ -z "$mlt_pending_shutdown" ] || { printf '%s' "$mlt_pending_shutdown" > "$j/shutdown.pending.sh.tmp" && mv -f "$j/shutdown.pending.sh.tmp" "$j/shutdown.pending.sh"; }; } &&
    { [ -z "$mlt_rules" ] || { printf '%s' "$mlt_rules" > "$j/rules.tmp" && mv -f "$j/rules.tmp" "$j/rules"; }; } &&
    { [ -z "$mlt_checkpoints" ] || { printf '%s' "$mlt_checkpoints" > "$j/checkpoints.tmp" && mv -f "$j/checkpoints.tmp" "$j/checkpoints"; }; } &&
    printf '%s\n' "$r" > "$j/run_id.tmp" && mv -f "$j/run_id.tmp" "$j/run_id"; }; then mlt_nospace; exit 1; fi
fi
echo acquired
