#!/usr/bin/env bash
# Several-nodes benchmark: the launch overhead of a run on two nodes against one, and the
# time a gang stop takes. Two loopback sshd servers are the two nodes (127.0.0.1 only).
#
#   tests/bench/nodes.sh [--runs N] [--keep]
#
# Launch: a job that prints one line, `train` timed from start to exit, N runs (default 5)
# each on one node (-h A) and on two (-h A -h B); it prints the median and range of each and
# the difference. Gang stop: rank 1 exits 3 while rank 0 loops (bounded at 120 s); it prints
# the seconds from rank 1's failing line to mlt's exit, which must be 3 with rank 0 stopped.
# Everything lives in a temp dir removed on exit (--keep keeps it).
# Environment: MLT (binary, default build/src/mlt), BENCH_TIMEOUT (s per command, default 600).
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

runs=5 keep=0
while [ $# -gt 0 ]; do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "--runs: not a positive number: '$runs'" >&2; exit 2; }

bench_init
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

one=() two=()
for _ in $(seq "$runs"); do
  one+=("$(timed "$work/one.log" "$mlt" ssh "${mlt_opts[@]}" -h "$a" train one)")
  two+=("$(timed "$work/two.log" "$mlt" ssh "${mlt_opts[@]}" -h "$a" -h "$b" train one)")
done
for v in "${one[@]}" "${two[@]}"; do
  [[ $v =~ ^[0-9.]+$ ]] || { echo "a run failed ($v); see $work/one.log, $work/two.log" >&2; exit 1; }
done
m1=$(median "${one[@]}") m2=$(median "${two[@]}")

# Gang stop: stamp each output line, then the exit.
set +e
"$mlt" ssh "${mlt_opts[@]}" -h "$a" -h "$b" train gang 2>&1 |
  while IFS= read -r line; do echo "$(now) $line"; done > "$work/gang.log"
rc=${PIPESTATUS[0]}
end=$(now)
set -e
fail=$(awk '/\[rank 1\] rank 1 fails now/ {print $1; exit}' "$work/gang.log")
if [ "$rc" != 3 ] || [ -z "$fail" ] || grep -q "never stopped" "$work/gang.log"; then
  echo "gang run: exit $rc, see $work/gang.log" >&2; cat "$work/gang.log" >&2; exit 1
fi

echo "launch, $runs runs each, seconds: median (min-max)"
echo "  one node:  $(stats "${one[@]}")"
echo "  two nodes: $(stats "${two[@]}")"
echo "  overhead of the second node (medians): $(awk -v a="$m1" -v b="$m2" 'BEGIN {printf "%+.2f s", b-a}')"
echo "gang stop: rank 1 failed, mlt exited 3 after $(awk -v a="$fail" -v b="$end" 'BEGIN {printf "%.2f s", b-a}')"
