#!/usr/bin/env bash
# Transfer benchmark: uploads one generated workspace through a throwaway sshd on 127.0.0.1
# (behind tests/bench/latency_relay.py, which adds RTT) with rsync, scp, sftp, tar|ssh and
# `mlt ssh train` (upload_files), cold (empty remote dir) and warm (same upload again),
# checks every remote copy against the local one, and prints a table.
#
#   tests/bench/run_bench.sh [--rtt-ms N ...] [--small] [--keep]
#
# Defaults: RTTs 0 and 50 ms; 2,000 files of 1-64 KiB in nested dirs + one 50 MB file.
# --rtt-ms direct: no relay at all. --small: 300 files + 5 MB. Everything lives in a temp dir removed on exit (--keep keeps it).
# Environment: MLT (binary, default build/src/mlt), BENCH_TIMEOUT (s per command, default 600).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
here=$root/tests/bench
mlt=${MLT:-$root/build/src/mlt}
tmo=${BENCH_TIMEOUT:-600}

rtts=() small=0 keep=0
while [ $# -gt 0 ]; do
  case $1 in
    --rtt-ms) rtts+=("$2"); shift 2 ;;
    --rtt-ms=*) rtts+=("${1#*=}"); shift ;;
    --small) small=1; shift ;;
    --keep) keep=1; shift ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
[ ${#rtts[@]} -gt 0 ] || rtts=(0 50)
if [ "$small" = 1 ]; then nfiles=300 bigmb=5; else nfiles=2000 bigmb=50; fi

for t in rsync scp sftp ssh ssh-keygen tar timeout python3; do
  command -v "$t" >/dev/null || { echo "missing $t (apt-get install -y rsync openssh-client)" >&2; exit 1; }
done
if [ ! -x "$mlt" ]; then
  timeout 1200 cmake --build "$root/build" --target mlt >/dev/null
fi
. "$root/scripts/lib/loopback-sshd.sh"

work=$(mktemp -d "${TMPDIR:-/tmp}/mlt-bench.XXXXXX")
relay_pid=
stop_relay() {
  if [ -n "$relay_pid" ]; then
    kill "$relay_pid" 2>/dev/null || true
    wait "$relay_pid" 2>/dev/null || true
    relay_pid=
  fi
}
cleanup() {
  stop_relay
  stop_loopback_sshd
  if [ "$keep" = 1 ]; then echo "bench files kept in $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

export HOME=$work/home
mkdir -p "$HOME/.mltk" "$work/remote"
unset SSH_AUTH_SOCK MLTK_USER_SETTINGS_PATH MLTK_CACHE_DIR
user=$(id -un)
key=$work/key
known=$work/known_hosts
ssh-keygen -q -t ed25519 -N '' -C mlt-bench -f "$key"
cp "$key.pub" "$work/authorized_keys"
start_loopback_sshd "$work" "$work/authorized_keys"
cat > "$HOME/.mltk/user_settings.yaml" <<YAML
ssh:
  remote_log_dir: "$work/remote-logs/{model}"
YAML

# --- the workspace, next to a trivial model spec -------------------------------------------
proj=$work/project
ws=$proj/workspace
mkdir -p "$ws"
echo "generating workspace: $nfiles files of 1-64 KiB + ${bigmb} MB ..." >&2
python3 - "$ws" "$nfiles" "$bigmb" <<'PY'
import os, random, sys
ws, n, big = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(42)
for i in range(n):
    d = os.path.join(ws, f"d{i % 10}", f"s{(i // 10) % 10}", f"t{(i // 100) % 5}")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, f"f{i:05d}.bin"), "wb") as f:
        f.write(rng.randbytes(rng.randint(1024, 64 * 1024)))
with open(os.path.join(ws, "big.bin"), "wb") as f:
    for _ in range(big):
        f.write(rng.randbytes(1 << 20))
PY
echo '# trivial model for the transfer benchmark' > "$proj/bench_model.py"
cat > "$proj/bench_model.ssh.yaml" <<'YAML'
ssh:
  upload_files: ["workspace/**"]
  train_cmd: "true"
YAML
manifest() { (cd "$1" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16); }
want=$(manifest "$ws")
total_bytes=$(du -sb "$ws" | cut -f1)
nlocal=$(find "$ws" -type f | wc -l)
echo "workspace: $nlocal files, $total_bytes bytes, manifest $want" >&2

# --- one timed command ---------------------------------------------------------------------
now() { date +%s.%N; }
# timed LOGFILE CMD...: runs CMD under timeout, prints the elapsed seconds (or FAIL).
timed() {
  local log=$1; shift
  local t0 t1
  t0=$(now)
  local rc=0
  timeout "$tmo" "$@" >>"$log" 2>&1 || rc=$?
  t1=$(now)
  case $rc in
    0) python3 -c "print(f'{$t1-$t0:.2f}')" ;;
    124) echo ">$tmo" ;;   # timed out
    *) echo "FAIL($rc)" ;;
  esac
}

results=$work/results.tsv
: > "$results"
ssh_opts=(-F /dev/null -i "$key" -o UserKnownHostsFile="$known" -o StrictHostKeyChecking=accept-new
          -o BatchMode=yes -o LogLevel=ERROR)

for rtt in "${rtts[@]}"; do
  stop_relay
  if [ "$rtt" = direct ]; then  # no relay: shows the relay's own overhead against rtt 0
    port=$SSHD_PORT
  else
  exec {rfd}< <(exec timeout $((tmo * 20)) python3 "$here/latency_relay.py" --listen 0 \
                  --target "$SSHD_PORT" --rtt-ms "$rtt" 2>>"$work/relay-$rtt.log")
  relay_pid=$!
  read -r -t 10 ready port <&"$rfd" || { echo "relay did not start" >&2; exit 1; }
  [ "$ready" = ready ] || { echo "relay: unexpected '$ready'" >&2; exit 1; }
  fi
  echo "rtt ${rtt}: relay 127.0.0.1:$port -> sshd 127.0.0.1:$SSHD_PORT" >&2
  ssh_cmd="ssh -p $port ${ssh_opts[*]}"
  dest_host=$user@127.0.0.1

  for tool in rsync scp sftp tar mlt; do
    dest=$work/remote/$tool-$rtt
    log=$work/$tool-$rtt.log
    mkdir -p "$dest"
    times=()
    for pass in cold warm; do
      echo "== $pass" >>"$log"
      case $tool in
        rsync)
          t=$(timed "$log" rsync -a -e "$ssh_cmd" "$ws/" "$dest_host:$dest/workspace/") ;;
        scp)
          t=$(timed "$log" scp -q -r -P "$port" "${ssh_opts[@]}" "$ws" "$dest_host:$dest/") ;;
        sftp)
          printf 'lcd %s\ncd %s\nput -r workspace\n' "$proj" "$dest" > "$work/sftp.batch"
          t=$(timed "$log" sftp -q -b "$work/sftp.batch" -P "$port" "${ssh_opts[@]}" "$dest_host") ;;
        tar)
          t=$(timed "$log" bash -c 'tar cf - -C "$1" workspace | '"$ssh_cmd"' "$2" "tar xf - -C $3"' \
                _ "$proj" "$dest_host" "$dest") ;;
        mlt)
          t=$(cd "$proj" && timed "$log" "$mlt" ssh -h "$dest_host:$port/$dest" -i "$key" \
                -o UserKnownHostsFile="$known" -o StrictHostKeyChecking=accept-new \
                train bench_model --force) ;;
      esac
      times+=("$t")
    done
    got=$( [ -d "$dest/workspace" ] && manifest "$dest/workspace" || echo missing)
    if [ "$got" = "$want" ]; then ok=ok
    elif [ "${times[1]#>}" != "${times[1]}" ]; then ok=timeout
    else ok="MISMATCH($got)"; fi
    printf '%s\t%s\t%s\t%s\t%s\n' "$tool" "$rtt" "${times[0]}" "${times[1]}" "$ok" >> "$results"
    echo "  $tool: cold ${times[0]} s, warm ${times[1]} s, copy $ok" >&2
    rm -rf "$dest"
  done
done
stop_relay

# --- the table -----------------------------------------------------------------------------
echo
echo "workspace: $nlocal files, $total_bytes bytes (loopback sshd behind latency_relay.py)"
python3 - "$results" <<'PY'
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
base = {(r[1], i): r[2 + i] for r in rows if r[0] == "rsync" for i in (0, 1)}
def ratio(v, b):
    try: return f"{float(v) / float(b):.2f}"
    except (ValueError, ZeroDivisionError): return "-"
print(f"| {'tool':5} | {'rtt ms':>6} | {'cold s':>7} | {'warm s':>7} | {'cold/rsync':>10} | {'warm/rsync':>10} | copy |")
print("|-------|--------|---------|---------|------------|------------|------|")
for r in rows:
    tool, rtt, cold, warm, ok = r
    print(f"| {tool:5} | {rtt:>6} | {cold:>7} | {warm:>7} | {ratio(cold, base[(rtt, 0)]):>10} | "
          f"{ratio(warm, base[(rtt, 1)]):>10} | {ok} |")
PY
if grep -qvE $'\t(ok|timeout)$' "$results"; then echo "some copies failed or differ; logs kept with --keep" >&2; exit 1; fi
