#!/usr/bin/env bash
# Budget benchmark: how late a --max-hours stop comes, without failover. A job whose login
# shell is slow (the bench's BASH_ENV sleeps PROFILE seconds in every `bash --login`, as a
# pyenv or conda profile does) starts a Python training that runs until it is stopped. The
# limit falls at LIMIT seconds, during the login shell or the training. For each row it prints
# when mlt's stop line came after the limit (its "reached after T" against LIMIT), the seconds
# from the stop line to the job's end (the stop's round trip, the SIGTERM and the job's exit),
# the seconds from the job's start to its first training line ("never": stopped before) and
# mlt's exit code (5 expected).
#
#   tests/bench/budget_stop.sh [--reps N] [--keep]
#
# Rows: limit 3.6 s (--max-hours 0.001) with a login profile of 0, 2 and 6 s; limit 7.2 s
# (0.002 h) with 0 s. Everything lives in a temp dir removed on exit (--keep keeps it).
# Environment: MLT (binary, default build/src/mlt), BENCH_TIMEOUT (s per command, default 600).
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

reps=2 keep=0
while [ $# -gt 0 ]; do
  case $1 in
    --reps) reps=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
[[ $reps =~ ^[0-9]+$ ]] || { echo "--reps: not a number: '$reps'" >&2; exit 2; }

bench_init
bench_start "$keep"

proj=$work/project
mkdir -p "$proj"
cat > "$proj/b.py" <<'PY'
import time
print("training", flush=True)
for i in range(600):
    time.sleep(0.1)
PY
cat > "$proj/b.ssh.yaml" <<YAML
ssh:
  train_cmd: "python3 {spec}"
  remote_dir: "$work/remote"
  compression: none
YAML

stamp() { while IFS= read -r l; do echo "$(now) $l"; done; }

# run_once PROFILE_S MAX_HOURS: one run; prints its row.
run_once() {
  local profile=$1 hours=$2 rc=0
  rm -rf "$work/remote" "$HOME/.mltk" "$work/out.log" "$work/err.log"
  mkdir -p "$work/remote" "$HOME/.mltk"
  # The sshd's BASH_ENV reads the profile's length from here at each login.
  sed -i "s/^  \[ '[0-9.]*' = 0 \] || sleep '[0-9.]*'$/  [ '$profile' = 0 ] || sleep '$profile'/" \
    "$work/bash_env.sh"
  (cd "$proj" && exec timeout "$tmo" "$mlt" ssh -h "$user@127.0.0.1:$SSHD_PORT" "${mlt_opts[@]}" \
    train b --max-hours "$hours" > >(stamp > "$work/out.log") 2> >(stamp > "$work/err.log")) || rc=$?
  sleep 0.2  # the stamp processes flush
  python3 - "$work/out.log" "$work/err.log" "$profile" "$hours" "$rc" <<'PYEOF'
import re, sys
def lines(path):
    return [(float(t), text) for t, text in (l.split(" ", 1) for l in open(path).read().splitlines() if " " in l)]
out, err = lines(sys.argv[1]), lines(sys.argv[2])
limit = float(sys.argv[4]) * 3600
stop = next(((t, x) for t, x in err + out if "stopping the remote job" in x), None)
end = next((t for t, x in out + err if "job finished with exit status" in x), None)
late = "-"
if stop:
    m = re.search(r"reached after ([0-9.]+) s", stop[1])
    if m:
        late = f"{float(m.group(1)) - limit:5.1f}"
gone = f"{end - stop[0]:5.1f}" if stop and end else "    -"
started = next((t for t, x in out + err if "started b on" in x), None)
trained = next((t for t, x in out if x.endswith("training") and "mlt:" not in x), None)
first = f"{trained - started:5.1f}" if started and trained else "never"
print(f"{sys.argv[3]:>8} {limit:6.1f} {late:>8} {gone:>8} {first:>8} {sys.argv[5]:>5}")
PYEOF
}

echo "profile  limit   stop s   stop->   start->  exit" >&2
echo "      s      s   late     end s    train s" >&2
for _ in $(seq "$reps"); do
  for row in "0 0.001" "2 0.001" "6 0.001" "0 0.002"; do
    # shellcheck disable=SC2086  # the row's words are the arguments
    run_once $row
  done
done
