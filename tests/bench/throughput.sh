#!/usr/bin/env bash
# Throughput and memory of one large file through a throwaway sshd on 127.0.0.1 (optionally
# behind mlt_delay_relay), up and down, mlt against plain ssh:
#   up:   ssh host 'cat > /dev/null' < big     ssh host 'cat > FILE' < big
#         ssh -c aes128-gcm@openssh.com host 'cat > /dev/null' < big   (mlt's cipher on AES CPUs)
#         mlt ssh ... train bench_big   (upload_files: [big.bin], train_cmd: true)
#   down: ssh host 'cat big' > /dev/null       ssh host 'cat big' > FILE
#         ssh -c aes128-gcm@openssh.com host 'cat big' > /dev/null
#         mlt ssh ... download bench_big  with big.bin in the remote log dir (tar stream)
#         mlt ssh ... download bench_big  with big.bin as the archive bench_big.mltk.zip
#         (cat, then checked against the remote sha256 as after a training)
# mlt's times include a whole train / download flow (connection, job, round trips), so the
# same runs with a 1 KiB file are timed too; "net" MB/s subtracts that overhead. Every mlt
# copy is compared with the original (cmp). Peak RSS is the largest process of each command
# (GNU time's %M, or getrusage from Python). MB = 10^6 bytes.
#
#   tests/bench/throughput.sh [--size-mb N] [--reps N] [--rtt-ms N ...] [--rate-mbit N]
#                             [--compression C] [--keep]
#
# Defaults: 1024 MiB of AES-CTR keystream (incompressible, fixed key), 3 repetitions (the
# fastest counts), RTT "direct" (no relay) and 50 ms (0 and 50 with --rate-mbit N, which caps
# each direction in the relay at N Mbit/s). --compression none|gzip|zstd: mlt's setting for
# its tar streams (default: mlt's default). Temp dir removed on exit (--keep keeps it).
# Environment: MLT (default build/src/mlt), BENCH_TIMEOUT (s per command, 600).
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

rtts=() size_mb=1024 reps=3 keep=0
while [ $# -gt 0 ]; do
  common_option "$@"
  if [ "$opt_words" -gt 0 ]; then shift "$opt_words"; continue; fi
  case $1 in
    --size-mb) size_mb=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
if [ ${#rtts[@]} -eq 0 ]; then
  if [ "$rate_mbit" = 0 ]; then rtts=(direct 50); else rtts=(0 50); fi
fi

bench_init cmp
bench_start "$keep"

# --- the files and the two models --------------------------------------------------------------
big_file_project "$size_mb" throughput
mkdir -p "$work/local"
big_sha=$(python3 -c 'import hashlib, sys
h = hashlib.sha256()
with open(sys.argv[1], "rb") as f:
    for c in iter(lambda: f.read(1 << 20), b""): h.update(c)
print(h.hexdigest())' "$big")

results=$work/results.tsv
: > "$results"
# record RTT DIRECTION METHOD "SECONDS RSS_KB" VERIFIED
record() {
  local secs rss
  read -r secs rss <<<"$4"
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$secs" "$rss" "$5" >>"$results"
  echo "  $2 $3: $secs s, peak RSS ${rss} KiB, $5" >&2
}

for rtt in "${rtts[@]}"; do
  start_relay "$rtt"
  log=$work/run-$rtt.log
  for rep in $(seq 1 "$reps"); do
    echo "rep $rep/$reps" >&2
    r=$work/remote/$rtt-$rep
    mkdir -p "$r"
    mlt_host=$dest_host:$port/$r
    # shellcheck disable=SC2016  # $1.. belong to the inner bash
    {
      # -- up ----------------------------------------------------------------------------------
      record "$rtt" up "ssh > /dev/null" \
        "$(timed_rss "$log" bash -c '$1 "$2" "cat > /dev/null" < "$3"' _ "$ssh_cmd" "$dest_host" "$big")" -
      record "$rtt" up "ssh > file" \
        "$(timed_rss "$log" bash -c '$1 "$2" "cat > $3" < "$4"' _ "$ssh_cmd" "$dest_host" "$r/ssh.bin" "$big")" \
        "$(same_file "$r/ssh.bin" "$big")"
      rm -f "$r/ssh.bin"
      record "$rtt" up "ssh aes-gcm > /dev/null" \
        "$(timed_rss "$log" bash -c '$1 -c aes128-gcm@openssh.com "$2" "cat > /dev/null" < "$3"' _ "$ssh_cmd" "$dest_host" "$big")" -
      t=$(cd "$proj" && timed_rss "$log" "$mlt" ssh -h "$mlt_host/big" "${mlt_opts[@]}" train bench_big)
      record "$rtt" up "mlt train" "$t" "$(same_file "$r/big/big.bin" "$big")"
      t=$(cd "$proj" && timed_rss "$log" "$mlt" ssh -h "$mlt_host/tiny" "${mlt_opts[@]}" train bench_tiny)
      record "$rtt" up "mlt train, 1 KiB" "$t" "$(same_file "$r/tiny/tiny.bin" "$proj/tiny.bin")"

      # -- down --------------------------------------------------------------------------------
      record "$rtt" down "ssh > /dev/null" \
        "$(timed_rss "$log" bash -c '$1 "$2" "cat $3" > /dev/null' _ "$ssh_cmd" "$dest_host" "$big")" -
      record "$rtt" down "ssh > file" \
        "$(timed_rss "$log" bash -c '$1 "$2" "cat $3" > "$4"' _ "$ssh_cmd" "$dest_host" "$big" "$work/local/ssh.bin")" \
        "$(same_file "$work/local/ssh.bin" "$big")"
      rm -f "$work/local/ssh.bin"
      record "$rtt" down "ssh aes-gcm > /dev/null" \
        "$(timed_rss "$log" bash -c '$1 -c aes128-gcm@openssh.com "$2" "cat $3" > /dev/null' _ "$ssh_cmd" "$dest_host" "$big")" -
      # The uploaded copy goes into the remote log dir; the local one starts empty.
      mkdir -p "$r/big/logs" && mv "$r/big/big.bin" "$r/big/logs/big.bin"
      rm -rf "$HOME/.mltk/models/bench_big"
      t=$(cd "$proj" && timed_rss "$log" "$mlt" ssh -h "$mlt_host/big" "${mlt_opts[@]}" download bench_big)
      record "$rtt" down "mlt download (log dir)" "$t" "$(same_file "$HOME/.mltk/models/bench_big/big.bin" "$big")"
      rm -rf "$HOME/.mltk/models/bench_big"
      # Then as the archive, with the sha256 a finished job leaves for mlt to check.
      mv "$r/big/logs/big.bin" "$r/big/bench_big.mltk.zip"
      echo "$big_sha" > "$r/big/.mlt/bench_big/sha256"
      t=$(cd "$proj" && timed_rss "$log" "$mlt" ssh -h "$mlt_host/big" "${mlt_opts[@]}" download bench_big)
      record "$rtt" down "mlt download (archive)" "$t" "$(same_file "$proj/bench_big.mltk.zip" "$big")"
      # (No row without the sha256 file: an archive its run recorded no sha256 for is no
      # archive of that run, and mlt leaves it where it is.)
      rm -f "$proj/bench_big.mltk.zip" "$r/big/.mlt/bench_big/sha256"
      mkdir -p "$r/tiny/logs" && mv "$r/tiny/tiny.bin" "$r/tiny/logs/tiny.bin"
      rm -rf "$HOME/.mltk/models/bench_tiny"
      t=$(cd "$proj" && timed_rss "$log" "$mlt" ssh -h "$mlt_host/tiny" "${mlt_opts[@]}" download bench_tiny)
      record "$rtt" down "mlt download, 1 KiB" "$t" "$(same_file "$HOME/.mltk/models/bench_tiny/tiny.bin" "$proj/tiny.bin")"
    }
    rm -rf "$r" "$HOME/.mltk/models"
  done
done
stop_relay

# --- the table ---------------------------------------------------------------------------------
echo
echo "one file of $bytes bytes; loopback sshd$( [ "${rtts[*]}" = direct ] || echo ", mlt_delay_relay for RTT > direct")$( [ "$rate_mbit" = 0 ] || echo ", capped at $rate_mbit Mbit/s"); mlt compression: ${compression:-default}; best of $reps"
python3 - "$results" "$bytes" <<'PY'
import sys
from collections import OrderedDict
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
size = int(sys.argv[2])
best, rss, ok = OrderedDict(), {}, {}
for rtt, d, m, secs, kb, verified in rows:
    k = (rtt, d, m)
    try:
        s = float(secs)
    except ValueError:
        s = float("inf")
    best[k] = min(best.get(k, float("inf")), s)
    try:
        rss[k] = max(rss.get(k, 0), int(kb))
    except ValueError:
        pass
    if verified != "-":
        ok[k] = ok.get(k, "ok") if verified == "ok" else "DIFFERS"
def mbs(s): return size / s / 1e6 if 0 < s < float("inf") else None
def f(v, fmt): return "-" if v is None else format(v, fmt)
print("| rtt ms | dir  | method                      | best s | MB/s  | net MB/s | mlt/ssh null | mlt/ssh file | net/ssh file | mlt/aes null | peak RSS MiB | copy |")
print("|--------|------|-----------------------------|--------|-------|----------|--------------|--------------|--------------|--------------|--------------|------|")
for (rtt, d, m), s in best.items():
    rate = mbs(s)
    net = r_null = r_file = r_net = r_aes = None
    if m.startswith("mlt") and "1 KiB" not in m:
        tiny = best.get((rtt, d, "mlt train, 1 KiB" if d == "up" else "mlt download, 1 KiB"))
        if tiny is not None and s > tiny:
            net = mbs(s - tiny)
        null, file = mbs(best.get((rtt, d, "ssh > /dev/null"), 0)), mbs(best.get((rtt, d, "ssh > file"), 0))
        if rate and null: r_null = rate / null
        if rate and file: r_file = rate / file
        if net and file: r_net = net / file
        aes = mbs(best.get((rtt, d, "ssh aes-gcm > /dev/null"), 0))
        if rate and aes: r_aes = rate / aes
    if "1 KiB" in m:
        rate = None
    kb = rss.get((rtt, d, m))
    print(f"| {rtt:>6} | {d:4} | {m:27} | {f(s if s < float('inf') else None, '6.2f'):>6} | "
          f"{f(rate, '5.0f'):>5} | {f(net, '8.0f'):>8} | {f(r_null, '12.2f'):>12} | {f(r_file, '12.2f'):>12} | {f(r_net, '12.2f'):>12} | {f(r_aes, '12.2f'):>12} | "
          f"{f(kb / 1024 if kb else None, '12.1f'):>12} | {ok.get((rtt, d, m), '-')} |")
PY
echo "(1 KiB rows: the fixed cost of the same mlt flow; net MB/s = size / (time - that cost);"
echo " mlt/ssh: gross MB/s, the whole mlt command against one ssh cat; net/ssh file: net MB/s against ssh > file;"
echo " mlt/aes null: against ssh -c aes128-gcm@openssh.com cat > /dev/null, the cipher mlt prefers on CPUs with AES)"
if awk -F'\t' '$6 != "ok" && $6 != "-"' "$results" | grep -q .; then
  echo "some copies differ or failed; logs kept with --keep" >&2; exit 1
fi
