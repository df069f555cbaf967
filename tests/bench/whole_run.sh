#!/usr/bin/env bash
# Whole-run benchmark: one `mlt ssh ... train` (upload a workspace, run a job that writes a
# log dir of many small files, pull that log dir) against the same thing by hand with three
# ssh connections:
#   rsync -a workspace/ host:remote/ ; ssh host 'cd remote && python3 train.py LOGDIR N' ;
#   rsync -a host:LOGDIR/ local/
# Each runs cold (empty remote dir, empty local result dir) and warm (everything again,
# nothing changed), through a throwaway sshd on 127.0.0.1 behind mlt_delay_relay. The end
# state is checked: sha256 of the uploaded workspace and of the pulled log dir.
#
#   tests/bench/whole_run.sh [--rtt-ms N ...] [--rate-mbit N] [--compression C] [--small]
#                            [--trace] [--profile-s S] [--profile-ms N] [--cpus shared|split]
#                            [--repeat N] [--keep]
#
# Defaults: RTTs 0 and 50 ms; workspace of 2,000 files of 1-64 KiB + one 50 MB file; the job
# writes 2,000 files of 0.5-8 KiB. --small: 300 files + 5 MB, 300 log files. --trace: the
# mlt runs once more per RTT (cold and warm, untimed) with -vv, listing how long each remote
# exec took. --rtt-ms direct: no relay. --rate-mbit N: the relay caps each direction at N
# Mbit/s (a slow link). --compression none|gzip|zstd: mlt's setting (default: mlt's default).
# --profile-s S: every `bash --login` (a job's batch) sleeps S s first, as a remote whose
# profile sets up pyenv or conda does (lib.sh). The table counts sshd sessions and login shells.
# --profile-ms N: the remote is a user created for the run whose ~/.bashrc (read for every
# command sshd starts) and ~/.profile (read by `bash --login`) each burn N ms of CPU; the
# table's head gives the measured login cost and a column counts the reads (lib.sh).
# --cpus split: sshd and all it starts on CPU 0, the script, mlt, ssh, rsync and the relay on
# CPU 1 (default: shared, no pinning).
# --repeat N: the warm run goes N times, by hand and with mlt, one after the other as usual;
# the table shows the median, and the spread below it (a warm run at 50 ms varies by 0.2 s).
# Everything lives in a temp dir removed on exit (--keep keeps it); the runs start 31 s after
# the set-up, and the dirs of a run are set aside, not deleted (see set_aside).
# Environment: MLT (binary, default build/src/mlt), BENCH_TIMEOUT (s per command, default 600).
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

rtts=() small=0 keep=0 trace=0 repeat=1
while [ $# -gt 0 ]; do
  common_option "$@"
  if [ "$opt_words" -gt 0 ]; then shift "$opt_words"; continue; fi
  login_option "$@"
  if [ "$opt_words" -gt 0 ]; then shift "$opt_words"; continue; fi
  case $1 in
    --small) small=1; shift ;;
    --trace) trace=1; shift ;;
    --repeat) [[ $2 =~ ^[1-9][0-9]?$ ]] || { echo "--repeat: 1 to 99" >&2; exit 2; }
              repeat=$2; shift 2 ;;
    --profile-s) [[ $2 =~ ^[0-9]+([.][0-9]+)?$ ]] || { echo "--profile-s: not a number" >&2; exit 2; }
                 bench_profile_s=$2; shift 2 ;;
    -h|--help) sed -n '2,31p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
[ ${#rtts[@]} -gt 0 ] || rtts=(0 50)
if [ "$small" = 1 ]; then nfiles=300 bigmb=5 nlogs=300; else nfiles=2000 bigmb=50 nlogs=2000; fi

bench_init rsync
bench_start "$keep"

# --- the workspace (with the training program) and the model spec ---------------------------
ws=$work/workspace
proj=$work/project
mkdir -p "$ws" "$proj"
echo "generating workspace: $nfiles files of 1-64 KiB + ${bigmb} MB ..." >&2
gen_tree "$ws" "$nfiles" "$bigmb"
# The job: N log files of 0.5-8 KiB in nested dirs, same bytes every run, and a fixed mtime,
# so that a rerun leaves the log dir unchanged for incremental tools (as a resumed training
# that rewrites identical checkpoints would).
cat > "$ws/train.py" <<'PY'
import os, random, sys
out, n = sys.argv[1], int(sys.argv[2])
rng = random.Random(7)
for i in range(n):
    d = os.path.join(out, f"epoch{i // 100:03d}", f"part{i % 4}")
    os.makedirs(d, exist_ok=True)
    p = os.path.join(d, f"step{i:05d}.log")
    with open(p, "wb") as f:
        f.write(rng.randbytes(rng.randint(512, 8 * 1024)))
    os.utime(p, (1700000000, 1700000000))
print(f"wrote {n} log files to {out}")
PY
echo '# the whole-run benchmark model: train.py in the workspace does the work' > "$proj/bench_model.py"
ref_logs=$work/ref-logs
python3 "$ws/train.py" "$ref_logs" "$nlogs" >/dev/null
want_ws=$(manifest "$ws")
want_logs=$(manifest "$ref_logs")
ws_bytes=$(du -sb "$ws" | cut -f1)
ws_files=$(find "$ws" -type f | wc -l)
log_bytes=$(du -sb "$ref_logs" | cut -f1)
echo "workspace: $ws_files files, $ws_bytes bytes, manifest $want_ws" >&2
echo "job log dir: $nlogs files, $log_bytes bytes, manifest $want_logs" >&2

# The same by hand: three ssh connections (each step's time goes to the log too).
cat > "$work/by_hand.sh" <<'SH'
set -eu
ssh_cmd=$1 ws=$2 host=$3 remote=$4 remote_logs=$5 local_logs=$6 nlogs=$7
t0=$(date +%s.%N)
rsync -a -e "$ssh_cmd" "$ws/" "$host:$remote/"
t1=$(date +%s.%N)
$ssh_cmd "$host" "cd $remote && python3 train.py $remote_logs $nlogs"
t2=$(date +%s.%N)
rsync -a -e "$ssh_cmd" "$host:$remote_logs/" "$local_logs/"
t3=$(date +%s.%N)
awk -v a="$t0" -v b="$t1" -v c="$t2" -v d="$t3" \
  'BEGIN { printf "steps: upload %.2f s, job %.2f s, pull %.2f s\n", b - a, c - b, d - c }'
SH
mlt_logs=$HOME/.mltk/models/bench_model   # where `train` pulls the remote log dir
results=$work/results.tsv
: > "$results"
# ext4 skips inodes freed in the last 30 s when it creates files, which makes creating
# thousands of them slow right after thousands were deleted (an earlier benchmark's clean-up):
# cold runs varied 3x with that. So the runs start 31 s after the set-up, and nothing is
# deleted between them (set_aside).
echo "waiting 31 s for the file system to settle ..." >&2
sleep 31

# set_aside DIR...: moves the dirs into $work/trash (removed on exit) instead of deleting them:
# ext4 makes the creation of many files slow for about 30 s after many were deleted (the
# allocator skips recently freed inodes), which made cold runs vary 3x with the order of
# the runs.
set_aside() {
  local d
  mkdir -p "$work/trash"
  for d in "$@"; do
    [ -e "$d" ] && mv "$d" "$(mktemp -d "$work/trash/XXXXXX")/"
  done
  return 0
}

# check REMOTE_DIR LOCAL_LOGS: "ok", or what differs.
check() {
  local w l
  w=$(manifest "$1" "$ws")
  l=$(manifest "$2" "$ref_logs")
  if [ "$w" = "$want_ws" ] && [ "$l" = "$want_logs" ]; then echo ok; return; fi
  echo "workspace:$w logs:$l"
}

# shells: sets shells_out to "SESSIONS LOGIN READS" since the last call: the sessions sshd
# started (each runs the account's shell, which reads ~/.bashrc), the `bash --login` started
# in them (lib.sh) and, with --profile-ms, the reads of ~/.bashrc and ~/.profile ("RC+PROF",
# else "-"). Not in a $(...): it keeps its count between calls.
shells_seen=0 shells_out=
shells() {
  local n
  n=$(grep -c 'Starting session' "$work/sshd.log" || true)
  shells_out="$((n - shells_seen)) $(grep -c '^login$' "$work/shells.log" || true) $(profile_reads)"
  shells_seen=$n
  : > "$work/shells.log"
}

# trace_execs LOG SHELLS: what a -vv run did, from mlt's file log (ms timestamps): the remote
# commands (control-shell frames, "shell on", and exec channels, "exec on") and how long each
# took, the phase each belongs to (told by what the command does), the bytes of the run
# (its history record) and SHELLS ("plain login" bash starts).
trace_execs() {
  python3 - "$1" "$2" "$HOME/.mltk/ssh/history.jsonl" <<'PY'
import json, re, sys
from datetime import datetime
rows = []
for line in open(sys.argv[1], errors="replace"):
    m = re.match(r"(\S+ \S+) \[\d+\] (\w+): (.*)", line)
    if m:
        rows.append([datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S.%f"), m.group(3)])
    elif rows:
        rows[-1][1] += "\n" + line.rstrip("\n")  # a command's further lines
if not rows:
    sys.exit()
start = rows[0][0]
# Session::exec logs "exec on HOST: CMD", Session::shell "shell on HOST: CMD" (or "shell on
# HOST (sent ahead): CMD" for a command whose frame went with the one before), then
# "exit status N", for every remote command.
execs, pending = [], None
for t, msg in rows:
    if msg.startswith("exec on ") or msg.startswith("shell on "):
        head, cmd = msg.split(": ", 1)
        pending = (t, "ahead" if "(sent ahead)" in head else head.split(" ", 1)[0], cmd)
    elif msg.startswith("exit status") and pending:
        execs.append((pending[0], t, pending[1], pending[2]))
        pending = None
# The phase of each command, by what it does; a phase lasts until the next one's first.
phase, phases = "connect", []
for t, end, kind, cmd in execs:
    if "lock.new." in cmd: phase = "lock"
    # The start sent with the lock (start.ticket.): its answer is read with the lock's.
    elif "start.ticket." in cmd: phase = "lock"
    elif "run.sh" in cmd and "setsid" in cmd: phase = "start"
    elif "mlt_send" in cmd and "console.log" in cmd: phase = "follow"
    elif "shutdown.sh" in cmd or "shutdown.log" in cmd or "shutdown.status" in cmd:
        phase = "shutdown"
    elif 'then rm -f "$j/lock"' in cmd: phase = "release"
    elif phase == "lock": phase = "upload"
    elif phase == "follow": phase = "collect"
    phases.append(phase)
total = (rows[-1][0] - start).total_seconds()
plain, login = sys.argv[2].split()[:2]
up = down = "?"
try:
    h = json.loads(open(sys.argv[3]).read().splitlines()[-1])
    up, down = h.get("bytes_up", "?"), h.get("bytes_down", "?")
except (OSError, IndexError, ValueError):
    pass
shells = sum(1 for e in execs if e[2] == "shell")
ahead = sum(1 for e in execs if e[2] == "ahead")
print(f"  {len(execs)} remote commands ({shells} control-shell frames, {ahead} sent ahead with "
      f"one, {len(execs) - shells - ahead} exec channels); sshd sessions {plain}, bash --login "
      f"{login}; bytes up {up}, down {down}; run {total:.2f} s")
order = []
for p in phases:
    if p not in order: order.append(p)
first = {p: next(e[0] for e, q in zip(execs, phases) if q == p) for p in order}
cuts = [first[p] for p in order] + [rows[-1][0]]
print("  phases: " + ", ".join(
    f"{p} {sum(q == p for q in phases)} cmd {(cuts[i + 1] - cuts[i]).total_seconds():.2f} s"
    for i, p in enumerate(order)))
for (t, end, kind, cmd), p in zip(execs, phases):
    print(f"  +{(t - start).total_seconds():5.2f} s {(end - t).total_seconds():5.2f} s  "
          f"{p:8} {kind}: {cmd.splitlines()[0][:90]}")
PY
}

for rtt in "${rtts[@]}"; do
  start_relay "$rtt"
  for how in hand mlt; do
    remote=$work/remote/$how-$rtt
    remote_logs=$work/remote/$how-$rtt-logs
    log=$work/$how-$rtt.log
    case $how in
      hand) local_logs=$work/local/hand-$rtt ;;
      mlt) local_logs=$mlt_logs ;;
    esac
    set_aside "$remote" "$remote_logs" "$local_logs"
    mkdir -p "$(dirname "$local_logs")"
    cat > "$proj/bench_model.ssh.yaml" <<YAML
ssh:
  train_cmd: "python3 train.py {log_dir} $nlogs"
  remote_log_dir: "$remote_logs"
$(compression_yaml)
YAML
    times=() counts=() warm_times=()
    shells
    passes=(cold)
    for ((i = 0; i < repeat; i++)); do passes+=(warm); done
    for pass in "${passes[@]}"; do
      echo "== $pass" >>"$log"
      case $how in
        hand)
          t=$(timed "$log" bash "$work/by_hand.sh" "$ssh_cmd" "$ws" "$dest_host" "$remote" \
                "$remote_logs" "$local_logs" "$nlogs") ;;
        mlt)
          t=$(cd "$proj" && timed "$log" "$mlt" ssh -h "$dest_host:$port/$remote" "${mlt_opts[@]}" \
                train bench_model --workspace "$ws") ;;
      esac
      shells
      if [ "$pass" = cold ] || [ ${#warm_times[@]} = 0 ]; then counts+=("$shells_out"); fi
      if [ "$pass" = cold ]; then times+=("$t"); else warm_times+=("$t"); fi
    done
    # The median warm run (the lower middle one of an even count); every one goes to the log.
    times+=("$(printf '%s\n' "${warm_times[@]}" | sort -g | sed -n "$(((${#warm_times[@]} + 1) / 2))p")")
    [ "$repeat" = 1 ] || echo "rtt $rtt, $how, warm runs: ${warm_times[*]}" >>"$work/spread.txt"
    ok=$(check "$remote" "$local_logs")
    if [ "$trace" = 1 ] && [ "$how" = mlt ]; then
      # Untimed: the same cold and warm runs again with -vv, from an empty remote and local dir.
      set_aside "$remote" "$remote_logs" "$local_logs"
      for pass in cold warm; do
        : > "$HOME/.mltk/cli_logs/mlt.log"
        shells
        (cd "$proj" && timeout "$tmo" "$mlt" ssh -vv -h "$dest_host:$port/$remote" "${mlt_opts[@]}" \
           train bench_model --workspace "$ws") >>"$work/trace-$rtt.log" 2>&1 || true
        echo "mlt ssh -vv, $pass, rtt $rtt:" >>"$work/trace.txt"
        shells
        trace_execs "$HOME/.mltk/cli_logs/mlt.log" "$shells_out" >>"$work/trace.txt"
      done
    fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$rtt" "$how" "${times[0]}" "${times[1]}" "$ok" \
      "${counts[0]}" "${counts[1]}" >>"$results"
    echo "  $how: cold ${times[0]} s, warm ${times[1]} s, end state $ok" >&2
    set_aside "$remote" "$remote_logs" "$local_logs"
  done
done
stop_relay

# --- the table -------------------------------------------------------------------------------
echo
echo "workspace: $ws_files files, $ws_bytes bytes; job log dir: $nlogs files, $log_bytes bytes"
echo "(loopback sshd behind mlt_delay_relay$( [ "$rate_mbit" = 0 ] || echo ", capped at $rate_mbit Mbit/s"); mlt compression: ${compression:-default}; hand = rsync up + ssh job + rsync down)"
bench_setup_text
python3 - "$results" "${bench_user:+reads}" <<'PY'
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
reads = sys.argv[2] == "reads"  # --profile-ms: a column for the reads of ~/.bashrc+~/.profile
hand = {r[0]: r for r in rows if r[1] == "hand"}
def ratio(v, b):
    try: return f"{float(v) / float(b):.2f}"
    except (ValueError, ZeroDivisionError): return "-"
# Per run (cold / warm): sshd sessions + `bash --login` started (lib.sh).
def sh(c):
    p, l, _ = c.split()
    return f"{p}+{l}"
head = "| rtt ms | run  | cold s | warm s | cold mlt/hand | warm mlt/hand | sessions+login cold / warm |"
rule = "|--------|------|--------|--------|---------------|---------------|----------------------------|"
if reads:
    head += " bashrc+profile reads cold / warm |"
    rule += "----------------------------------|"
print(head + " end state |")
print(rule + "-----------|")
for rtt, how, cold, warm, ok, sc, sw in rows:
    rc = rw = ""
    if how == "mlt" and rtt in hand:
        rc, rw = ratio(cold, hand[rtt][2]), ratio(warm, hand[rtt][3])
    line = (f"| {rtt:>6} | {how:4} | {cold:>6} | {warm:>6} | {rc:>13} | {rw:>13} | "
            f"{sh(sc) + ' / ' + sh(sw):>26} |")
    if reads:
        line += f" {sc.split()[2] + ' / ' + sw.split()[2]:>32} |"
    print(f"{line} {ok} |")
PY
for rtt in "${rtts[@]}"; do
  grep -h '^steps:' "$work/hand-$rtt.log" | sed "s/^/hand, rtt $rtt: /" || true
done
[ "$repeat" = 1 ] || cat "$work/spread.txt"
[ "$trace" = 0 ] || { echo; cat "$work/trace.txt"; }
if cut -f5 "$results" | grep -qvx ok; then echo "some runs failed or differ; logs kept with --keep" >&2; exit 1; fi
