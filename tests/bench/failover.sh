#!/usr/bin/env bash
# Failover benchmark: a training on host A (a loopback sshd behind mlt_fault_relay) loses
# its host mid-run: the job's process group is killed, A's remote dir deleted and the relay
# either closed (a reset: the host is gone, connects are refused) or stalled (a silent
# host: nothing answers, a connect never completes). With `fallback_hosts: [B]` (a second
# loopback sshd) and `--sync-every 1`, mlt continues the run on B as attempt 2 from the
# checkpoints that came home. For each setting it prints the seconds from the loss to
# mlt's "lost" line (detection), to its "looking for a standby host" line (the rest of
# reconnect_timeout), to the start on B (connect, lock, push of workspace and checkpoints,
# start) and to the first training line on B, and how many epochs were lost. The end
# state is checked: exit 0, the run finished on B as attempt 2.
#
#   tests/bench/failover.sh [--ckpt-mb M] [--keep]
#
# Defaults: one checkpoint of 8 MiB of random bytes per 1 s epoch. Rows: a reset host with
# reconnect_timeout 10 and 30 s; a silent host with ServerAliveInterval 10 (mlt's default,
# ServerAliveCountMax 2: 30 s of silence) and 5, reconnect_timeout 10. ConnectTimeout is 3 s
# throughout, so a connect into the silent host ends after 3 s. Everything lives in a temp
# dir removed on exit (--keep keeps it).
# Environment: MLT (binary, default build/src/mlt), BENCH_TIMEOUT (s per command, default 600).
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

ckpt_mb=8 keep=0
while [ $# -gt 0 ]; do
  case $1 in
    --ckpt-mb) ckpt_mb=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
[[ $ckpt_mb =~ ^[0-9]+$ ]] || { echo "--ckpt-mb: not a number: '$ckpt_mb'" >&2; exit 2; }

bench_init
need_fault_relay
bench_start "$keep"

# Host B: a second loopback sshd with the same authorized key, stopped on exit as A is.
start_second_sshd

proj=$work/project
mkdir -p "$proj"
# Resumes after its newest checkpoint; attempt 1 trains until it is lost, attempt 2 three
# more epochs.
checkpointing_training "$proj/f.py" 1000
cat > "$proj/f.ssh.yaml" <<YAML
ssh:
  train_cmd: "sh {spec}"
  remote_dir: "$work/remote"
  remote_log_dir: "logs/{model}"
  compression: none
  environment: [CKPT_MB=$ckpt_mb]
  fallback_hosts: ["$user@127.0.0.1:$port_b/$work/b/remote"]
YAML

stamp() { while IFS= read -r l; do echo "$(now) $l"; done; }

# run_once MODE ALIVE_S RECONNECT_S: one run that loses host A at epoch 4; prints its row.
run_once() {
  local mode=$1 alive=$2 rt=$3 rport t0 rc pgid
  rm -rf "$work/remote" "$work/b/remote" "$HOME/.mltk" "$work/out.log" "$work/err.log"
  mkdir -p "$work/remote" "$work/b/remote" "$HOME/.mltk"
  coproc relay { exec timeout $((tmo * 10)) "$relay_tool" --target "$SSHD_PORT"; }
  read -r -t 10 _ rport <&"${relay[0]}"
  (cd "$proj" && exec timeout "$tmo" "$mlt" ssh -h "$user@127.0.0.1:$rport" "${mlt_opts[@]}" \
    -o ServerAliveInterval="$alive" -o ConnectTimeout=3 train f --sync-every 1 \
    --reconnect-timeout "$rt" > >(stamp > "$work/out.log") 2> >(stamp > "$work/err.log")) &
  local pid=$!
  wait_text "$work/out.log" "epoch 4"
  # The host goes: its processes, its disk, its network.
  pgid=$(cat "$work/remote/.mlt/f/pid")
  t0=$(now)
  # The network first, so that mlt cannot see the job end before the host is gone.
  if [ "$mode" = reset ]; then
    echo quit >&"${relay[1]}" || true
    wait "$relay_PID" 2>/dev/null || true
  else
    relay_cmd stall >/dev/null
  fi
  kill -9 -- "-$pgid"
  rm -rf "$work/remote"
  rc=0
  wait "$pid" || rc=$?
  if [ "$mode" != reset ]; then
    echo quit >&"${relay[1]}" || true
    wait "$relay_PID" 2>/dev/null || true
  fi
  [ "$rc" = 0 ] || { echo "mlt exited $rc; stderr:" >&2; cat "$work/err.log" >&2; exit 1; }
  grep -q "continuing f (run .*) on .* as attempt 2" "$work/err.log" ||
    { echo "no failover to attempt 2:" >&2; cat "$work/err.log" >&2; exit 1; }
  python3 - "$t0" "$work/out.log" "$work/err.log" "$mode" "$alive" "$rt" <<'PY'
import re, sys
t0 = float(sys.argv[1])
def lines(path):
    return [(float(t), text) for t, text in (l.split(" ", 1) for l in open(path).read().splitlines())]
out, err = lines(sys.argv[2]), lines(sys.argv[3])
def first(events, pattern, since=0.0):
    for t, text in events:
        if t >= since and re.search(pattern, text):
            return t, text
    return None, None
lost, _ = first(err, r"lost while .*(reconnecting|not back)", t0 - 0.5)
look, _ = first(err, r"looking for a standby host", t0 - 0.5)
started, _ = first(out, r"^mlt: started f on .*attempt 2", t0)
marker, _ = first(out, r"^==== mlt: attempt 2 of run", t0)
first_line, _ = first(out, r"^(attempt 2 resumes|epoch )", marker or t0)
_, resumed = first(out, r"^attempt 2 resumes after epoch", t0)
before = [int(text.split()[1]) for t, text in out if t < t0 and text.startswith("epoch ")]
n = int(resumed.split()[-1]) if resumed else 0
show = lambda a, b: f"{a - b:7.1f}" if a and b else "      -"
print(f"{sys.argv[4]:6} {sys.argv[5]:>6} {sys.argv[6]:>6} {show(lost, t0)} {show(look, t0)} "
      f"{show(started, look)} {show(first_line, started)} {show(first_line, t0)} "
      f"{max(before) - n if before else 0:>7}")
PY
}

echo "host     alive  rt s  detect  giveup  switch   start   total  epochs" >&2
echo "         int s        (lost)  (look)  +push   +line  loss->  lost" >&2
for row in "reset 10 10" "reset 10 30" "silent 10 10" "silent 5 10"; do
  # shellcheck disable=SC2086  # the row's words are the arguments
  run_once $row
done
