#!/usr/bin/env bash
# Compression study: whole `mlt ssh ... train` runs (upload a workspace, run a job that writes
# a log dir, pull the log dir) with the setting `compression: none`, `gzip` and `zstd`, for
# two workspaces: "random" (gen_tree, incompressible) and "text" (gen_text_tree: CSV, JSON
# and Python, ~3.5-4x), over links given as RTT[/MBIT] (mlt_delay_relay, MBIT caps each
# direction). The job writes log files like the workspace (random bytes, or JSON lines).
# Every run is checked (sha256 of the remote workspace and the pulled log dir).
#
#   tests/bench/compression.sh [--link RTT[/MBIT] ...] [--size auto|full|small] [--reps N]
#                              [--keep]
#
# Defaults: links 0, 50, 50/100 and 50/20; 2 repetitions (the table shows the fastest cold
# run and the range); --size auto: full (2,000 files of 1-64 KiB + a 50 MiB file, 2,000 log
# files of 0.5-8 KiB) on uncapped links, small (300 files + 5 MiB, 300 log files) on capped
# ones, which keeps the default run around 6 minutes here. Each run is cold (empty remote
# dir, log dir and local result dir) and then warm (the same again, nothing to move). The
# upload and pull seconds are mlt's own ("uploaded ... in X s", "logs: ... in X s", 0.1 s
# steps). Everything lives in a temp dir removed on exit (--keep keeps it).
# Environment: MLT (binary, default build/src/mlt), BENCH_TIMEOUT (s per command, default 600).
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

links=() size=auto reps=2 keep=0
while [ $# -gt 0 ]; do
  case $1 in
    --link) links+=("$2"); shift 2 ;;
    --link=*) links+=("${1#*=}"); shift ;;
    --size) size=$2; shift 2 ;;
    --size=*) size=${1#*=}; shift ;;
    --reps) reps=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
[ ${#links[@]} -gt 0 ] || links=(0 50 50/100 50/20)
case $size in auto|full|small) ;; *) echo "--size: auto, full or small" >&2; exit 2 ;; esac
for l in "${links[@]}"; do
  [[ $l =~ ^(direct|[0-9]+)(/[0-9]+([.][0-9]+)?)?$ ]] || { echo "--link: RTT[/MBIT], not '$l'" >&2; exit 2; }
done

bench_init gzip zstd tar
bench_start "$keep"

proj=$work/project
mkdir -p "$proj"
echo '# the compression benchmark model: train.py in the workspace does the work' > "$proj/bench_model.py"
# The job: N log files of 0.5-8 KiB in nested dirs, the same bytes every run, fixed mtime:
# random bytes ("random") or JSON lines of metrics ("text").
cat > "$work/train.py" <<'PY'
import json, os, random, sys
kind, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
rng = random.Random(7)
for i in range(n):
    d = os.path.join(out, f"epoch{i // 100:03d}", f"part{i % 4}")
    os.makedirs(d, exist_ok=True)
    p = os.path.join(d, f"step{i:05d}.log")
    size = rng.randint(512, 8 * 1024)
    if kind == "random":
        data = rng.randbytes(size)
    else:
        lines, got, s = [], 0, i * 1000
        while got < size:
            line = json.dumps({"step": s, "loss": round(rng.gauss(1, 0.3), 5),
                               "acc": round(rng.random(), 5), "lr": 0.001,
                               "split": rng.choice(["train", "valid"]), "ms": rng.randint(80, 400)})
            lines.append(line + "\n")
            got += len(line) + 1
            s += 1
        data = "".join(lines).encode()[:size]
    with open(p, "wb") as f:
        f.write(data)
    os.utime(p, (1700000000, 1700000000))
print(f"wrote {n} {kind} log files to {out}")
PY

# prepare KIND SIZE: the workspace $work/ws-KIND-SIZE (with train.py) and the reference log
# dir $work/ref-KIND-SIZE, once; a line of sizes and compressed sizes for the table header.
declare -A want_ws want_logs
prepare() {
  local kind=$1 sz=$2 ws=$work/ws-$1-$2 ref=$work/ref-$1-$2 nfiles bigmb nlogs
  [ ! -d "$ws" ] || return 0
  if [ "$sz" = small ]; then nfiles=300 bigmb=5 nlogs=300; else nfiles=2000 bigmb=50 nlogs=2000; fi
  echo "generating $kind workspace ($sz): $nfiles files + $bigmb MiB ..." >&2
  mkdir -p "$ws"
  if [ "$kind" = random ]; then gen_tree "$ws" "$nfiles" "$bigmb"; else gen_text_tree "$ws" "$nfiles" "$bigmb"; fi
  cp "$work/train.py" "$ws/train.py"
  python3 "$ws/train.py" "$kind" "$ref" "$nlogs" >/dev/null
  want_ws[$kind-$sz]=$(manifest "$ws")
  want_logs[$kind-$sz]=$(manifest "$ref")
  # What the streams shrink to: uploads at level 1 (mlt's libarchive filters), the log dir
  # at the remote tar's defaults (gzip -6, zstd -3).
  local wb lb
  wb=$(tar cf - -C "$ws" . | wc -c)
  lb=$(tar cf - -C "$ref" . | wc -c)
  printf '%s\t%s\t%s files\t%s\t%s\t%s\t%s files\t%s\t%s\t%s\n' "$kind" "$sz" \
    "$(find "$ws" -type f | wc -l)" "$wb" "$(tar cf - -C "$ws" . | gzip -1 | wc -c)" \
    "$(tar cf - -C "$ws" . | zstd -1 -q | wc -c)" "$nlogs" "$lb" \
    "$(tar cf - -C "$ref" . | gzip | wc -c)" "$(tar cf - -C "$ref" . | zstd -q | wc -c)" >>"$work/sizes.tsv"
}
: > "$work/sizes.tsv"

results=$work/results.tsv
: > "$results"
mlt_logs=$HOME/.mltk/models/bench_model   # where `train` pulls the remote log dir

# seconds_of LOG PATTERN: the "in X s" of mlt's last line matching PATTERN in LOG, or "-"
# (nothing moved, or a minute or more, which mlt prints as 1m05s).
seconds_of() {
  python3 - "$1" "$2" <<'PY'
import re, sys
hits = [l for l in open(sys.argv[1], errors="replace") if sys.argv[2] in l]
m = re.search(r" in (\d+(?:\.\d+)?) s,", hits[-1]) if hits else None
print(m.group(1) if m else "-")
PY
}

for link in "${links[@]}"; do
  rtt=${link%%/*}
  mbit=0
  [ "$rtt" = "$link" ] || mbit=${link#*/}
  sz=$size
  if [ "$sz" = auto ]; then if [ "$mbit" = 0 ]; then sz=full; else sz=small; fi; fi
  start_relay "$rtt" "$mbit"
  for kind in random text; do
    prepare "$kind" "$sz"
    ws=$work/ws-$kind-$sz
    nlogs=$( [ "$sz" = small ] && echo 300 || echo 2000)
    for rep in $(seq 1 "$reps"); do
      for comp in none gzip zstd; do
        remote=$work/remote/$comp
        remote_logs=$work/remote/$comp-logs
        log=$work/mlt-${link//\//@}-$kind-$comp-$rep.log
        rm -rf "$remote" "$remote_logs" "$mlt_logs"
        cat > "$proj/bench_model.ssh.yaml" <<YAML
ssh:
  train_cmd: "python3 train.py $kind {log_dir} $nlogs"
  remote_log_dir: "$remote_logs"
  compression: $comp
YAML
        row=()
        for pass in cold warm; do
          echo "== $pass" >>"$log"
          t=$(cd "$proj" && timed "$log" "$mlt" ssh -h "$dest_host:$port/$remote" "${mlt_opts[@]}" \
                train bench_model --workspace "$ws")
          sed -n '/^== '"$pass"'$/,$p' "$log" > "$work/pass.log"
          row+=("$t" "$(seconds_of "$work/pass.log" "mlt: uploaded")" "$(seconds_of "$work/pass.log" "mlt: logs:")")
        done
        w=$(manifest "$remote" "$ws")
        l=$(manifest "$mlt_logs" "$work/ref-$kind-$sz")
        if [ "$w" = "${want_ws[$kind-$sz]}" ] && [ "$l" = "${want_logs[$kind-$sz]}" ]; then ok=ok
        else ok="workspace:$w logs:$l"; fi
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$link" "$kind" "$sz" "$comp" "$rep" \
          "${row[@]}" "$ok" >>"$results"
        echo "  $link $kind ($sz) $comp #$rep: cold ${row[0]} s (up ${row[1]}, pull ${row[2]}), warm ${row[3]} s, $ok" >&2
      done
    done
  done
  rm -rf "$work/remote" "$mlt_logs"
done
stop_relay

# --- the tables ------------------------------------------------------------------------------
echo
echo "loopback sshd behind mlt_delay_relay; link = RTT ms[/cap Mbit/s per direction]; best of $reps"
python3 - "$work/sizes.tsv" <<'PY'
import sys
mb = lambda b: f"{int(b) / 1e6:.1f}"
x = lambda a, b: f"{int(a) / int(b):.1f}x"
print("| workspace | size | up: tar MB | gzip -1 | zstd -1 | log dir: tar MB | gzip -6 | zstd -3 |")
print("|-----------|------|------------|---------|---------|-----------------|---------|---------|")
for l in open(sys.argv[1]):
    k, sz, nf, wb, wg, wz, nl, lb, lg, lz = l.rstrip("\n").split("\t")
    print(f"| {k} | {sz} | {mb(wb)} ({nf}) | {mb(wg)} ({x(wb, wg)}) | {mb(wz)} ({x(wb, wz)}) | "
          f"{mb(lb)} ({nl}) | {mb(lg)} ({x(lb, lg)}) | {mb(lz)} ({x(lb, lz)}) |")
PY
echo
python3 - "$results" <<'PY'
import sys
from collections import OrderedDict
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
def num(v):
    try: return float(v)
    except ValueError: return None
groups = OrderedDict()
for link, kind, sz, comp, rep, cold, up, pull, warm, wup, wpull, ok in rows:
    groups.setdefault((link, kind, sz, comp), []).append((cold, up, pull, warm, ok))
best = {}
for k, runs in groups.items():
    colds = [num(r[0]) for r in runs if num(r[0]) is not None]
    best[k] = min(colds) if colds else None
print("| link | workspace | compression | cold s | cold range | upload s | pull s | warm s | cold/none | end state |")
print("|------|-----------|-------------|--------|------------|----------|--------|--------|-----------|-----------|")
for (link, kind, sz, comp), runs in groups.items():
    ok = "ok" if all(r[4] == "ok" for r in runs) else next(r[4] for r in runs if r[4] != "ok")
    b = best[(link, kind, sz, comp)]
    fastest = min(runs, key=lambda r: num(r[0]) if num(r[0]) is not None else float("inf"))
    colds = [num(r[0]) for r in runs if num(r[0]) is not None]
    rng = f"{min(colds):.2f}-{max(colds):.2f}" if len(colds) > 1 else "-"
    warms = [num(r[3]) for r in runs if num(r[3]) is not None]
    base = best.get((link, kind, sz, "none"))
    rel = f"{b / base:.2f}" if b and base else "-"
    print(f"| {link} | {kind} ({sz}) | {comp} | {b if b is None else format(b, '.2f')} | {rng} | "
          f"{fastest[1]} | {fastest[2]} | {format(min(warms), '.2f') if warms else '-'} | {rel} | {ok} |")
PY
echo "(cold s: fastest cold run; upload s / pull s: mlt's own figures in that run; warm s: fastest warm run)"
if awk -F'\t' '$12 != "ok"' "$results" | grep -q .; then
  echo "some runs failed or differ; logs kept with --keep" >&2; exit 1
fi
