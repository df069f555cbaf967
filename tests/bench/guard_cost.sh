#!/usr/bin/env bash
# What the host's guard (src/job/sh/guard.sh) costs beside a job: its CPU (its own and that of
# the programs it forks, from /proc: utime+stime+cutime+cstime) and its peak RSS, over SECONDS
# while a stand-in job appends 20 console lines a second. The guard runs as the wrapper starts
# it (sh -c with alive.sh, stop_functions.sh, launch.sh, sampler.sh, guard_rules.sh and
# guard.sh; its own session), with every duty armed: a deadline far away, a silence rule,
# three watch.stop_when rules (two regexes and a plateau that never fires: each line's
# val_loss is a new best) decided on every line, and the idle-GPU rule sampling every 15 s (a
# stand-in nvidia-smi, first on PATH, says two GPUs are busy), under the shell given (default:
# sh).
#
#   tests/bench/guard_cost.sh [--seconds N] [--shell 'SH ARGS']
#
# Defaults: 600 s (the issue's 10 minutes), sh. --shell 'busybox sh' runs it under BusyBox. Everything lives in a temp dir removed on
# exit; the stand-in job and the guard are stopped on exit.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
seconds=600 shell=sh
while [ $# -gt 0 ]; do
  case $1 in
    --seconds) [[ $2 =~ ^[1-9][0-9]*$ ]] || { echo "--seconds: a whole number above 0" >&2; exit 2; }
               seconds=$2; shift 2 ;;
    --shell) shell=$2; shift 2 ;;
    *) echo "usage: tests/bench/guard_cost.sh [--seconds N] [--shell 'SH ARGS']" >&2; exit 2 ;;
  esac
done
work=$(mktemp -d /tmp/mlt-guard-cost.XXXXXX)
job='' writer='' guard=''
cleanup() {
  [ -z "$writer" ] || kill "$writer" 2>/dev/null || true
  [ -z "$guard" ] || kill -- "-$guard" 2>/dev/null || true
  [ -z "$job" ] || kill "$job" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work"
mkdir -p .mlt/m
sleep $((seconds + 60)) &
job=$!
echo run-1 > .mlt/m/run_id
now=$(date +%s)
printf 'owner=bench\nstarted=%s\nrun=run-1\nphase=running\ndeadline=%s\nlimit=--max-hours 99\nsilent=3600\nrules=1\nidle=3600\nidle_below=10\nevery=15\n' \
  "$now" $((now + 360000)) > .mlt/m/lock
printf 'mlt-rules 1\nr\tloss[=:] *nan\nr\tCUDA out of memory\np\tmin\t5\tval_loss=([0-9]+)\tval_loss=\t[0-9]+\t\n' > .mlt/m/rules
mkdir bin
printf '#!/bin/sh\necho "80, 5000, 81920"\necho "90, 6000, 81920"\n' > bin/nvidia-smi
chmod +x bin/nvidia-smi
export PATH="$work/bin:$PATH"
: > .mlt/m/console.log
(i=0 end=$((SECONDS + seconds + 5)); while [ $SECONDS -lt $end ]; do i=$((i + 1)); echo "epoch line $i val_loss=$((100000000 - i))" >> .mlt/m/console.log; sleep 0.05; done) &
writer=$!
text=$(cat "$root"/src/job/sh/alive.sh "$root"/src/job/sh/stop_functions.sh "$root"/src/job/sh/launch.sh \
  "$root"/src/job/sh/sampler.sh "$root"/src/job/sh/guard_rules.sh "$root"/src/job/sh/guard.sh)
read -ra shell_cmd <<< "$shell"
setsid "${shell_cmd[@]}" -c "$text" sh "$job" run-1 .mlt/m > /dev/null 2>&1 < /dev/null &
for _ in $(seq 100); do [ -s .mlt/m/guard.pid ] && break; sleep 0.05; done
guard=$(cat .mlt/m/guard.pid)
ticks() { awk '{ print $14 + $15 + $16 + $17 }' "/proc/$guard/stat"; }
hz=$(getconf CLK_TCK)
t0=$(date +%s.%N) c0=$(ticks)
sleep "$seconds"
t1=$(date +%s.%N) c1=$(ticks)
hwm=$(awk '/^VmHWM/ { print $2 }' "/proc/$guard/status")
[ ! -e .mlt/m/guard.stop ] || { echo "the guard stopped the stand-in job: $(cat .mlt/m/guard.stop)" >&2; exit 1; }
samples=$(wc -l < .mlt/m/samples)
offset=$(cut -d ' ' -f 1 .mlt/m/rules.state | head -n 1)
echo "decided $offset of $(wc -c < .mlt/m/console.log) console bytes; $samples samples"
awk -v c=$((c1 - c0)) -v hz="$hz" -v t0="$t0" -v t1="$t1" -v hwm="$hwm" -v sh="$shell" 'BEGIN {
  printf "guard under %s over %.0f s beside a job printing 20 lines/s: CPU %.2f %% of one core, peak RSS %.1f MB\n",
    sh, t1 - t0, 100 * c / hz / (t1 - t0), hwm / 1024 }'
