# Shared by the benchmarks in tests/bench (sourced, not run). Sets up a throwaway sshd on
# 127.0.0.1 behind an optional delay relay (build/tests/mlt_delay_relay, source in
# tests/tools/delay_relay_main.cpp: a delay line of RTT/2 per direction, optionally paced to
# MBIT Mbit/s as one link shared by all connections), a temp dir removed on exit, and the
# helpers the scripts time and check things with.
#
#   . "$(dirname "$0")/lib.sh"
#   bench_init TOOL...          # checks the tools, builds build/src/mlt and the relay if needed
#   bench_start KEEP            # temp dir $work, HOME, key, sshd, traps; KEEP=1 keeps $work
#   start_second_sshd           # a second sshd (port_b) beside the first (port_a)
#   start_extra_sshd DIR        # one more sshd in DIR (extra_port), stopped on exit too
#   start_relay RTT [MBIT]      # sets $port ("direct": sshd itself), $ssh_cmd, $dest_host;
#                               # MBIT (default $rate_mbit, 0 = unlimited) caps each direction
#   stop_relay                  # stops it (start_relay and the EXIT trap do too)
#   timed LOG CMD...            # prints "SECONDS" (or ">T", "FAIL(rc)")
#   timed_rss LOG CMD...        # prints "SECONDS PEAK_RSS_KB"
#   manifest DIR [REF]          # sha256 over REF's file list (default DIR), read from DIR
#   gen_tree DIR NFILES BIGMB   # NFILES of 1-64 KiB in nested dirs + big.bin, fixed seed
#   gen_text_tree DIR NFILES BIGMB  # the same shape as text (CSV, JSON, Python) + big.csv
#   gen_random_file FILE MIB    # MIB MiB of incompressible bytes, always the same
#   big_file_project MIB WHAT   # $proj with big.bin, tiny.bin and models bench_big, bench_tiny
#   same_file A B               # "ok" when A and B are equal (cmp), else "DIFFERS"
#   need_fault_relay            # sets $relay_tool (build/tests/mlt_fault_relay), built if needed
#   relay_cmd WORDS             # a command to `coproc relay` (mlt_fault_relay); its answer
#   wait_text FILE TEXT         # waits (bounded) until FILE contains TEXT
#   checkpointing_training FILE FIRST  # a shell training that saves and resumes per 1 s epoch
#
#   parse_rate_mbit N           # checks N and sets $rate_mbit (scripts' --rate-mbit N)
#   parse_compression C         # checks C and sets $compression (scripts' --compression C)
#   compression_yaml            # "  compression: C" for a sidecar's ssh: map ("" if unset)
#   login_option ARGS...        # --profile-ms N and --cpus shared|split (sets opt_words)
#   bench_setup_text            # lines for a table's head: the login profile and the pinning
#   profile_reads               # "RC+PROF": ~/.bashrc and ~/.profile reads since the last call
#   remote_owned DIR...         # gives DIRs (not their contents) to the remote user
#
# Environment: MLT (binary, default build/src/mlt), BENCH_TIMEOUT (s per command, default 600),
# MLT_OPTS (more options of `mlt ssh` for every mlt command, given before the subcommand,
# e.g. "-v" or "-vv").
# shellcheck shell=bash

bench_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
mlt=${MLT:-$bench_root/build/src/mlt}
tmo=${BENCH_TIMEOUT:-600}
bench_profile_s=${bench_profile_s:-0}
delay_relay=$bench_root/build/tests/mlt_delay_relay
extra_sshd_pids=() extra_port=''
work='' relay_pid='' relay_in='' relay_out='' port='' ssh_cmd='' dest_host='' bench_keep=0
rate_mbit=0 compression=''
# --profile-ms N (empty: the bench's own account logs in, its profile as it is) and --cpus.
bench_profile_ms='' bench_cpus=shared bench_user='' bench_rhome='' login_cost_text=''

# parse_rate_mbit N: the scripts' --rate-mbit N (a bandwidth cap per direction in the relay).
parse_rate_mbit() {
  [[ $1 =~ ^[0-9]+([.][0-9]+)?$ ]] || { echo "--rate-mbit: not a number: '$1'" >&2; exit 2; }
  rate_mbit=$1
}

# parse_compression C: the scripts' --compression none|gzip|zstd, written into the model's
# sidecar by compression_yaml (unset: mlt's default).
parse_compression() {
  case $1 in none|gzip|zstd) compression=$1 ;; *) echo "--compression: none, gzip or zstd" >&2; exit 2 ;; esac
}
compression_yaml() { [ -z "$compression" ] || echo "  compression: $compression"; }

# common_option ARGS...: the options run_bench.sh, whole_run.sh, throughput.sh and
# bigfile.sh share: --rtt-ms N (appended to the caller's rtts array), --rate-mbit N,
# --compression C (also as --opt=value) and --keep (sets keep=1). Sets opt_words to how many words of ARGS it
# used, 0 when $1 is none of them.
# shellcheck disable=SC2034  # keep and opt_words are read by the calling script
common_option() {
  opt_words=1
  case $1 in
    --rtt-ms) rtts+=("$2"); opt_words=2 ;;
    --rtt-ms=*) rtts+=("${1#*=}") ;;
    --rate-mbit) parse_rate_mbit "$2"; opt_words=2 ;;
    --rate-mbit=*) parse_rate_mbit "${1#*=}" ;;
    --compression) parse_compression "$2"; opt_words=2 ;;
    --compression=*) parse_compression "${1#*=}" ;;
    --keep) keep=1 ;;
    *) opt_words=0 ;;
  esac
}

# login_option ARGS...: --profile-ms N and --cpus shared|split (also as --opt=value), the
# options whole_run.sh and bigfile.sh take to control the remote's login (see bench_start).
# Sets opt_words as common_option does.
# shellcheck disable=SC2034  # opt_words is read by the calling script
login_option() {
  local v=${2:-}
  opt_words=2
  case $1 in
    --profile-ms=*|--cpus=*) v=${1#*=}; opt_words=1 ;;
  esac
  case $1 in
    --profile-ms|--profile-ms=*)
      [[ $v =~ ^[0-9]+$ ]] || { echo "--profile-ms: whole ms" >&2; exit 2; }
      bench_profile_ms=$v ;;
    --cpus|--cpus=*)
      case $v in shared|split) bench_cpus=$v ;; *) echo "--cpus: shared or split" >&2; exit 2 ;; esac ;;
    *) opt_words=0 ;;
  esac
}

bench_init() {
  local t
  for t in ssh ssh-keygen timeout python3 "$@"; do
    command -v "$t" >/dev/null || { echo "missing $t (scripts/install-deps.sh)" >&2; exit 1; }
  done
  if [ ! -x "$mlt" ]; then
    echo "building $mlt ..." >&2
    timeout 1200 cmake --build "$bench_root/build" --target mlt >/dev/null
  fi
  if [ ! -x "$delay_relay" ]; then
    echo "building $delay_relay ..." >&2
    timeout 1200 cmake --build "$bench_root/build" --target mlt_delay_relay >/dev/null
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
  if [ -n "$relay_in" ]; then exec {relay_in}>&-; relay_in=; fi
  if [ -n "$relay_out" ]; then exec {relay_out}<&-; relay_out=; fi
}

bench_cleanup() {
  local p
  stop_relay
  for p in "${extra_sshd_pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  extra_sshd_pids=()
  stop_loopback_sshd
  remove_profile_user
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
  # A `bash --login` (a job's batch) reads BASH_ENV, which the bench's sshd sets: it notes
  # itself in $work/shells.log and sleeps PROFILE_S seconds, as a slow profile (pyenv, conda)
  # would. The shells sshd starts for each session (`bash -c CMD`) read ~/.bashrc instead
  # (bash's sshd rule), which the bench leaves alone: whole_run.sh counts those sessions in
  # sshd's log.
  cat > "$work/bash_env.sh" <<SH
if shopt -q login_shell; then
  echo login >> '$work/shells.log'
  [ '${bench_profile_s:-0}' = 0 ] || sleep '${bench_profile_s:-0}'
fi
SH
  : > "$work/shells.log"
  pin_client
  [ -z "$bench_profile_ms" ] || make_profile_user
  SSHD_EXTRA_CONFIG="SetEnv BASH_ENV=$work/bash_env.sh" start_loopback_sshd "$work" "$work/authorized_keys"
  [ "$bench_cpus" = shared ] || taskset -apc 0 "$SSHD_PID" >/dev/null
  ssh_opts=(-F /dev/null -i "$key" -o UserKnownHostsFile="$known" -o StrictHostKeyChecking=accept-new
            -o BatchMode=yes -o LogLevel=ERROR)
  [ -z "$bench_profile_ms" ] || measure_login
  # shellcheck disable=SC2034  # used by the scripts that source this file
  mlt_opts=(-i "$key" -o UserKnownHostsFile="$known" -o StrictHostKeyChecking=accept-new)
  # MLT_OPTS: more `mlt ssh` options for every mlt command (-v), split at spaces.
  # shellcheck disable=SC2206
  [ -z "${MLT_OPTS:-}" ] || mlt_opts+=($MLT_OPTS)
}

# start_extra_sshd DIR: one more loopback sshd in DIR with the same authorized key (after
# bench_start); sets extra_port, leaves SSHD_PORT and SSHD_PID at A, and is stopped on exit
# (bench_cleanup) as A is.
start_extra_sshd() {
  local port_first=$SSHD_PORT pid_first=$SSHD_PID
  mkdir -p "$1"
  SSHD_EXTRA_CONFIG='' start_loopback_sshd "$1" "$work/authorized_keys"
  extra_port=$SSHD_PORT
  extra_sshd_pids+=("$SSHD_PID")
  SSHD_PORT=$port_first SSHD_PID=$pid_first
}

# start_second_sshd: a second loopback sshd in $work/b (start_extra_sshd); sets port_a and
# port_b.
# shellcheck disable=SC2034  # port_a and port_b are read by the calling script
start_second_sshd() {
  port_a=$SSHD_PORT
  start_extra_sshd "$work/b"
  port_b=$extra_port
}

# start_relay RTT [MBIT]: mlt_delay_relay in front of sshd ("direct": none), RTT ms added
# to every round trip (RTT/2 each way), capped at MBIT Mbit/s per direction (default
# $rate_mbit; 0: unlimited). Sets port, ssh_cmd (one string, for rsync -e and word
# splitting) and dest_host; connects once, untimed, so that known_hosts and sshd are warm
# before anything is measured. The relay logs to $work/relay-RTT.log (at its end, the bytes
# it carried).
start_relay() {
  local rtt=$1 mbit=${2:-$rate_mbit} ready fifo
  stop_relay
  if [ "$rtt" = direct ]; then
    if [ "$mbit" != 0 ]; then echo "a rate cap needs the relay: use --rtt-ms 0, not direct" >&2; exit 2; fi
    port=$SSHD_PORT
  else
    # Its stdin is a FIFO that only this shell (and what it starts later) holds open: the
    # relay also ends on its own when the script is killed without running its EXIT trap.
    fifo=$work/relay.in
    rm -f "$fifo" && mkfifo "$fifo"
    exec {relay_in}<>"$fifo"
    exec {relay_out}< <(exec timeout $((tmo * 50)) "$delay_relay" --target "$SSHD_PORT" \
                          --rtt-ms "$rtt" --rate-mbit "$mbit" \
                          <"$fifo" {relay_in}>&- 2>>"$work/relay-$rtt.log")
    relay_pid=$!
    read -r -t 10 ready port <&"$relay_out" || { echo "relay did not start" >&2; exit 1; }
    [ "$ready" = ready ] || { echo "relay: unexpected '$ready'" >&2; exit 1; }
  fi
  echo "rtt ${rtt}$( [ "$mbit" = 0 ] || echo ", ${mbit} Mbit/s"): 127.0.0.1:$port -> sshd 127.0.0.1:$SSHD_PORT" >&2
  ssh_cmd="ssh -p $port ${ssh_opts[*]}"
  dest_host=$user@127.0.0.1
  # shellcheck disable=SC2086  # ssh_cmd is split on purpose, as rsync -e does
  timeout "$tmo" $ssh_cmd "$dest_host" true
  profile_reads >/dev/null
}

# --- a controlled login profile (--profile-ms) and CPU pinning (--cpus) ----------------------
# With --profile-ms N the remote side is not the bench's own account (root, whose ~/.bashrc
# may run pyenv or conda init: the figures would depend on the machine) but a user created
# for the run, mltb<pid>, with /bin/bash as its shell and its home in $work/rhome, removed
# on exit. Its ~/.bashrc and ~/.profile each burn N ms of CPU (an awk loop calibrated here,
# so it costs CPU, not wall time, as pyenv's or conda's init does) and note each read in
# ~/.profile-reads. Debian's bash reads ~/.bashrc for every command sshd starts (`bash -c
# CMD`, one per exec channel: bash's SSH_SOURCE_BASHRC) and ~/.profile for `bash --login` (a
# job's batch). $work becomes world-readable (0755) so that the user reaches its home, the
# authorized keys, the remote dirs under $work/remote (its own) and the files the scripts
# read from $work/project.
# With --cpus split, sshd (and so everything it starts) runs on CPU 0 and the script, with
# everything it starts (mlt, ssh, rsync, the relay), on CPU 1.

# pin_client: --cpus split puts the script itself (and so all it starts later) on CPU 1.
pin_client() {
  [ "$bench_cpus" = split ] || return 0
  command -v taskset >/dev/null || { echo "--cpus split needs taskset (util-linux)" >&2; exit 1; }
  [ "$(nproc --all)" -ge 2 ] || { echo "--cpus split needs 2 CPUs" >&2; exit 1; }
  taskset -pc 1 $$ >/dev/null
}

# burn_iterations MS: how many turns of the profile's awk loop cost MS ms of CPU here (on
# CPU 0 with --cpus split, where the remote runs), from the CPU time (user + system) of runs
# long enough to measure, the least of 3.
burn_iterations() {
  local pin=()
  [ "$bench_cpus" = shared ] || pin=(taskset -c 0)
  "${pin[@]}" python3 - "$1" <<'PY'
import resource, subprocess, sys
def cpu(n):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(["awk", "-v", f"n={n}", "BEGIN { for (i = 0; i < n; i++) x++ }"], check=True)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime
ms = float(sys.argv[1])
if ms == 0:
    print(0)
    sys.exit()
n = 1 << 18
while cpu(n) < 0.2:
    n *= 2
print(max(1, round(n / min(cpu(n) for _ in range(3)) * ms / 1000)))
PY
}

# make_profile_user: the user, its home and profile, the dirs it owns (see above). Users of
# earlier runs that could not clean up (killed) are recognised by their comment and a home
# that no longer exists, and removed.
make_profile_user() {
  local u home
  command -v useradd >/dev/null || { echo "--profile-ms needs useradd (passwd)" >&2; exit 1; }
  [ "$(id -u)" = 0 ] || { echo "--profile-ms creates a user: run the bench as root" >&2; exit 1; }
  while IFS=: read -r u _ _ _ _ home _; do
    [ -d "$home" ] || userdel "$u" 2>/dev/null || true
  done < <(grep -E '^mltb[0-9]+:[^:]*:[^:]*:[^:]*:mlt bench temporary user:' /etc/passwd || true)
  bench_user=mltb$$ bench_rhome=$work/rhome
  useradd -M -d "$bench_rhome" -s /bin/bash -p '*' -c 'mlt bench temporary user' "$bench_user"
  mkdir -m 0755 "$bench_rhome"
  chmod 0755 "$work"
  local f what
  for f in .bashrc .profile; do
    what=${f#.}
    cat > "$bench_rhome/$f" <<SH
# The mlt bench's login profile (tests/bench/lib.sh): it costs $bench_profile_ms ms of CPU, as the
# init of pyenv or conda would, and notes that it ran.
echo $what >> "\$HOME/.profile-reads"
read -r mlt_bench_n < "\$HOME/.burn-iterations"
awk -v n="\$mlt_bench_n" 'BEGIN { for (i = 0; i < n; i++) x++ }'
unset mlt_bench_n
SH
  done
  echo "calibrating a ${bench_profile_ms} ms profile ..." >&2
  burn_iterations "$bench_profile_ms" > "$bench_rhome/.burn-iterations"
  : > "$bench_rhome/.profile-reads"
  chown -R "$bench_user:" "$bench_rhome" "$work/remote" "$work/shells.log"
  user=$bench_user
}

remove_profile_user() {
  [ -n "$bench_user" ] || return 0
  # sshd is stopped; a session of it that is still ending may hold the user for a moment.
  userdel "$bench_user" 2>/dev/null || { sleep 1; userdel -f "$bench_user" || true; }
  bench_user=
}

# remote_owned DIR...: with --profile-ms, DIRs created by the script (root) for the remote
# side to write in are given to its user (the dirs alone, not what they hold).
remote_owned() {
  [ -z "$bench_user" ] || chown "$bench_user:" "$@"
}

# profile_reads: "RC+PROF", the reads of the profile user's ~/.bashrc and ~/.profile since the
# last call ("-" without --profile-ms). Kept in a file: it also counts in a $(...).
profile_reads() {
  [ -n "$bench_user" ] || { echo -; return; }
  local f=$bench_rhome/.profile-reads
  echo "$(grep -c '^bashrc$' "$f" || true)+$(grep -c '^profile$' "$f" || true)"
  : > "$f"
}

# measure_login: what the profile costs, measured on sshd itself (no relay), median of 5 each:
# `ssh true` (one exec channel: ~/.bashrc) and `ssh 'exec bash --login -c true'` (~/.profile
# on top), with the profile and with its loop set to 0 turns; and the CPU of one loop.
# Sets login_cost_text.
measure_login() {
  local to=(timeout "$tmo" ssh -p "$SSHD_PORT" "${ssh_opts[@]}" "$bench_user@127.0.0.1")
  "${to[@]}" true || { echo "cannot log in as $bench_user (sshd.log in $work)" >&2; exit 1; }
  echo "measuring the login cost ..." >&2
  login_cost_text=$(python3 - "$bench_rhome/.burn-iterations" "${to[@]}" <<'PY'
import resource, statistics, subprocess, sys, time
burn, cmd = sys.argv[1], sys.argv[2:]
n = open(burn).read().strip()
def t(remote):
    xs = []
    for _ in range(5):
        t0 = time.monotonic()
        subprocess.run(cmd + [remote], check=True)
        xs.append(time.monotonic() - t0)
    return statistics.median(xs)
def cpu():
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(["awk", "-v", f"n={n}", "BEGIN { for (i = 0; i < n; i++) x++ }"], check=True)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime
loop_ms = min(cpu() for _ in range(3)) * 1000
login = "exec bash --login -c true"
open(burn, "w").write("0\n")
base, base_login = t("true"), t(login)
open(burn, "w").write(n + "\n")
ex, lg = t("true"), t(login)
print(f"measured (sshd direct, median of 5): exec channel (~/.bashrc) +{(ex - base) * 1000:.0f} ms "
      f"(ssh true {ex:.2f} s, {base:.2f} s without), bash --login (~/.profile) "
      f"+{(lg - ex - (base_login - base)) * 1000:.0f} ms more; the loop alone {loop_ms:.0f} ms CPU")
PY
)
  profile_reads >/dev/null
  : > "$work/shells.log"
}

# bench_setup_text: two lines saying which login profile and which pinning a table was
# measured with.
bench_setup_text() {
  if [ -n "$bench_user" ]; then
    echo "login profile: user $bench_user (bash), ~/.bashrc and ~/.profile each burn $bench_profile_ms ms of CPU (--profile-ms $bench_profile_ms); $login_cost_text"
  else
    echo "login profile: the bench's own account ($(id -un)), as it is (not controlled: --profile-ms N controls it)"
  fi
  if [ "$bench_cpus" = split ]; then
    echo "cpus: split (sshd and all it starts on CPU 0; the script, mlt, ssh, rsync and the relay on CPU 1)"
  else
    echo "cpus: shared (no pinning; $(nproc --all) CPUs)"
  fi
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

# gen_text_tree DIR NFILES BIGMB: the shape of gen_tree in text that compresses about 3.5x
# (gzip -1) to 4x (zstd -1): NFILES of 1-64 KiB, in turn CSV (ids, timestamps, words, floats
# of 3-6 digits), JSON (metric records) and Python (generated functions), plus big.csv of
# BIGMB MiB (none if 0). Fixed seed, so always the same bytes. About 10 MB/s.
gen_text_tree() {
  python3 - "$@" <<'PY'
import json, os, random, sys
ws, n, big = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(42)
WORDS = ["train", "valid", "test", "cat", "dog", "car", "tree", "house", "river", "cloud",
         "red", "green", "blue", "small", "large", "north", "south", "east", "west", "none"]
def csv_text(size, first):
    out, got, i = ["id,timestamp,split,label,score,loss,lr,x0,x1,x2,x3,count\n"], 0, first
    while got < size:
        row = (f"{i},2024-03-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}:{i * 7 % 60:02d},"
               f"{WORDS[i % 3]},{rng.choice(WORDS)},{rng.random():.4f},{rng.gauss(1, 0.3):.4f},"
               f"{1e-3 * 0.99 ** (i // 100):.6f},{rng.randint(0, 255)},{rng.randint(0, 255)},"
               f"{rng.random():.3f},{rng.random():.3f},{rng.randint(0, 1000)}\n")
        out.append(row)
        got += len(row)
        i += 1
    return "".join(out)[:size]
def json_text(size):
    recs, got = [], 0
    while got < size:
        r = json.dumps({"step": len(recs) * 10, "epoch": len(recs) // 50,
                        "split": rng.choice(WORDS[:3]),
                        "metrics": {"loss": round(rng.gauss(1, 0.3), 4),
                                    "acc": round(rng.random(), 4), "lr": 0.001},
                        "tags": rng.sample(WORDS, 3)})
        recs.append(r)
        got += len(r) + 2
    return ("[\n" + ",\n".join(recs) + "\n]\n")[:size]
def py_text(size, k):
    out, got, j = [f'"""Module {k}, generated for the compression benchmark."""\nimport math\n\n'], 0, 0
    while got < size:
        f = (f"def {rng.choice(WORDS)}_{rng.choice(WORDS)}_{j}(x, scale={rng.randint(1, 9)}.0):\n"
             f'    """Returns the {rng.choice(WORDS)} transform of x."""\n'
             f"    if x < {rng.randint(0, 100)}:\n        return math.sqrt(abs(x)) * scale\n"
             f"    return [v * {rng.random():.3f} for v in range(int(x))]\n\n\n")
        out.append(f)
        got += len(f)
        j += 1
    return "".join(out)[:size]
for i in range(n):
    d = os.path.join(ws, f"d{i % 10}", f"s{(i // 10) % 10}", f"t{(i // 100) % 5}")
    os.makedirs(d, exist_ok=True)
    size = rng.randint(1024, 64 * 1024)
    if i % 3 == 0:
        name, text = f"f{i:05d}.csv", csv_text(size, i * 1000)
    elif i % 3 == 1:
        name, text = f"f{i:05d}.json", json_text(size)
    else:
        name, text = f"f{i:05d}.py", py_text(size, i)
    with open(os.path.join(d, name), "w") as f:
        f.write(text)
if big:
    with open(os.path.join(ws, "big.csv"), "w") as f:
        f.write(csv_text(big << 20, 0))
PY
}

# gen_random_file FILE MIB: MIB MiB of incompressible bytes, always the same: an AES-CTR
# keystream from openssl (fixed key, ~1 GB/s) or, without openssl, Python's random (fixed
# seed, slower).
gen_random_file() {
  local bytes=$(($2 * 1024 * 1024))
  if command -v openssl >/dev/null; then
    { openssl enc -aes-128-ctr -nosalt -pbkdf2 -pass pass:mlt-bench -in /dev/zero 2>/dev/null || true; } |
      head -c "$bytes" > "$1"
  else
    python3 -c 'import random, sys
r = random.Random(42)
with open(sys.argv[1], "wb") as f:
    for _ in range(int(sys.argv[2])): f.write(r.randbytes(1 << 20))' "$1" "$2"
  fi
  [ "$(stat -c %s "$1")" = "$bytes" ] || { echo "could not generate $1" >&2; exit 1; }
}

# big_file_project MIB WHAT: $work/project ($proj) holding big.bin ($big: MIB MiB of
# gen_random_file; $bytes its size), tiny.bin (its first KiB) and two models, bench_big and
# bench_tiny, whose sidecars upload the one file and run a job that does nothing
# (`train_cmd: "true"`), with the log dir `{remote_dir}/logs`. WHAT names the benchmark in
# the spec files.
# shellcheck disable=SC2034  # proj, big and bytes are read by the calling script
big_file_project() {
  proj=$work/project
  big=$proj/big.bin
  bytes=$(($1 * 1024 * 1024))
  mkdir -p "$proj"
  echo "generating $1 MiB ..." >&2
  gen_random_file "$big" "$1"
  head -c 1024 "$big" > "$proj/tiny.bin"
  # remote_log_dir is spelled out from {remote_dir}: at 9f7a2fb a relative one is created by
  # the job (relative to the remote dir) but listed for collection relative to the login dir.
  local m
  for m in big tiny; do
    echo "# $2 benchmark model ($m.bin)" > "$proj/bench_$m.py"
    cat > "$proj/bench_$m.ssh.yaml" <<YAML
ssh:
  upload_files: [$m.bin]
  train_cmd: "true"
  remote_log_dir: "{remote_dir}/logs"
$(compression_yaml)
YAML
  done
}

# same_file A B: "ok" when A and B have the same bytes, else "DIFFERS" (also when one is missing).
same_file() { if cmp -s "$1" "$2"; then echo ok; else echo DIFFERS; fi; }

# ratio A B: A/B with two decimals, "-" if either is not a number.
ratio() {
  python3 -c 'import sys
try: print(f"{float(sys.argv[1]) / float(sys.argv[2]):.2f}")
except (ValueError, ZeroDivisionError): print("-")' "$1" "$2"
}

need_fault_relay() {
  relay_tool=$bench_root/build/tests/mlt_fault_relay
  if [ ! -x "$relay_tool" ]; then
    echo "building $relay_tool ..." >&2
    timeout 1200 cmake --build "$bench_root/build" --target mlt_fault_relay >/dev/null
  fi
}

# relay_cmd WORDS: one command to mlt_fault_relay, started by the caller as `coproc relay`;
# its answer line is returned.
relay_cmd() {
  echo "$*" >&"${relay[1]}"
  local answer
  read -r -t "$tmo" answer <&"${relay[0]}" || { echo "relay: no answer to '$*'" >&2; exit 1; }
  case $answer in ok*) ;; *) echo "relay: '$*': $answer" >&2; exit 1 ;; esac
  echo "$answer"
}

# checkpointing_training FILE FIRST: a shell training (`sh FILE`) of 1 s epochs that writes
# a checkpoint per epoch into $MLT_LOG_DIR (CKPT_MB MiB of random bytes, a line without) and
# resumes after its newest one. It prints "attempt A resumes after epoch N", "epoch I" per
# epoch and "attempt A done" (each after "rank K " on a node of several); attempt 1 trains
# FIRST epochs at most (until it is lost or stopped), a later attempt three more.
checkpointing_training() {
  { echo "first=$2"; cat <<'SH'; } > "$1"
n=0
for f in "$MLT_LOG_DIR"/ckpt-*; do [ -e "$f" ] || continue; k=${f##*ckpt-}; [ "$k" -gt "$n" ] && n=$k; done
who=${MLT_NODE_RANK:+rank $MLT_NODE_RANK }
echo "${who}attempt ${MLT_ATTEMPT:-1} resumes after epoch $n"
last=$first; [ -z "$MLT_ATTEMPT" ] || last=$((n + 3))
i=$((n + 1))
while [ $i -le $last ]; do
  if [ "${CKPT_MB:-0}" -gt 0 ]; then head -c $((CKPT_MB * 1048576)) /dev/urandom; else echo "weights $i"; fi \
    > "$MLT_LOG_DIR/.tmp" && mv "$MLT_LOG_DIR/.tmp" "$MLT_LOG_DIR/ckpt-$i"
  echo "epoch $i"
  sleep 1
  i=$((i + 1))
done
echo "${who}attempt ${MLT_ATTEMPT:-1} done"
SH
}

# wait_text FILE TEXT: waits (bounded) until FILE contains TEXT.
wait_text() {
  local i
  for ((i = 0; i < tmo * 20; i++)); do
    grep -qF -- "$2" "$1" 2>/dev/null && return 0
    sleep 0.05
  done
  echo "timed out waiting for '$2' in $1" >&2
  exit 1
}
