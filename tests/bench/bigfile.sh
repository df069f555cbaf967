#!/usr/bin/env bash
# One big incompressible file, up and down, over long fat links (mlt_delay_relay in front of
# a throwaway sshd on 127.0.0.1: RTT 100 and 200 ms, 1000 Mbit/s per direction by default),
# mlt against the tools such files are moved with, side by side in one run:
#   ssh cat     up: ssh host 'cat > FILE' < big          down: ssh host 'cat FILE' > local
#   rsync       rsync --whole-file -e "ssh ..." both ways
#   rclone      rclone copyto with an sftp remote given by environment variables (no config
#               file), --multi-thread-streams 8 down; its sftp upload is one stream
#   lftp        sftp:// through ssh (sftp:connect-program): put up, pget -n 8 down
#   mlt         up: mlt ssh ... train bench_big (upload_files: [big.bin], train_cmd: true);
#               down: that copy moved into the job's remote log dir, mlt ssh ... download
#   mlt, 1 KiB  the same two mlt commands with a 1 KiB file: mlt's fixed cost ("overhead")
#               Each mlt command's peak RSS goes to stderr ("peak RSS N KiB").
# mlt's times are wall times of the whole commands, nothing subtracted. Every copy is
# compared with the original (cmp): a wrong one is reported at once and the script exits 1
# at the end. One table per RTT: seconds, MB/s (10^6 bytes) and % of the link's rate per
# direction, then mlt's MB/s against rsync's, against the better of rclone and lftp, and
# against ssh cat's.
#
#   tests/bench/bigfile.sh [--size-mb N] [--rtt-ms N ...] [--rate-mbit N] [--reps N]
#                          [--direct | --direct-only] [--tools LIST] [--compression C]
#                          [--profile-ms N] [--cpus shared|split] [--keep]
#
# Defaults: 1024 MiB of AES-CTR keystream (incompressible, fixed key), --rtt-ms 100 and 200,
# --rate-mbit 1000 (0: no cap), --reps 1 (with more, the fastest run of each counts).
# --direct adds a table without any relay (sshd itself on loopback, no cap); --direct-only
# runs that table alone (a many-core machine's cipher-bound check). --tools: a
# comma-separated subset of ssh,rsync,rclone,lftp,mlt (mlt includes its 1 KiB runs).
# --compression none|gzip|zstd: mlt's setting (default: mlt's). --keep keeps the temp dir.
# --profile-ms N: the remote is a user created for the run whose ~/.bashrc (read for every
# command sshd starts) and ~/.profile (read by `bash --login`) each burn N ms of CPU; the
# head gives the measured login cost and a column the reads per command (lib.sh).
# --cpus split: sshd and all it starts on CPU 0, the script and the tools on CPU 1.
# Needs rsync, rclone and lftp (scripts/install-deps.sh --bench). Environment: MLT (default
# build/src/mlt), BENCH_TIMEOUT (s per command, default 600).
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

rtts=() size_mb=1024 reps=1 keep=0 direct=0 tools=ssh,rsync,rclone,lftp,mlt
rate_mbit=1000
while [ $# -gt 0 ]; do
  common_option "$@"
  if [ "$opt_words" -gt 0 ]; then shift "$opt_words"; continue; fi
  login_option "$@"
  if [ "$opt_words" -gt 0 ]; then shift "$opt_words"; continue; fi
  case $1 in
    --size-mb) size_mb=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --direct) direct=1; shift ;;
    --direct-only) direct=2; shift ;;
    --tools) tools=$2; shift 2 ;;
    -h|--help) sed -n '2,35p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
[[ $size_mb =~ ^[1-9][0-9]*$ ]] || { echo "--size-mb: a whole number of MiB" >&2; exit 2; }
[[ $reps =~ ^[1-9][0-9]*$ ]] || { echo "--reps: a whole number" >&2; exit 2; }
for t in ${tools//,/ }; do
  case $t in ssh|rsync|rclone|lftp|mlt) ;; *) echo "--tools: unknown tool '$t'" >&2; exit 2 ;; esac
done
for r in "${rtts[@]}"; do
  [[ $r =~ ^[0-9]+$ ]] || { echo "--rtt-ms: whole ms (--direct: no relay)" >&2; exit 2; }
done
[ "$direct" != 2 ] || [ ${#rtts[@]} = 0 ] || { echo "--direct-only: no --rtt-ms" >&2; exit 2; }
[ ${#rtts[@]} -gt 0 ] || [ "$direct" = 2 ] || rtts=(100 200)
[ "$direct" = 0 ] || rtts=(direct "${rtts[@]}")
uses() { [[ ,$tools, == *,$1,* ]]; }

needs=(cmp)
for t in rsync rclone lftp; do uses "$t" && needs+=("$t"); done
bench_init "${needs[@]}"
bench_start "$keep"

# --- the files, the models, the tools' settings --------------------------------------------------
big_file_project "$size_mb" big-file
mkdir -p "$work/local"

# rclone: an on-the-fly sftp remote (":sftp:PATH") from these variables, and an empty config
# file, so nothing is read from or saved to a real HOME. The shell type and the checksum
# commands are given, as a configured remote saves them after its first use (else every run
# probes them). No hash check after each copy: the other tools do not hash either (cmp does).
export RCLONE_CONFIG=$work/rclone.conf RCLONE_SFTP_HOST=127.0.0.1 RCLONE_SFTP_USER=$user \
  RCLONE_SFTP_KEY_FILE=$key RCLONE_SFTP_KNOWN_HOSTS_FILE=$known RCLONE_SFTP_SHELL_TYPE=unix \
  RCLONE_SFTP_MD5SUM_COMMAND=md5sum RCLONE_SFTP_SHA1SUM_COMMAND=sha1sum \
  RCLONE_SFTP_DISABLE_HASHCHECK=true
: > "$RCLONE_CONFIG"
rclone_opts=(--retries 1 -v)
# lftp_script CMD: lftp's commands to run CMD: ssh with the bench's key and known_hosts; no
# retries, so a failure shows as one.
lftp_script() {
  echo "set cmd:fail-exit yes; set net:max-retries 1; set net:timeout 60;
        set sftp:connect-program \"ssh -a -x ${ssh_opts[*]}\";
        open -u $user, sftp://127.0.0.1:$port; $1"
}

results=$work/results.tsv
: > "$results"
failed=0
# check RTT TOOL DIR SECONDS COPY ORIGINAL: records one run (with the profile reads of the
# command, --profile-ms); a copy that differs from the original (or is missing after a run
# that did not fail) is reported at once.
check() {
  local verdict
  case $4 in
    [0-9]*) verdict=$(same_file "$5" "$6") ;;
    *) verdict=failed ;;
  esac
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$verdict" "$(profile_reads)" >>"$results"
  echo "  $2 $3: $4 s, copy $verdict" >&2
  if [ "$verdict" != ok ]; then
    failed=1
    echo "bigfile: $2 $3 at rtt $1: the copy is WRONG or missing ($verdict, $4)" >&2
  fi
  rm -f "$5"
}

# run_tool RTT TOOL: one upload and one download with TOOL; the remote dir is $rdir.
# shellcheck disable=SC2016  # $1.. belong to the inner bash
run_tool() {
  local rtt=$1 tool=$2 up=$rdir/$2.bin down=$work/local/$2.bin t
  case $tool in
    ssh)
      t=$(timed "$log" bash -c '$1 "$2" "cat > $3" < "$4"' _ "$ssh_cmd" "$dest_host" "$(printf %q "$up")" "$big")
      check "$rtt" "ssh cat" up "$t" "$up" "$big"
      t=$(timed "$log" bash -c '$1 "$2" "cat $3" > "$4"' _ "$ssh_cmd" "$dest_host" "$(printf %q "$big")" "$down")
      check "$rtt" "ssh cat" down "$t" "$down" "$big" ;;
    rsync)
      t=$(timed "$log" rsync --whole-file -e "$ssh_cmd" "$big" "$dest_host:$up")
      check "$rtt" rsync up "$t" "$up" "$big"
      t=$(timed "$log" rsync --whole-file -e "$ssh_cmd" "$dest_host:$big" "$down")
      check "$rtt" rsync down "$t" "$down" "$big" ;;
    rclone)
      t=$(RCLONE_SFTP_PORT=$port timed "$log" rclone copyto "${rclone_opts[@]}" "$big" ":sftp:$up")
      check "$rtt" rclone up "$t" "$up" "$big"
      t=$(RCLONE_SFTP_PORT=$port timed "$log" rclone copyto "${rclone_opts[@]}" \
            --multi-thread-streams 8 --multi-thread-cutoff 1M ":sftp:$big" "$down")
      check "$rtt" rclone down "$t" "$down" "$big" ;;
    lftp)
      t=$(timed "$log" lftp -c "$(lftp_script "put $big -o $up")")
      check "$rtt" lftp up "$t" "$up" "$big"
      t=$(timed "$log" lftp -c "$(lftp_script "pget -n 8 $big -o $down")")
      check "$rtt" lftp down "$t" "$down" "$big" ;;
    mlt)
      run_mlt "$rtt" big mlt
      run_mlt "$rtt" tiny "mlt, 1 KiB" ;;
  esac
}

# run_mlt RTT big|tiny NAME: mlt's upload (a train of a job that does nothing) and its
# download of the same file from the job's remote log dir into the local one.
run_mlt() {
  local rtt=$1 m=$2 name=$3 host="$dest_host:$port/$rdir/mlt-$2" t
  local orig=$proj/$m.bin copy=$rdir/mlt-$m/$m.bin
  t=$(cd "$proj" && timed_rss "$log" "$mlt" ssh -h "$host" "${mlt_opts[@]}" train "bench_$m")
  echo "  $name up: peak RSS ${t#* } KiB" >&2
  t=${t% *}
  check "$rtt" "$name" up "$t" "$copy" "$orig"
  # check removed the copy; the log dir gets the original as a hard link (instant, and the
  # original's sha256 is checked again at the end).
  mkdir -p "$rdir/mlt-$m/logs"
  remote_owned "$rdir/mlt-$m" "$rdir/mlt-$m/logs"
  ln "$orig" "$rdir/mlt-$m/logs/$m.bin"
  rm -rf "$HOME/.mltk/models/bench_$m"
  t=$(cd "$proj" && timed_rss "$log" "$mlt" ssh -h "$host" "${mlt_opts[@]}" download "bench_$m")
  echo "  $name down: peak RSS ${t#* } KiB" >&2
  t=${t% *}
  check "$rtt" "$name" down "$t" "$HOME/.mltk/models/bench_$m/$m.bin" "$orig"
  rm -rf "$HOME/.mltk/models/bench_$m"
}

# --- the runs ----------------------------------------------------------------------------------
orig_sha=$(sha256sum "$big" | cut -d' ' -f1)
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for rtt in "${rtts[@]}"; do
  if [ "$rtt" = direct ]; then start_relay direct 0; else start_relay "$rtt"; fi
  log=$work/run-$rtt.log
  for rep in $(seq 1 "$reps"); do
    echo "rtt $rtt, rep $rep/$reps" >&2
    rdir=$work/remote/$rtt-$rep
    mkdir -p "$rdir"
    remote_owned "$rdir"
    for t in ssh rsync rclone lftp mlt; do
      if uses "$t"; then run_tool "$rtt" "$t"; fi
    done
    rm -rf "$rdir"
  done
done
stop_relay
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
[ "$(sha256sum "$big" | cut -d' ' -f1)" = "$orig_sha" ] || { echo "bigfile: the original changed" >&2; failed=1; }

# --- the tables ------------------------------------------------------------------------------------
echo
echo "one file of $bytes bytes (incompressible), best of $reps; $(nproc --all) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')), load average $load_before before, $load_after after"
echo "mlt $(cd "$bench_root" && git rev-parse --short HEAD 2>/dev/null || echo '?') ($("$mlt" --version 2>&1 | sed -n 1p)), compression ${compression:-default}; $(ssh -V 2>&1)"
# sed, not head: a writer cut off by SIGPIPE would fail the pipeline (pipefail).
if uses rsync; then rsync --version | sed -n 1p; fi
if uses rclone; then rclone version 2>/dev/null | sed -n 1p; fi
if uses lftp; then lftp --version | sed -n 1p; fi
bench_setup_text
python3 - "$results" "$bytes" "$rate_mbit" "${bench_user:+reads}" <<'PY'
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
size, mbit = int(sys.argv[2]), float(sys.argv[3])
show_reads = sys.argv[4] == "reads"  # --profile-ms: the reads of ~/.bashrc+~/.profile
INF = float("inf")
best, verdicts, order, reads = {}, {}, [], {}
for rtt, tool, d, secs, verdict, r in rows:
    reads.setdefault((rtt, tool, d), []).append(r)
    if rtt not in order:
        order.append(rtt)
    try:
        s = float(secs)
    except ValueError:
        s = INF
    best[(rtt, tool, d)] = min(best.get((rtt, tool, d), INF), s)
    verdicts.setdefault((rtt, tool), set()).add(verdict)

def mbs(rtt, tool, d):
    s = best.get((rtt, tool, d), INF)
    return size / s / 1e6 if 0 < s < INF and "1 KiB" not in tool else None

def cell(v, fmt):
    return "-" if v is None else format(v, fmt)

for rtt in order:
    link = mbit / 8 if rtt != "direct" and mbit > 0 else None
    print()
    if rtt == "direct":
        print("direct: sshd on loopback, no relay, no cap")
    else:
        print(f"rtt {rtt} ms" + (f", {mbit:g} Mbit/s per direction ({link:g} MB/s)" if link else ", no cap"))
    print("| tool | up s | up MB/s | up % link | down s | down MB/s | down % link |"
          + (" bashrc+profile reads up / down |" if show_reads else "") + " copies |")
    print("|---|---|---|---|---|---|---|" + ("---|" if show_reads else "") + "---|")
    tools = [t for (r, t, d) in best if r == rtt and d == "up"]
    for tool in tools:
        line = [tool]
        for d in ("up", "down"):
            s = best.get((rtt, tool, d), INF)
            rate = mbs(rtt, tool, d)
            line += [cell(s if s < INF else None, ".2f"), cell(rate, ".1f"),
                     cell(rate / link * 100 if rate and link else None, ".0f")]
        if show_reads:
            line.append(" / ".join(",".join(sorted(set(reads.get((rtt, tool, d), ["-"]))))
                                   for d in ("up", "down")))
        v = verdicts[(rtt, tool)]
        line.append("ok" if v == {"ok"} else "/".join(sorted(v - {"ok"})))
        print("| " + " | ".join(line) + " |")
    if ("mlt" not in tools):
        continue
    print()
    print("mlt's MB/s against the anchor's (above 1: mlt is faster):")
    print("| anchor | up | down |")
    print("|---|---|---|")
    for name, cands in (("rsync", ["rsync"]), ("best of rclone, lftp", ["rclone", "lftp"]),
                        ("ssh cat", ["ssh cat"])):
        line = [name]
        for d in ("up", "down"):
            got = [(mbs(rtt, c, d), c) for c in cands if mbs(rtt, c, d)]
            m = mbs(rtt, "mlt", d)
            if got and m:
                rate, which = max(got)
                line.append(f"{m / rate:.2f}" + (f" ({which})" if len(cands) > 1 else ""))
            else:
                line.append("-")
        print("| " + " | ".join(line) + " |")
PY
echo
echo "(MB = 10^6 bytes; % link: of the relay's rate; mlt's times are its whole commands (connection,"
echo " job, round trips included); \"mlt, 1 KiB\": the same two commands with a 1 KiB file, their fixed cost)"
if [ "$failed" != 0 ]; then
  echo "bigfile: some copies are wrong or some runs failed (see above; --keep keeps the logs)" >&2
  exit 1
fi
