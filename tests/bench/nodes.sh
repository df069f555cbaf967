#!/usr/bin/env bash
# Several-nodes benchmark: the launch overhead of a run on two nodes against one, the time a
# gang stop takes, and the replacement of a lost node. Loopback sshd servers are the nodes
# (127.0.0.1 only).
#
#   tests/bench/nodes.sh [--runs N] [--only launch|gang|replace]... [--keep]
#
# Launch: a job that prints one line, `train` timed from start to exit, N runs (default 5)
# each on one node (-h A) and on two (-h A -h B); it prints the median and range of each and
# the difference. Gang stop: rank 1 exits 3 while rank 0 loops (bounded at 120 s); it prints
# the seconds from rank 1's failing line to mlt's exit, which must be 1 (a training's 3 is one
# of mlt's own codes) with rank 0 stopped.
# Replace: nodes A and B (B behind mlt_fault_relay) and a standby C (`fallback_hosts: [C]`)
# run a shell training of 1 s epochs that saves a checkpoint per epoch and resumes after its
# newest one (`--sync-every 1`, `-o ConnectTimeout=3`); after epoch 3 on both ranks B's host
# is lost (its job's process group killed, the relay closed: connections reset, the port
# refused; its remote dir deleted). One row per `--reconnect-timeout` (10 and 2 s): the
# seconds from the loss to mlt's "lost ... reconnecting" line (detection), its gang stop
# line, "looking for a standby host" (reconnect_timeout over), "takes its place" (C
# connected), "restarting every node" (rendezvous, preflight), both ranks' "started ...
# attempt 2" lines (lock, push, start) and the first epoch line of attempt 2 (the barrier,
# the training's start); and per rank the last epoch of attempt 1 -> the epoch attempt 2
# resumed after. The run must end with exit 0, attempt 2 finished on A and C and the
# history's status success.
# --only runs the parts named (all three by default). Everything lives in a temp dir removed
# on exit (--keep keeps it).
# Environment: MLT (binary, default build/src/mlt), BENCH_TIMEOUT (s per command, default 600).
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

runs=5 keep=0 parts=''
while [ $# -gt 0 ]; do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --only)
      case ${2:-} in launch|gang|replace) parts+=" $2" ;; *) echo "--only: launch, gang or replace" >&2; exit 2 ;; esac
      shift 2 ;;
    --keep) keep=1; shift ;;
    -h|--help) sed -n '2,27p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "--runs: not a positive number: '$runs'" >&2; exit 2; }

# shellcheck disable=SC2119  # no tools beyond the usual ones
bench_init
[ -n "$parts" ] || parts='launch gang replace'
wants() { [[ " $parts " == *" $1 "* ]]; }
! wants replace || need_fault_relay
bench_start "$keep"

# Node B: a second loopback sshd with the same authorized key, stopped on exit as A is.
start_second_sshd
mkdir -p "$work/b/remote"

proj=$work/project
mkdir -p "$proj"
cat > "$proj/one.py" <<'SH'
echo "hello from rank ${MLT_NODE_RANK:-0}"
SH
cat > "$proj/gang.py" <<'SH'
if [ "$MLT_NODE_RANK" = 1 ]; then echo "rank 1 fails now"; exit 3; fi
i=0; while [ $i -lt 2400 ]; do sleep 0.05; i=$((i+1)); done; echo "rank 0 was never stopped"
SH
for m in one gang; do
  printf 'ssh:\n  train_cmd: "sh {spec}"\n  remote_log_dir: "logs/{model}"\n' > "$proj/$m.ssh.yaml"
done
a="$user@127.0.0.1:$port_a/$work/remote" b="$user@127.0.0.1:$port_b/$work/b/remote"
cd "$proj"
"$mlt" ssh "${mlt_opts[@]}" -h "$a" -h "$b" train one >/dev/null 2>&1  # known_hosts, untimed

# median VALUES...: their median; stats VALUES...: "median (min-max)" of seconds.
median() { printf '%s\n' "$@" | sort -n | awk '{v[NR]=$1} END {print (NR%2)?v[(NR+1)/2]:(v[NR/2]+v[NR/2+1])/2}'; }
stats() { printf '%.2f (%.2f-%.2f)' "$(median "$@")" "$(printf '%s\n' "$@" | sort -n | head -1)" "$(printf '%s\n' "$@" | sort -n | tail -1)"; }

launch_part() {
  local one=() two=() v m1 m2
  for _ in $(seq "$runs"); do
    one+=("$(timed "$work/one.log" "$mlt" ssh "${mlt_opts[@]}" -h "$a" train one)")
    two+=("$(timed "$work/two.log" "$mlt" ssh "${mlt_opts[@]}" -h "$a" -h "$b" train one)")
  done
  for v in "${one[@]}" "${two[@]}"; do
    [[ $v =~ ^[0-9.]+$ ]] || { echo "a run failed ($v); see $work/one.log, $work/two.log" >&2; exit 1; }
  done
  m1=$(median "${one[@]}") m2=$(median "${two[@]}")
  echo "launch, $runs runs each, seconds: median (min-max)"
  echo "  one node:  $(stats "${one[@]}")"
  echo "  two nodes: $(stats "${two[@]}")"
  echo "  overhead of the second node (medians): $(awk -v a="$m1" -v b="$m2" 'BEGIN {printf "%+.2f s", b-a}')"
}

# Gang stop: stamp each output line, then the exit.
gang_part() {
  local rc end fail
  set +e
  timeout "$tmo" "$mlt" ssh "${mlt_opts[@]}" -h "$a" -h "$b" train gang 2>&1 |
    while IFS= read -r line; do echo "$(now) $line"; done > "$work/gang.log"
  rc=${PIPESTATUS[0]}
  end=$(now)
  set -e
  fail=$(awk '/\[rank 1\] rank 1 fails now/ {print $1; exit}' "$work/gang.log")
  if [ "$rc" != 1 ] || [ -z "$fail" ] || grep -q "never stopped" "$work/gang.log" ||
     ! grep -q "rank 1 (.*) failed first, with exit 3" "$work/gang.log"; then
    echo "gang run: exit $rc, see $work/gang.log" >&2; cat "$work/gang.log" >&2; exit 1
  fi
  echo "gang stop: rank 1 failed (3), mlt exited 1 after $(awk -v a="$fail" -v b="$end" 'BEGIN {printf "%.2f s", b-a}')"
}

# --- Replace: B lost, the standby C takes rank 1, the gang restarts as attempt 2 -------------
rep_pid='' port_c=''
# A rank's training: resumes after its newest checkpoint; attempt 1 trains until it is
# stopped (at most 120 epochs), attempt 2 three more epochs.
checkpointing_training "$proj/rep.py" 120

# stop_replace: on exit, mlt when still running, and the trainings left on A and C (process
# groups whose processes still name $work).
stop_replace() {
  local f pg
  [ -z "$rep_pid" ] || { kill "$rep_pid" 2>/dev/null || true; wait "$rep_pid" 2>/dev/null || true; }
  for f in "$work/remote/.mlt/rep/pid" "$work/c/remote/.mlt/rep/pid"; do
    pg=$(cat "$f" 2>/dev/null) || continue
    if [[ $pg =~ ^[0-9]+$ ]] && pgrep -g "$pg" -f "$work" >/dev/null; then kill -9 -- "-$pg" 2>/dev/null || true; fi
  done
}
trap 'stop_replace; bench_cleanup' EXIT

stamp() { while IFS= read -r l; do echo "$(now) $l"; done; }

# check_replaced RC OUT ERR: the run ended well (exit 0, rank 1 on C, attempt 2 finished on
# both ranks, the history's status success), else the script fails with mlt's output.
check_replaced() {
  local why='' k
  [ "$1" = 0 ] || why="mlt exited $1"
  [ -n "$why" ] || grep -q "takes its place" "$3" || why="no standby took rank 1"
  [ -n "$why" ] || grep -q "^[0-9.]* mlt: \[rank 1\] started rep on [^ ]*:$port_c (run .*attempt 2" "$2" ||
    why="rank 1 did not start on C as attempt 2"
  for k in 0 1; do
    [ -n "$why" ] || grep -q "^[0-9.]* \[rank $k\] rank $k attempt 2 done$" "$2" ||
      why="rank $k did not finish attempt 2"
  done
  [ -n "$why" ] || python3 - "$HOME/.mltk/ssh/history.jsonl" <<'PY' || why="the history's status is not success"
import json, sys
runs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
runs = [r for r in runs if r.get("model") == "rep"]
sys.exit(0 if runs and runs[-1].get("status") == "success" else 1)
PY
  [ -n "$why" ] || return 0
  echo "replace: $why; stdout:" >&2; cat "$2" >&2
  echo "stderr:" >&2; cat "$3" >&2
  exit 1
}

# replace_row T0 OUT ERR RT: the row of one run from its stamped output.
replace_row() {
  python3 - "$@" <<'PY'
import re, sys
t0, rt = float(sys.argv[1]), sys.argv[4]
def lines(path):
    return [(float(t), text) for t, text in (l.split(" ", 1) for l in open(path).read().splitlines())]
out, err = lines(sys.argv[2]), lines(sys.argv[3])
def first(events, pattern, since):
    return next((t for t, text in events if t >= since and re.search(pattern, text)), None)
since = t0 - 0.5  # a line may come a moment before the script notes the loss
detect = first(err, r"\[rank 1\] link to .* lost while .*reconnecting", since)
stop = first(err, r"rank 1 failed: stopping this node's job", since)
look = first(err, r"rank 1: .* is lost .*looking for a standby host", since)
place = first(err, r"rank 1: .* takes its place", since)
restart = first(err, r"restarting every node of rep .* together as attempt 2", since)
starts = [first(out, rf"^mlt: \[rank {k}\] started rep on .*attempt 2", t0) for k in (0, 1)]
started = max(starts) if None not in starts else None
attempt2 = min([s for s in starts if s] or [t0])  # the first line of attempt 2
epoch = first(out, r"^\[rank [01]\] epoch [0-9]+$", attempt2)
# Per rank: the last epoch of attempt 1 and the one attempt 2 resumed after. Rank 0's
# checkpoints are the run's (a DDP training resumes every rank from them); rank 1's were on B.
def epochs(k):
    last = max([int(x.split()[-1]) for t, x in out if t < attempt2 and x.startswith(f"[rank {k}] epoch ")] or [0])
    resumed = [x for t, x in out if t > t0 and x.startswith(f"[rank {k}] rank {k} attempt 2 resumes after epoch ")]
    return f"{last}->{resumed[0].split()[-1] if resumed else '-'}"
show = lambda a: f"{a - t0:7.1f}" if a else "      -"
print(f"{rt:>4} {show(detect)} {show(stop)} {show(look)} {show(place)} {show(restart)} "
      f"{show(started)} {show(epoch)}  {epochs(0):>8} {epochs(1):>8}")
PY
}

# replace_once RT: one run with --reconnect-timeout RT that loses B after epoch 3 on both
# ranks; checks its end and prints its row.
replace_once() {
  local rt=$1 rport t0 rc pgid out=$work/rep-$1.out err=$work/rep-$1.err
  # A fresh start: without --clean a new run keeps the local log dir of the last, and a
  # restart pushes all of it (the row before's checkpoints too).
  rm -rf "$work/remote/.mlt/rep" "$work/remote/logs/rep" "$work/b/remote" "$work/c/remote" \
    "$HOME/.mltk/models/rep"
  mkdir -p "$work/b/remote" "$work/c/remote"
  coproc relay { exec timeout $((tmo * 10)) "$relay_tool" --target "$port_b"; }
  read -r -t 10 _ rport <&"${relay[0]}" || { echo "mlt_fault_relay did not start" >&2; exit 1; }
  (exec timeout "$tmo" "$mlt" ssh "${mlt_opts[@]}" -o ConnectTimeout=3 -h "$a" \
    -h "$user@127.0.0.1:$rport/$work/b/remote" train rep --sync-every 1 --reconnect-timeout "$rt" \
    > >(stamp > "$out") 2> >(stamp > "$err")) &
  rep_pid=$!
  wait_text "$out" "[rank 0] epoch 3"
  wait_text "$out" "[rank 1] epoch 3"
  # B's host goes: its network first (so that mlt cannot see the job end before the host is
  # gone), then its processes and its disk.
  pgid=$(cat "$work/b/remote/.mlt/rep/pid")
  t0=$(now)
  echo quit >&"${relay[1]}" || true
  # shellcheck disable=SC2154  # relay_PID is set by coproc
  wait "$relay_PID" 2>/dev/null || true
  kill -9 -- "-$pgid"
  rm -rf "$work/b/remote"
  rc=0
  wait "$rep_pid" || rc=$?
  rep_pid=
  check_replaced "$rc" "$out" "$err"
  replace_row "$t0" "$out" "$err" "$rt"
}

replace_part() {
  start_extra_sshd "$work/c"
  port_c=$extra_port
  cat > "$proj/rep.ssh.yaml" <<YAML
ssh:
  train_cmd: "sh {spec}"
  remote_log_dir: "logs/{model}"
  fallback_hosts: ["$user@127.0.0.1:$port_c/$work/c/remote"]
YAML
  echo "replace: seconds from the loss of B (after epoch 3) to each of mlt's lines; per rank the"
  echo "last epoch of attempt 1 -> the epoch attempt 2 resumed after"
  echo "  rt  detect    stop    look   place restart started   epoch   rank 0   rank 1"
  for rt in 10 2; do replace_once "$rt"; done
}

! wants launch || launch_part
! wants gang || gang_part
! wants replace || replace_part
