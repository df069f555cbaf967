#!/usr/bin/env bash
# Transfer benchmark: uploads one generated workspace through a throwaway sshd on 127.0.0.1
# (behind mlt_delay_relay, see lib.sh, which adds RTT) with rsync, scp, sftp, tar|ssh and
# `mlt ssh train` (upload_files), cold (empty remote dir) and warm (same upload again),
# checks every remote copy against the local one, and prints a table.
#
#   tests/bench/run_bench.sh [--rtt-ms N ...] [--rate-mbit N] [--compression C] [--small] [--keep]
#
# Defaults: RTTs 0 and 50 ms; 2,000 files of 1-64 KiB in nested dirs + one 50 MB file.
# --rtt-ms direct: no relay at all. --rate-mbit N: the relay caps each direction at N Mbit/s.
# --compression none|gzip|zstd: mlt's setting (default: mlt's default). --small: 300 files
# + 5 MB. Everything lives in a temp dir removed on exit (--keep keeps it).
# Environment: MLT (binary, default build/src/mlt), BENCH_TIMEOUT (s per command, default 600).
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

rtts=() small=0 keep=0
while [ $# -gt 0 ]; do
  common_option "$@"
  if [ "$opt_words" -gt 0 ]; then shift "$opt_words"; continue; fi
  case $1 in
    --small) small=1; shift ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
[ ${#rtts[@]} -gt 0 ] || rtts=(0 50)
if [ "$small" = 1 ]; then nfiles=300 bigmb=5; else nfiles=2000 bigmb=50; fi

bench_init rsync scp sftp tar
bench_start "$keep"
cat > "$HOME/.mltk/user_settings.yaml" <<YAML
ssh:
  remote_log_dir: "$work/remote-logs/{model}"
YAML

# --- the workspace, next to a trivial model spec -------------------------------------------
proj=$work/project
ws=$proj/workspace
mkdir -p "$ws"
echo "generating workspace: $nfiles files of 1-64 KiB + ${bigmb} MB ..." >&2
gen_tree "$ws" "$nfiles" "$bigmb"
echo '# trivial model for the transfer benchmark' > "$proj/bench_model.py"
cat > "$proj/bench_model.ssh.yaml" <<'YAML'
ssh:
  upload_files: ["workspace/**"]
  train_cmd: "true"
YAML
compression_yaml >> "$proj/bench_model.ssh.yaml"
want=$(manifest "$ws")
total_bytes=$(du -sb "$ws" | cut -f1)
nlocal=$(find "$ws" -type f | wc -l)
echo "workspace: $nlocal files, $total_bytes bytes, manifest $want" >&2

results=$work/results.tsv
: > "$results"

for rtt in "${rtts[@]}"; do
  start_relay "$rtt"

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
          # shellcheck disable=SC2016  # $1..$3 belong to the inner bash
          t=$(timed "$log" bash -c 'tar cf - -C "$1" workspace | '"$ssh_cmd"' "$2" "tar xf - -C $3"' \
                _ "$proj" "$dest_host" "$dest") ;;
        mlt)
          t=$(cd "$proj" && timed "$log" "$mlt" ssh -h "$dest_host:$port/$dest" "${mlt_opts[@]}" \
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
echo "workspace: $nlocal files, $total_bytes bytes (loopback sshd behind mlt_delay_relay$( [ "$rate_mbit" = 0 ] || echo ", capped at $rate_mbit Mbit/s"); mlt compression: ${compression:-default})"
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
