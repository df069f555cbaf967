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
#   says so in the console log, once per silence; with silent_stop=1 it stops the job instead;
# - an idle GPU (idle= in the lock, seconds; every= the samples' period): it samples the host
#   (sampler.sh) every that many seconds into the job dir's samples file, which a follow relays; when
#   every GPU of each sample was under idle_below= percent that long, it says so in the console
#   log, once; with idle_stop=1 it stops the job instead;
# - notifications (notify= in the lock, notify.targets and notify.info, handed by notify_put.sh):
#   the events `started` (as it starts while the job runs), `finished`, `failed` or `stopped` (as
#   the job has ended) and `unattended_shutdown`, each sent in the background by notify_send.sh
#   (mlt_notify_send), each id once (notify.sent); it outlives the job's end to send them;
# - the unattended shutdown (unattended= in the lock, seconds, and shutdown.pending.sh): when the
#   job has ended and no mlt collected it (phase collected, or the lock given back) nor started
#   shutdown_cmds within that time, it runs shutdown.pending.sh as the run's shutdown script,
#   once (the shutdown.started marker, as start_shutdown), and leaves shutdown.unattended.
# - watch.stop_when (rules= in the lock, the job dir's rules file): guard_rules.sh decides each new
#   complete line of the console log; the first rule that fires stops the job;
# To stop the job it records why in guard.stop ("limit NOTE", "silent SECONDS", "idle SECONDS",
# "rule INDEX<TAB>LINE"), says so in the
# console log, and stops the job as `stop` does (10 s of grace). It ends as soon as the job has
# ended with nothing left to do (exit_status; the wrapper's mlt_finish also ends it then), the
# wrapper is gone without a status (killed with the job: lost, nothing is recorded), or the job
# dir became another run's. It looks every second: a `date`, a `wc`, a `sleep` and builtins.
g=$1 o=$2 j=$3
[ -n "$g" ] || exit 0
# mlt_read_deadline: the lock's deadline (plus the 5 s) and limit; a --resume with a limit replaces
# them (guard_start.sh), and the guard reads them again every 5 s until it stopped the job.
mlt_read_deadline() {
  mlt_dl=$(sed -n 's/^deadline=//p' "$j/lock" 2>/dev/null)
  mlt_limit=$(sed -n 's/^limit=//p' "$j/lock" 2>/dev/null)
  case $mlt_dl in '' | *[!0-9]*) mlt_dl='' ;; *) mlt_dl=$((mlt_dl + 5)) ;; esac
}
mlt_read_deadline
mlt_quiet=$(sed -n 's/^silent=//p' "$j/lock" 2>/dev/null)
mlt_quiet_stop=$(sed -n 's/^silent_stop=//p' "$j/lock" 2>/dev/null)
mlt_after=$(sed -n 's/^unattended=//p' "$j/lock" 2>/dev/null)
mlt_idle=$(sed -n 's/^idle=//p' "$j/lock" 2>/dev/null)
mlt_idle_stop=$(sed -n 's/^idle_stop=//p' "$j/lock" 2>/dev/null)
mlt_below=$(sed -n 's/^idle_below=//p' "$j/lock" 2>/dev/null)
mlt_every=$(sed -n 's/^every=//p' "$j/lock" 2>/dev/null)
mlt_rules=$(sed -n 's/^rules=//p' "$j/lock" 2>/dev/null)
mlt_notify=$(sed -n 's/^notify=//p' "$j/lock" 2>/dev/null)
mlt_began=$(sed -n 's/^started=//p' "$j/lock" 2>/dev/null)
mlt_ckpt=$(sed -n 's/^ckpt=//p' "$j/lock" 2>/dev/null)
case $mlt_quiet in '' | *[!0-9]* | 0) mlt_quiet= ;; esac
case $mlt_after in '' | *[!0-9]* | 0) mlt_after= ;; esac
case $mlt_idle$mlt_every in *[!0-9]*) mlt_idle= ;; esac
case $mlt_below in '' | *[!0-9]*) mlt_below=10 ;; esac
[ -n "$mlt_every" ] && [ "$mlt_every" != 0 ] && [ "$mlt_idle" != 0 ] || mlt_idle=
[ -f "$j/shutdown.pending.sh" ] || mlt_after=
[ -f "$j/rules" ] || mlt_rules=''
[ -f "$j/checkpoints" ] || mlt_ckpt=''
[ -z "$mlt_ckpt" ] || rm -f "$j/ckpt.final"  # this attempt's last look is still to come
[ -n "$mlt_dl$mlt_quiet$mlt_after$mlt_idle$mlt_rules$mlt_notify$mlt_ckpt" ] || exit 0
# Its pid, for `status` (and a --resume that starts it again when it is gone): removed as it ends
# by itself; left by a signal, which `status` then tells from a live one.
echo $$ > "$j/guard.pid.tmp" && mv -f "$j/guard.pid.tmp" "$j/guard.pid"
# Removed only while it is still this guard's: the guard of a failed attempt that a watch.on_failure
# rule restarted ends after the new attempt's guard wrote its own.
trap '[ "$(cat "$j/guard.pid" 2>/dev/null)" != "$$" ] || rm -f "$j/guard.pid"; [ -z "$mlt_ckpt" ] || mlt_ckpt_unlock "$j"' EXIT
trap 'exit 0' TERM HUP INT
# Its words go to the console log on stdout; the shell's own ("Terminated", as the wrapper ends the
# guard's group with its sleep) nowhere.
exec 2>/dev/null
# mlt_guard_stop WHY WORDS: records WHY, says WORDS, stops the job; a wrapper that lingers as a
# zombie leaves nothing to stop.
mlt_guard_stop() {
  mlt_job_alive "$g" "$o" "$j" || exit 0
  printf '%s\n' "$1" > "$j/guard.stop.tmp" && mv -f "$j/guard.stop.tmp" "$j/guard.stop"
  echo "mlt: $2: the host's guard stops the job"
  mlt_stop_job 10
  [ -n "$mlt_after$mlt_notify$mlt_ckpt" ] || exit 0
}
# What mlt_launch runs for the unattended shutdown: the script goes in place only by the one that
# created the marker (an mlt's start_shutdown never races it into a second run).
mlt_fresh() { cp "$j/shutdown.pending.sh" "$j/shutdown.sh" && : > "$j/shutdown.unattended" || exit 1; }
mlt_again() { :; }
# mlt_unattended: after the job's end; ends the guard once an mlt took the run over, or once it
# started shutdown_cmds itself.
mlt_unattended() {
  [ -n "$mlt_after" ] || exit 0
  [ ! -e "$j/shutdown.started" ] && [ -f "$j/lock" ] || exit 0
  [ "$(sed -n 's/^phase=//p' "$j/lock")" != collected ] || exit 0
  [ -n "$mlt_ended" ] || mlt_ended=$mlt_now
  [ $((mlt_now - mlt_ended)) -ge "$mlt_after" ] || return 0
  echo "mlt: no mlt collected the run within $mlt_after s (unattended_shutdown_minutes): the host's guard runs shutdown_cmds"
  mlt_launch "$j/shutdown.started" "$j/shutdown.sh" "$j/shutdown.log" "$j/shutdown.pid" "$j/shutdown.status"
  [ ! -e "$j/shutdown.unattended" ] || mlt_notify_event unattended_shutdown "no mlt collected the run within $mlt_after s (unattended_shutdown_minutes)" "$mlt_x"
  exit 0
}
# mlt_busy GPUS: true when a GPU of the sample's gpu= part (U,USED,TOTAL;...) is at idle_below
# percent or more, or none is known (no nvidia-smi: never idle).
mlt_busy() {
  [ -n "$1" ] || return 0
  mlt_rest=$1
  while [ -n "$mlt_rest" ]; do
    mlt_u=${mlt_rest%%;*} mlt_u=${mlt_u%%,*}
    case $mlt_rest in *\;*) mlt_rest=${mlt_rest#*;} ;; *) mlt_rest='' ;; esac
    case $mlt_u in '' | *[!0-9]*) return 0 ;; esac
    [ "$mlt_u" -lt "$mlt_below" ] || return 0
  done
  return 1
}
# mlt_idle_look: a sample into the samples file (one line, written whole), and the idle rule on it.
mlt_idle_look() {
  [ "$mlt_now" -ge "$mlt_next" ] || return 0
  mlt_next=$((mlt_now + mlt_every))
  mlt_line=$(mlt_sample "$mlt_now" 2>&1)
  printf '%s\n' "$mlt_line" >> "$j/samples"
  mlt_g=${mlt_line#* gpu=}
  [ "$mlt_g" != "$mlt_line" ] && mlt_g=${mlt_g%% *} || mlt_g=
  if mlt_busy "$mlt_g"; then mlt_idle_since=; return 0; fi
  [ -n "$mlt_idle_since" ] || mlt_idle_since=$mlt_now
  [ -z "$mlt_idle_told" ] && [ $((mlt_now - mlt_idle_since)) -ge "$mlt_idle" ] || return 0
  mlt_words="every GPU was under $mlt_below % for $((mlt_now - mlt_idle_since)) s (watch.idle_gpu_minutes)"
  if [ -n "$mlt_idle_stop" ]; then mlt_guard_stop "idle $((mlt_now - mlt_idle_since))" "$mlt_words"
  else echo "mlt: $mlt_words: a wrong instance type or a stuck data loader? (watch.stop_idle would stop the job)"; fi
  mlt_idle_told=1
}
# mlt_notify_event EVENT REASON [STATUS]: the event's dir (notify.EVENT: fields, last_lines) and
# its send in the background (notify_send.sh's warnings into the console log, its tries into
# notify.log).
mlt_notify_event() {
  [ -n "$mlt_notify" ] && [ -f "$j/notify.targets" ] || return 0
  mlt_ev="$j/notify.$1"
  mkdir -p "$mlt_ev" || return 0
  mlt_t=$(date +%s)
  { printf 'event=%s\nmodel=%s\nrun_id=%s\nattempt=%s\nreason=%s\nexit_status=%s\n' "$1" "${j##*/}" "$o" "${mlt_attempt:-1}" "$2" "$3"
    awk -v now="$mlt_t" -v s="$mlt_began" -F = '$1 == "host" { print } $1 == "elapsed" { e = $2 } $1 == "cost" { c = $2 } $1 == "price" { p = $2 }
      END { printf "duration_s=%d\n", e + now - s; if (p != "") printf "cost=%.4f\n", c + (now - s) * p / 3600 }' "$j/notify.info"
  } > "$mlt_ev/fields" 2>/dev/null
  tail -c 65536 "$j/console.log" 2>/dev/null | tail -n 10 > "$mlt_ev/last_lines"
  # In order: each send waits for the one before it (a slow target never holds the guard up).
  mlt_before=$mlt_sending
  { while [ -n "$mlt_before" ] && kill -s 0 "$mlt_before" 2>/dev/null; do sleep 1; done
    sh -c "$mlt_notify_send" notify_send send "$j/notify.targets" "$mlt_ev" "$j/notify.log" "$j/notify.sent"; } < /dev/null &
  mlt_sending=$!
}
# mlt_notify_end: the job's end as an event, once: stopped by the guard (its reason) or by an mlt,
# else finished (status 0) or failed.
mlt_notify_end() {
  mlt_end_told=1
  mlt_x=; { IFS= read -r mlt_x < "$j/exit_status"; } 2>/dev/null
  mlt_gs=; { IFS= read -r mlt_gs < "$j/guard.stop"; } 2>/dev/null
  case $mlt_gs in
    'limit '*) mlt_notify_event stopped "${mlt_gs#limit } reached" "$mlt_x" ;;
    'silent '*) mlt_notify_event stopped "no new console output for ${mlt_gs#silent } s (watch.silent_minutes)" "$mlt_x" ;;
    'idle '*) mlt_notify_event stopped "every GPU idle for ${mlt_gs#idle } s (watch.idle_gpu_minutes)" "$mlt_x" ;;
    'rule '*) mlt_rl=${mlt_gs#rule }; mlt_notify_event stopped "watch.stop_when rule #$((${mlt_rl%%	*} + 1)) fired on the line '${mlt_rl#*	}'" "$mlt_x" ;;
    *) if [ -s "$j/stopped" ]; then mlt_notify_event stopped "stopped by mlt (stop, Ctrl+C or a limit)" "$mlt_x"
      elif [ "$mlt_x" = 0 ]; then mlt_notify_event finished "" "$mlt_x"
      else mlt_notify_event failed "exit status $mlt_x" "$mlt_x"; fi ;;
  esac
}
mlt_attempt=$(sed -n 's/^attempt=//p' "$j/lock" 2>/dev/null)
mlt_end_told='' mlt_started_told='' mlt_sending='' mlt_targets_wait=30
mlt_size=-1 mlt_since=0 mlt_ended='' mlt_next=0 mlt_idle_since='' mlt_idle_told='' mlt_tick=0 mlt_dl_done='' mlt_look=0
while :; do
  mlt_r=; { IFS= read -r mlt_r < "$j/run_id"; } 2>/dev/null
  [ "$mlt_r" = "$o" ] || exit 0
  mlt_now=$(date +%s)
  if [ -e "$j/exit_status" ]; then
    # A job that ended at once may have ended before its targets came (a start sent with the
    # lock): they are waited for a while. Then the start, if it was not told, and the end.
    # The checkpoints once more as the job ended (a collection waits for this look).
    if [ -n "$mlt_ckpt" ]; then mlt_ckpt_final "$j" "$mlt_now" ended; mlt_ckpt=''; fi
    if [ -n "$mlt_notify" ] && [ ! -f "$j/notify.targets" ] && [ "$mlt_targets_wait" -gt 0 ]; then
      mlt_targets_wait=$((mlt_targets_wait - 1)); sleep 1; continue
    fi
    [ -n "$mlt_started_told" ] || { mlt_started_told=1; mlt_notify_event started ""; }
    [ -n "$mlt_end_told" ] || mlt_notify_end
    mlt_unattended
  elif ! kill -s 0 "$g" 2>/dev/null; then [ -e "$j/exit_status" ] || exit 0
  else
    # The targets may come just after the job's start (a start sent with the lock).
    if [ -z "$mlt_started_told" ] && [ -n "$mlt_notify" ] && [ -f "$j/notify.targets" ]; then
      mlt_started_told=1; mlt_notify_event started ""
    fi
    mlt_tick=$(((mlt_tick + 1) % 5))
    [ "$mlt_tick" != 0 ] || [ -n "$mlt_dl_done" ] || mlt_read_deadline
    if [ -n "$mlt_dl" ] && [ "$mlt_now" -ge "$mlt_dl" ]; then mlt_guard_stop "limit $mlt_limit" "$mlt_limit reached"; mlt_dl='' mlt_dl_done=1; fi
    # The console log every other second: the rules and the silence (a second more of latency
    # halves what they cost beside a job that prints all the time).
    mlt_look=$((1 - mlt_look))
    if [ "$mlt_look" = 1 ] && [ -n "$mlt_rules$mlt_quiet" ]; then
      mlt_file_size "$j/console.log"; mlt_n=$((mlt_fs))
      if [ -n "$mlt_rules" ]; then
        mlt_hit=$(mlt_rules_tick "$j" "$mlt_n")
        if [ -n "$mlt_hit" ]; then
          mlt_guard_stop "rule $mlt_hit" "watch.stop_when rule #$((${mlt_hit%%	*} + 1)) fired on the line '${mlt_hit#*	}'"
          mlt_rules=''
        fi
      fi
      if [ -n "$mlt_quiet" ]; then
        if [ "$mlt_n" != "$mlt_size" ]; then mlt_size=$mlt_n mlt_since=$mlt_now
        elif [ $((mlt_now - mlt_since)) -ge "$mlt_quiet" ]; then
          mlt_words="no new console output for $mlt_quiet s (watch.silent_minutes)"
          if [ -n "$mlt_quiet_stop" ]; then mlt_guard_stop "silent $mlt_quiet" "$mlt_words"; mlt_quiet=
          else echo "mlt: $mlt_words: the job may hang (watch.stop_silent would stop it)"; mlt_since=$mlt_now; fi
        fi
      fi
    fi
    [ -z "$mlt_idle" ] || mlt_idle_look
    # The checkpoints every other second, each new version with the metric's latest value.
    if [ "$mlt_look" = 1 ] && [ -n "$mlt_ckpt" ]; then
      mlt_ckpt_look "$j" "$mlt_now"
    fi
  fi
  sleep 1
done
