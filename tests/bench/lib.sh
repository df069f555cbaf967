# Shared by the benchmarks in tests/bench (sourced, not run). Sets up a throwaway sshd on
# 127.0.0.1 behind an optional latency relay, a temp dir removed on exit, and the helpers
# the scripts time and check things with.
#
#   . "$(dirname "$0")/lib.sh"
#   bench_init TOOL...          # checks the tools, builds build/src/mlt if needed
#   bench_start KEEP            # temp dir $work, HOME, key, sshd, traps; KEEP=1 keeps $work
#   start_relay RTT             # sets $port ("direct": sshd itself), $ssh_cmd, $dest_host
#   timed LOG CMD...            # prints "SECONDS" (or ">T", "FAIL(rc)")
#   timed_rss LOG CMD...        # prints "SECONDS PEAK_RSS_KB"
#   manifest DIR [REF]          # sha256 over REF's file list (default DIR), read from DIR
#   gen_tree DIR NFILES BIGMB   # NFILES of 1-64 KiB in nested dirs + big.bin, fixed seed
#
# Environment: MLT (binary, default build/src/mlt), BENCH_TIMEOUT (s per command, default 600).
# shellcheck shell=bash

bench_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
bench_here=$bench_root/tests/bench
mlt=${MLT:-$bench_root/build/src/mlt}
tmo=${BENCH_TIMEOUT:-600}
work='' relay_pid='' port='' ssh_cmd='' dest_host='' bench_keep=0

bench_init() {
  local t
  for t in ssh ssh-keygen timeout python3 "$@"; do
    command -v "$t" >/dev/null || { echo "missing $t (scripts/install-deps.sh)" >&2; exit 1; }
  done
  if [ ! -x "$mlt" ]; then
    echo "building $mlt ..." >&2
    timeout 1200 cmake --build "$bench_root/build" --target mlt >/dev/null
  fi
  # shellcheck source=../../scripts/lib/loopback-sshd.sh
  . "$bench_root/scripts/lib/loopback-sshd.sh"
}

stop_relay() {
  if [ -n "$relay_pid" ]; then
    kill "$relay_pid" 2>/dev/null || true
    wait "$relay_pid" 2>/dev/null || true
    relay_pid=
  fi
}

bench_cleanup() {
  stop_relay
  stop_loopback_sshd
  [ -n "$work" ] || return 0
  if [ "$bench_keep" = 1 ]; then echo "bench files kept in $work" >&2; else rm -rf "$work"; fi
}

# bench_start KEEP: the temp dir, a private HOME for mlt, a client key and a loopback sshd.
bench_start() {
  bench_keep=$1
  work=$(mktemp -d "${TMPDIR:-/tmp}/mlt-bench.XXXXXX")
  trap bench_cleanup EXIT
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
  ssh_opts=(-F /dev/null -i "$key" -o UserKnownHostsFile="$known" -o StrictHostKeyChecking=accept-new
            -o BatchMode=yes -o LogLevel=ERROR)
  # shellcheck disable=SC2034  # used by the scripts that source this file
  mlt_opts=(-i "$key" -o UserKnownHostsFile="$known" -o StrictHostKeyChecking=accept-new)
}

# start_relay RTT: a latency relay in front of sshd ("direct": none). Sets port, ssh_cmd
# (one string, for rsync -e and word splitting) and dest_host; connects once, untimed, so
# that known_hosts and sshd are warm before anything is measured.
start_relay() {
  local rtt=$1 rfd ready
  stop_relay
  if [ "$rtt" = direct ]; then
    port=$SSHD_PORT
  else
    exec {rfd}< <(exec timeout $((tmo * 50)) python3 "$bench_here/latency_relay.py" --listen 0 \
                    --target "$SSHD_PORT" --rtt-ms "$rtt" 2>>"$work/relay-$rtt.log")
    relay_pid=$!
    read -r -t 10 ready port <&"$rfd" || { echo "relay did not start" >&2; exit 1; }
    [ "$ready" = ready ] || { echo "relay: unexpected '$ready'" >&2; exit 1; }
  fi
  echo "rtt ${rtt}: 127.0.0.1:$port -> sshd 127.0.0.1:$SSHD_PORT" >&2
  ssh_cmd="ssh -p $port ${ssh_opts[*]}"
  dest_host=$user@127.0.0.1
  # shellcheck disable=SC2086  # ssh_cmd is split on purpose, as rsync -e does
  timeout "$tmo" $ssh_cmd "$dest_host" true
}

now() { date +%s.%N; }

# timed LOG CMD...: runs CMD under timeout (output appended to LOG) and prints the elapsed
# seconds, ">T" when it timed out or "FAIL(rc)".
timed() {
  local log=$1; shift
  local t0 t1 rc=0
  t0=$(now)
  timeout "$tmo" "$@" >>"$log" 2>&1 || rc=$?
  t1=$(now)
  case $rc in
    0) python3 -c "print(f'{$t1-$t0:.2f}')" ;;
    124) echo ">$tmo" ;;
    *) echo "FAIL($rc)" ;;
  esac
}

# The peak RSS of a command and its descendants (the largest single process, in KiB):
# GNU time if installed, else getrusage(RUSAGE_CHILDREN) from Python.
if [ -x /usr/bin/time ]; then
  rss_prefix=(/usr/bin/time -q -f %M -o)
else
  rss_prefix=(python3 -c 'import resource, subprocess, sys
rc = subprocess.call(sys.argv[2:])
open(sys.argv[1], "w").write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
sys.exit(rc if rc >= 0 else 128 - rc)')
fi

# timed_rss LOG CMD...: as timed, and prints the peak RSS in KiB after the seconds ("-" when
# unknown).
timed_rss() {
  local log=$1; shift
  local out=$work/rss.$$ t
  rm -f "$out"
  t=$(timed "$log" "${rss_prefix[@]}" "$out" "$@")
  echo "$t $( [ -s "$out" ] && tail -n 1 "$out" || echo -)"
}

# manifest DIR [REF]: one short sha256 over "path sha256" of every file listed under REF
# (default DIR), read from DIR, in sorted order; "missing:N" if N of them are absent. Extra
# files in DIR are ignored, so the remote dir (which also holds mlt's .mlt/ and the spec) can
# be checked against the local tree it was filled from.
manifest() {
  python3 - "$1" "${2:-$1}" <<'PY'
import hashlib, os, sys
d, ref = sys.argv[1], sys.argv[2]
names = sorted(os.path.relpath(os.path.join(r, f), ref)
               for r, _, fs in os.walk(ref) for f in fs)
total, missing = hashlib.sha256(), 0
for n in names:
    try:
        with open(os.path.join(d, n), "rb") as f:
            h = hashlib.sha256()
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
    except FileNotFoundError:
        missing += 1
        continue
    total.update(f"{n} {h.hexdigest()}\n".encode())
print(f"missing:{missing}" if missing else total.hexdigest()[:16])
PY
}

# gen_tree DIR NFILES BIGMB: NFILES random files of 1-64 KiB in d*/s*/t* dirs plus big.bin of
# BIGMB MiB (none if 0), random content with a fixed seed.
gen_tree() {
  python3 - "$@" <<'PY'
import os, random, sys
ws, n, big = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(42)
for i in range(n):
    d = os.path.join(ws, f"d{i % 10}", f"s{(i // 10) % 10}", f"t{(i // 100) % 5}")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, f"f{i:05d}.bin"), "wb") as f:
        f.write(rng.randbytes(rng.randint(1024, 64 * 1024)))
if big:
    with open(os.path.join(ws, "big.bin"), "wb") as f:
        for _ in range(big):
            f.write(rng.randbytes(1 << 20))
PY
}

# ratio A B: A/B with two decimals, "-" if either is not a number.
ratio() {
  python3 -c 'import sys
try: print(f"{float(sys.argv[1]) / float(sys.argv[2]):.2f}")
except (ValueError, ZeroDivisionError): print("-")' "$1" "$2"
}
