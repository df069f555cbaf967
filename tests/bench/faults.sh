#!/usr/bin/env bash
# Faults benchmark: one `mlt ssh ... train` through mlt_fault_relay (the integration tests'
# FaultRelay as a program) with three cuts (while uploading, following and collecting) and
# one stall of 45 s while following, beside the same run without faults. For each fault it
# prints the seconds from the fault to mlt's "link ... lost ...; reconnecting" line and to
# its "is back" line, and the extra wall time the faults cost. The end state is checked:
# exit 0, every console line once, the archive equal to the remote sha256.
#
#   tests/bench/faults.sh [--lines N] [--big-mb M] [--stall S] [--keep]
#
# Defaults: a training of 120 lines, one every 0.5 s (60 s); an upload and an archive of
# 64 MB of random bytes each; a 45 s stall. Keepalives are mlt's defaults (a silent link is
# noticed after 30 s). Everything lives in a temp dir removed on exit (--keep keeps it).
# Environment: MLT (binary, default build/src/mlt), BENCH_TIMEOUT (s per command, default 600).
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

lines=120 bigmb=64 stall_s=45 keep=0
while [ $# -gt 0 ]; do
  case $1 in
    --lines) lines=$2; shift 2 ;;
    --big-mb) bigmb=$2; shift 2 ;;
    --stall) stall_s=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done

bench_init
need_fault_relay
bench_start "$keep"

proj=$work/project
mkdir -p "$proj"
head -c $((bigmb * 1024 * 1024)) /dev/urandom > "$proj/big.bin"
cat > "$proj/f.py" <<SH
i=1; while [ \$i -le $lines ]; do echo "line \$i/$lines"; sleep 0.5; i=\$((i+1)); done
head -c $((bigmb * 1024 * 1024)) /dev/urandom > "\$MLT_ARCHIVE"
SH
cat > "$proj/f.ssh.yaml" <<YAML
ssh:
  train_cmd: "sh {spec}"
  upload_files: [big.bin]
  remote_dir: "$work/remote"
  remote_log_dir: "$work/remote/logs/{model}"
  compression: none
YAML

# run_once FAULTS: one cold run (empty remote dir and local results); with FAULTS=1 the
# faults are injected and their times written to $work/faults.log.
run_once() {
  local faults=$1 rport t0 t1 rc
  rm -rf "$work/remote" "$HOME/.mltk" "$proj/f.mltk.zip" "$work/out.log" "$work/err.log"
  mkdir -p "$work/remote" "$HOME/.mltk"
  : > "$work/faults.log"
  coproc relay { exec timeout $((tmo * 10)) "$relay_tool" --target "$SSHD_PORT"; }
  read -r -t 10 _ rport <&"${relay[0]}"
  t0=$(now)
  (cd "$proj" && exec timeout "$tmo" "$mlt" ssh -h "$user@127.0.0.1:$rport" "${mlt_opts[@]}" train f \
    > "$work/out.log" 2> >(while IFS= read -r l; do echo "$(now) $l"; done > "$work/err.log")) &
  local pid=$!
  if [ "$faults" = 1 ]; then
    relay_cmd cut-after up $((bigmb * 1024 * 1024 / 4)) >/dev/null
    relay_cmd wait-fired $((tmo * 1000)) >/dev/null
    echo "$(now) cut while uploading" >> "$work/faults.log"
    wait_text "$work/out.log" "line $((lines / 12 + 1))/"
    relay_cmd cut >/dev/null
    echo "$(now) cut while following" >> "$work/faults.log"
    wait_text "$work/out.log" "line $((lines / 4 + 1))/"
    relay_cmd stall >/dev/null
    echo "$(now) stall of ${stall_s} s while following" >> "$work/faults.log"
    sleep "$stall_s"  # the fault's own length
    relay_cmd resume >/dev/null
    wait_text "$work/out.log" "line $lines/"
    relay_cmd cut-after down $((bigmb * 1024 * 1024 / 4)) >/dev/null
    relay_cmd wait-fired $((tmo * 1000)) >/dev/null
    echo "$(now) cut while collecting" >> "$work/faults.log"
  fi
  rc=0
  wait "$pid" || rc=$?
  t1=$(now)
  echo quit >&"${relay[1]}" || true
  wait "$relay_PID" 2>/dev/null || true
  [ "$rc" = 0 ] || { echo "mlt exited $rc; stderr:" >&2; cat "$work/err.log" >&2; exit 1; }
  # The end state: every line once, the archive as the remote recorded it.
  local n
  n=$(grep -c '^line ' "$work/out.log")
  [ "$n" = "$lines" ] || { echo "$n console lines on stdout instead of $lines" >&2; exit 1; }
  [ "$(sort "$work/out.log" | uniq -d | grep -c '^line ' || true)" = 0 ] || { echo "a line twice" >&2; exit 1; }
  [ "$(sha256sum < "$proj/f.mltk.zip" | cut -d' ' -f1)" = "$(cat "$work/remote/.mlt/f/sha256")" ] ||
    { echo "the archive does not match the remote sha256" >&2; exit 1; }
  python3 -c "print(f'{$t1 - $t0:.1f}')"
}

echo "run without faults ..." >&2
clean=$(run_once 0)
echo "run with 3 cuts and a ${stall_s} s stall ..." >&2
faulted=$(run_once 1)

# Each fault, then the first "lost" and "back" lines after it.
python3 - "$work/faults.log" "$work/err.log" "$clean" "$faulted" <<'PY'
import sys
faults = [l.split(" ", 1) for l in open(sys.argv[1]).read().splitlines()]
events = [l.split(" ", 1) for l in open(sys.argv[2]).read().splitlines()]
print(f"{'fault':36} {'to lost line':>13} {'to back line':>13}")
# mlt may print its line a few ms before this script notes the fault (the relay answers
# after the reset): a line counts from 0.5 s before its fault, and each line once.
used = set()
def first(kind, since):
    for i, (e, text) in enumerate(events):
        if i not in used and float(e) >= since and kind in text:
            used.add(i)
            return float(e)
    return None
for t, what in faults:
    t = float(t)
    lost = first("; reconnecting (attempt 1,", t - 0.5)
    back = first(" is back after ", lost) if lost else None
    show = lambda x: f"{x - t:12.2f}s" if x is not None else "           -"
    print(f"{what:36} {show(lost):>13} {show(back):>13}")
clean, faulted = float(sys.argv[3]), float(sys.argv[4])
print(f"wall time: {clean:.1f} s without faults, {faulted:.1f} s with them: {faulted - clean:+.1f} s")
PY
