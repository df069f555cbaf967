# The jobs of a remote dir (query_jobs, JobDir::query_jobs in status.cpp), one line per job:
# job<TAB>model<TAB>pgid<TAB>alive<TAB>started<TAB>exit_status<TAB>now<TAB>locked<TAB>run id
# <TAB>phase<TAB>clean<TAB>attempt<TAB>moved<TAB>logged<TAB>deadline<TAB>limit<TAB>silent<TAB>guard
# <TAB>guard_stop<TAB>idle<TAB>sample<TAB>rules<TAB>notify. The run id comes from the lock while there is one, else from the run_id file;
# started from the lock, else from the run's start marker; moved: where the lock says its run went
# (mark_run_moved); logged: the console log's last change (epoch seconds); deadline, limit, silent:
# what the lock gives the guard; guard: while the job runs with a guard's duty, "running" or "gone"
# (its pid file names no live process); guard_stop: why the guard stopped the job; idle: the lock's
# idle= (seconds); sample: the guard's last sample of the host (samples' last line); rules: how many
# watch.stop_when rules the job dir's rules file holds; notify: "SENT FAILED", the tries the guard's
# notifications took (notify.log) that were sent and that failed, empty without a log. The model
# names
# were validated; what the files hold is the host's word, checked by the reader. After alive.sh and
# guard_functions.sh. Inputs: mlt_rd (a missing remote dir: no jobs), mlt_model (empty: every
# model's job).
cd "$mlt_rd" 2>/dev/null || exit 0
if [ -n "$mlt_model" ]; then set -- ".mlt/$mlt_model/"; else set -- .mlt/*/; fi
for d; do
  [ -d "$d" ] || continue
  m=${d%/}; m=${m##*/}
  pgid=$(cat "$d/pid" 2>/dev/null)
  alive=0; locked=0; phase=; clean=; attempt=; moved=; dl=; lim=; quiet=; guard=; idle=
  if [ -f "$d/lock" ]; then
    locked=1
    started=$(sed -n 's/^started=//p' "$d/lock" 2>/dev/null)
    run=$(sed -n 's/^run=//p' "$d/lock" 2>/dev/null)
    phase=$(sed -n 's/^phase=//p' "$d/lock" 2>/dev/null)
    clean=$(sed -n 's/^clean=//p' "$d/lock" 2>/dev/null)
    attempt=$(sed -n 's/^attempt=//p' "$d/lock" 2>/dev/null)
    moved=$(sed -n 's/^moved=//p' "$d/lock" 2>/dev/null | head -n 1 | cut -c 1-200)
    dl=$(sed -n 's/^deadline=//p' "$d/lock" 2>/dev/null | head -n 1)
    lim=$(sed -n 's/^limit=//p' "$d/lock" 2>/dev/null | head -n 1 | cut -c 1-100)
    quiet=$(sed -n 's/^silent=//p' "$d/lock" 2>/dev/null | head -n 1)
    idle=$(sed -n 's/^idle=//p' "$d/lock" 2>/dev/null | head -n 1)
  else
    started=$(date -r "$d/started" +%s 2>/dev/null)
    run=$(cat "$d/run_id" 2>/dev/null)
  fi
  if mlt_job_alive "$pgid" "$(cat "$d/run_id" 2>/dev/null)" "$d"; then alive=1; fi
  if [ "$alive" = 1 ] && mlt_guard_duty "$d/lock"; then
    gp=$(cat "$d/guard.pid" 2>/dev/null)
    if [ -n "$gp" ] && kill -s 0 "$gp" 2>/dev/null; then guard=running; else guard=gone; fi
  fi
  gstop=$(head -n 1 "$d/guard.stop" 2>/dev/null | tr '\t' ' ' | cut -c 1-200)
  # After the liveness check: a job that ended just before it wrote its status first, so it is never
  # taken for one lost without a status.
  ex=$(cat "$d/exit_status" 2>/dev/null)
  logged=$(date -r "$d/console.log" +%s 2>/dev/null)
  sample=$(tail -n 1 "$d/samples" 2>/dev/null | tr -d '\t' | cut -c 1-300)
  rules=$(grep -c '^[rp]	' "$d/rules" 2>/dev/null)
  notify=
  [ ! -f "$d/notify.log" ] || notify="$(grep -c ' sent$' "$d/notify.log") $(grep -c ' failed: ' "$d/notify.log")"
  printf 'job\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$m" "$pgid" "$alive" "$started" "$ex" "$(date +%s)" "$locked" "$run" "$phase" "$clean" "$attempt" "$moved" "$logged" "$dl" "$lim" "$quiet" "$guard" "$gstop" "$idle" "$sample" "$rules" "$notify"
done
