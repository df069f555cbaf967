# checkpoints: retention and wholeness on the host, for the guard (guard.sh; docs/usage.md,
# "Checkpoints"). A library of functions: it runs nothing itself. POSIX sh, find, stat -c (GNU
# and BusyBox) and awk (mawk, BusyBox's, gawk; LC_ALL=C).
#
# The settings, JOBDIR/checkpoints (written by mlt with the lock), one key=value a line:
#   mlt-checkpoints 1
#   pattern=GLOB        relative to the log dir (find -path: * crosses /)
#   keep_last=N         the newest N stay (0: none by age)
#   best_n=K            the best K by the metric stay (0: none)
#   best_mode=min|max
#   settle=S            seconds a version must stay unchanged, while the job runs, to be whole
#   marker=TEMPLATE     a file that makes a checkpoint whole, {name} its file name; empty: none
#   metric=RULE         keep_best's metric: one `m` line of a rules file (guard_rules.sh)
#   metric_file=FILE    the file of the log dir whose lines give the metric; empty: console.log
#
# The ledger, JOBDIR/ckpt.ledger (written as .tmp, then moved), one checkpoint a line:
#   NAME<TAB>SIZE<TAB>MTIME<TAB>SEEN<TAB>WHOLE<TAB>METRIC<TAB>STATE
# NAME relative to the log dir; SEEN when this version (SIZE, MTIME) was first seen; WHOLE 1, or 0
# (not yet), or 2 (never: not whole at the look after a failed end, until it changes);
# METRIC the metric's latest value when this checkpoint was first seen (a new version of one that
# was not whole yet keeps it: the same save going on; "" when none); STATE kept,
# or deleted (by this retention; the line stays so that mlt deletes the local copy too).
#
# The seed, JOBDIR/ckpt.seed (pushed by mlt with --restore or a failover, before the job starts):
# lines of the ledger's form for the checkpoints pushed, as the ledger of the run's earlier host
# knew them (WHOLE 1, or 2 for a copy not whole; METRIC kept for keep_best), and that ledger's
# deleted lines. A version the ledger does not list in that very version (SIZE, MTIME) takes the
# seed's line; the seed's deleted lines join the ledger's.
#
# mlt_ckpt_tick JOBDIR NOW ALIVE ENDED METRIC: one look. ALIVE 1 while the job runs; ENDED 1 once
#   it recorded its exit status (every file then present is whole); METRIC the latest value.
#   Deletes the whole checkpoints that retention does not keep (and their markers), never the
#   newest whole one, and
#   none while JOBDIR/ckpt.pulling (an mlt's pull) is younger than 600 s. Names with a newline
#   or a tab are left alone. Exit status 0, or 1 when the ledger could not be written.
#   Takes no lock: the guard calls mlt_ckpt_look, the end's look is mlt_ckpt_final.
# mlt_ckpt_metric JOBDIR: sets mlt_ck_v to the metric's latest value (empty: none yet, or no
#   metric). The metric rule is ticked as the stop rules are (mlt_rules_tick), in the dir
#   JOBDIR/ckpt.metric of its own (rules, rules.state), on the console log or on metric_file.
mlt_ckpt_metric() {
  mlt_ck_v=
  mlt_ck_r=$(sed -n 's/^metric=//p' "$1/checkpoints" 2> /dev/null)
  [ -n "$mlt_ck_r" ] || return 0
  if [ ! -f "$1/ckpt.metric/rules" ]; then
    { mkdir -p "$1/ckpt.metric" && printf 'mlt-rules 1\n%s\n' "$mlt_ck_r" > "$1/ckpt.metric/rules"; } 2> /dev/null || return 0
  fi
  mlt_ck_l=$1/console.log
  mlt_ck_f=$(sed -n 's/^metric_file=//p' "$1/checkpoints")
  if [ -n "$mlt_ck_f" ]; then
    mlt_ck_d=; { IFS= read -r mlt_ck_d < "$1/log_dir"; } 2> /dev/null
    [ -n "$mlt_ck_d" ] || return 0
    mlt_ck_l=$mlt_ck_d/$mlt_ck_f
  fi
  mlt_rules_tick "$1/ckpt.metric" "" "$mlt_ck_l" > /dev/null
  # shellcheck disable=SC2034 # the guard's, read after the call
  mlt_ck_v=$(LC_ALL=C awk -F '\t' 'NR > 2 && $3 == "m" { v = $2 } END { print v }' "$1/ckpt.metric/rules.state" 2> /dev/null)
}
# mlt_ckpt_final JOBDIR NOW [ENDED]: the look as the job ended, then JOBDIR/ckpt.final. Every
#   checkpoint then present is whole when the job ended with 0; after a failure or a loss only
#   those that already were (a crash may have cut a save). With ENDED (the guard, a pull) only
#   while the job's exit status is still there: a restart in place moves it aside, and then
#   that look was taken, and a late one would judge the next attempt's saves.
mlt_ckpt_final() {
  mlt_ckpt_lock "$1" || return 1
  if [ -n "$3" ] && [ ! -f "$1/exit_status" ]; then
    mlt_ckpt_unlock "$1"
    return 0
  fi
  mlt_ck_ok=0
  [ "$(cat "$1/exit_status" 2> /dev/null)" != 0 ] || mlt_ck_ok=1
  mlt_ckpt_metric "$1"
  mlt_ckpt_tick "$1" "$2" 0 "$mlt_ck_ok" "$mlt_ck_v" && : > "$1/ckpt.final"
  mlt_ck_s=$?
  mlt_ckpt_unlock "$1"
  return "$mlt_ck_s"
}
# mlt_ckpt_look JOBDIR NOW: the guard's look while the job runs, the metric's latest value first;
#   none (status 1) while another look holds the lock: the guard does not wait, its next look
#   comes in 2 s.
mlt_ckpt_look() {
  mlt_ckpt_lock "$1" 1 || return 1
  mlt_ckpt_metric "$1"
  mlt_ckpt_tick "$1" "$2" 1 0 "$mlt_ck_v"
  mlt_ck_s=$?
  mlt_ckpt_unlock "$1"
  return "$mlt_ck_s"
}
# mlt_ckpt_lock JOBDIR [TRIES]: one look at a time (the guard's, and a pull's or a restart's own
#   look after the end, may come together): JOBDIR/ckpt.lock, a dir holding the pid of the shell
#   that holds it (owner). A lock whose owner is gone, or with no owner after 10 s, or older than
#   10 min, is a dead look's: moved aside (only one taker wins) and removed. Tries TRIES times,
#   0.2 s apart (default 450: 90 s); status 1 when it did not get it.
mlt_ckpt_lock() {
  mlt_ck_w=${2:-450}
  while :; do
    if mkdir "$1/ckpt.lock" 2> /dev/null; then
      echo $$ > "$1/ckpt.lock/owner"
      return 0
    fi
    mlt_ck_o=$(cat "$1/ckpt.lock/owner" 2> /dev/null)
    mlt_ck_a=$(($(date +%s) - $(stat -c %Y "$1/ckpt.lock" 2> /dev/null || date +%s)))
    if { [ -n "$mlt_ck_o" ] && ! kill -s 0 "$mlt_ck_o" 2> /dev/null; } || { [ -z "$mlt_ck_o" ] && [ "$mlt_ck_a" -ge 10 ]; } || [ "$mlt_ck_a" -ge 600 ]; then
      mv "$1/ckpt.lock" "$1/ckpt.lock.dead.$$" 2> /dev/null && rm -rf "$1/ckpt.lock.dead.$$"
      continue
    fi
    mlt_ck_w=$((mlt_ck_w - 1))
    [ "$mlt_ck_w" -gt 0 ] || return 1
    sleep 0.2
  done
}
# mlt_ckpt_unlock JOBDIR: gives the lock back, if it is still this shell's.
mlt_ckpt_unlock() {
  [ "$(cat "$1/ckpt.lock/owner" 2> /dev/null)" != $$ ] || rm -rf "$1/ckpt.lock"
}
# mlt_ckpt_files DIR PATTERN KIND: "KIND SIZE MTIME ./NAME" for each regular file under DIR that
#   PATTERN matches (find -path: `*` crosses `/`); a path with a line end is left out.
mlt_ckpt_files() {
  mlt_ck_nl='
'
  (cd "$1" && find . -path "./$2" ! -path "*$mlt_ck_nl*" -type f -exec stat -c "$3 %s %Y %n" {} + 2> /dev/null)
}
# mlt_ckpt_pick JOBDIR LOGDIR: which checkpoint an attempt starts from (MLT_CHECKPOINT). Prints
#   "torn NAME" for each one newer than the newest whole one, then "pick NAME", that one (none:
#   no whole one). Whole as the ledger lists it in that very version, else as the seed does;
#   with neither a ledger nor a seed (no look yet, nothing pushed) every one counts as whole.
mlt_ckpt_pick() {
  mlt_ck_p=$(sed -n 's/^pattern=//p' "$1/checkpoints" 2> /dev/null)
  [ -n "$mlt_ck_p" ] || return 0
  {
    cat "$1/ckpt.ledger" 2> /dev/null; echo 'mlt-seed'
    cat "$1/ckpt.seed" 2> /dev/null; echo 'mlt-files'
    mlt_ckpt_files "$2" "$mlt_ck_p" f
  } | LC_ALL=C awk -F '\t' '
$0 == "mlt-seed" { part = 1; next }
$0 == "mlt-files" { part = 2; next }
part < 2 { if (NF == 7 && $7 == "kept") { known = 1; if (part == 0) { v[$1] = $2 " " $3; w[$1] = $5 } else { sv[$1] = $2 " " $3; sw[$1] = $5 } }; next }
match($0, /^f [0-9]+ [0-9]+ \.\//) {
  split($0, f, " "); name = substr($0, RLENGTH + 1)
  if (index(name, "\t")) next
  ver = f[2] " " f[3]
  whole = !known || (v[name] == ver ? w[name] == 1 : sv[name] == ver && sw[name] == 1)
  if (whole && (best == "" || f[3] > bt || (f[3] == bt && name > best))) { best = name; bt = f[3] }
  if (!whole) { nt++; tn[nt] = name; tt[nt] = f[3] }
}
END {
  for (i = 1; i <= nt; i++) if (best == "" || tt[i] > bt || (tt[i] == bt && tn[i] > best)) print "torn " tn[i]
  if (best != "") print "pick " best
}'
}
mlt_ckpt_tick() {
  mlt_ck_j=$1
  [ -f "$mlt_ck_j/checkpoints" ] || return 0
  mlt_ck_d=; { IFS= read -r mlt_ck_d < "$mlt_ck_j/log_dir"; } 2> /dev/null
  [ -n "$mlt_ck_d" ] && [ -d "$mlt_ck_d" ] || return 0
  mlt_ck_p=$(sed -n 's/^pattern=//p' "$mlt_ck_j/checkpoints")
  mlt_ck_m=$(sed -n 's/^marker=//p' "$mlt_ck_j/checkpoints")
  [ -n "$mlt_ck_p" ] || return 0
  mlt_ck_hold=0
  if [ -e "$mlt_ck_j/ckpt.pulling" ] && [ -n "$(find "$mlt_ck_j/ckpt.pulling" -mmin -10 2> /dev/null)" ]; then mlt_ck_hold=1; fi
  # The markers' pattern: the template with {name} as the checkpoints' own file pattern.
  mlt_ck_mp=
  case $mlt_ck_m in *'{name}'*) mlt_ck_mp="${mlt_ck_p%/*}/${mlt_ck_m%%\{name\}*}${mlt_ck_p##*/}${mlt_ck_m#*\{name\}}"; case $mlt_ck_p in */*) ;; *) mlt_ck_mp=${mlt_ck_mp#*/} ;; esac ;; esac
  {
    mlt_ckpt_files "$mlt_ck_d" "$mlt_ck_p" f
    [ -z "$mlt_ck_mp" ] || mlt_ckpt_files "$mlt_ck_d" "$mlt_ck_mp" m
  } | LC_ALL=C awk -v now="$2" -v alive="$3" -v ended="$4" -v cur="$5" -v hold="$mlt_ck_hold" \
      -v conf="$mlt_ck_j/checkpoints" -v ledger="$mlt_ck_j/ckpt.ledger" -v seed="$mlt_ck_j/ckpt.seed" -v del="$mlt_ck_j/ckpt.delete" '
function setting(k,   l) {
  while ((getline l < conf) > 0) if (index(l, k "=") == 1) { close(conf); return substr(l, length(k) + 2) }
  close(conf); return ""
}
function better(a, b) { return mode == "max" ? a + 0 > b + 0 : a + 0 < b + 0 }
BEGIN {
  keep_last = setting("keep_last") + 0; best_n = setting("best_n") + 0
  mode = setting("best_mode"); settle = setting("settle") + 0; marker = setting("marker")
  while ((getline l < seed) > 0) {
    split(l, f, "\t")
    if (f[7] == "deleted") { gone[f[1]] = l; continue }
    sv[f[1]] = f[2] " " f[3]; sseen[f[1]] = f[4]; swhole[f[1]] = f[5]; smetric[f[1]] = f[6]
  }
  close(seed)
  while ((getline l < ledger) > 0) {
    split(l, f, "\t")
    if (f[7] == "deleted") { gone[f[1]] = l; continue }
    osize[f[1]] = f[2]; omtime[f[1]] = f[3]; oseen[f[1]] = f[4]; owhole[f[1]] = f[5]; ometric[f[1]] = f[6]
  }
  close(ledger)
}
# "f SIZE MTIME ./NAME" or "m ..." (a marker); find leaves out every path with a line end.
/^[fm] [0-9]+ [0-9]+ \.\// {
  k = $1; size = $2; mtime = $3
  name = substr($0, length(k) + length(size) + length(mtime) + 6)
  if (index(name, "\t")) next
  if (k == "m") { markers[name] = mtime; next }
  n++; names[n] = name; sizes[n] = size; mtimes[n] = mtime
}
END {
  for (i = 1; i <= n; i++) {
    nm = names[i]
    if ((nm in osize) && osize[nm] == sizes[i] && omtime[nm] == mtimes[i]) {
      seen[i] = oseen[nm]; whole[i] = owhole[nm]; metric[i] = ometric[nm]
    } else if ((nm in sv) && sv[nm] == sizes[i] " " mtimes[i]) {
      seen[i] = sseen[nm]; whole[i] = swhole[nm]; metric[i] = smetric[nm]
    } else {
      # A new version; one of a name whose last version was not whole is the same save going
      # on: it keeps the metric that save was first seen with.
      seen[i] = now; whole[i] = 0; metric[i] = cur
      if ((nm in osize) && owhole[nm] != 1 && ometric[nm] != "") metric[i] = ometric[nm]
    }
    mk[i] = ""
    if (marker != "") { m = marker; s = index(m, "{name}"); d = nm; sub(/[^\/]*$/, "", d); b = substr(nm, length(d) + 1); mk[i] = d substr(m, 1, s - 1) b substr(m, s + 6) }
    # A marker counts when it is no older than the checkpoint (one of an earlier save stays).
    if (whole[i] == 0 && (ended == 1 || (mk[i] != "" && (mk[i] in markers) && markers[mk[i]] >= mtimes[i]) || (alive == 1 && now - seen[i] >= settle))) whole[i] = 1
    # The look after a failed end: what is not whole now never will be (a restart in place
    # must not let a torn save settle); 2 until the file changes.
    if (whole[i] == 0 && alive == 0 && ended == 0) whole[i] = 2
    keep[i] = whole[i] != 1
  }
  # Among the whole ones (the others stay anyway): the newest keep_last (by mtime, then
  # name), the best best_n; and the newest whole one.
  for (r = 1; r <= keep_last; r++) {
    pick = 0
    for (i = 1; i <= n; i++) if (whole[i] == 1 && !taken[i] && (pick == 0 || mtimes[i] > mtimes[pick] || (mtimes[i] == mtimes[pick] && names[i] > names[pick]))) pick = i
    if (pick == 0) break
    taken[pick] = 1
    keep[pick] = 1
  }
  newest = 0
  for (i = 1; i <= n; i++) if (whole[i] == 1 && (newest == 0 || mtimes[i] > mtimes[newest] || (mtimes[i] == mtimes[newest] && names[i] > names[newest]))) newest = i
  if (newest) keep[newest] = 1
  for (r = 1; r <= best_n; r++) {
    pick = 0
    for (i = 1; i <= n; i++) if (whole[i] == 1 && !best[i] && metric[i] != "" && (pick == 0 || better(metric[i], metric[pick]))) pick = i
    if (pick == 0) break
    best[pick] = 1; keep[pick] = 1
  }
  if (keep_last == 0 && best_n == 0) hold = 1  # no keep rules: nothing is deleted
  T = ledger ".tmp"
  printf "" > T  # written even when there is no line (mawk fails to close a file never opened)
  printf "" > del
  for (i = 1; i <= n; i++) {
    state = (keep[i] || hold) ? "kept" : "deleted"
    if (state == "deleted") { print "./" names[i] > del; if (mk[i] != "" && (mk[i] in markers)) print "./" mk[i] > del }
    printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", names[i], sizes[i], mtimes[i], seen[i], whole[i], metric[i], state > T
    here[names[i]] = 1
  }
  # The deleted ones of earlier looks, up to 2000 (a pull reads the first 1 MiB of the ledger).
  for (nm in gone) if (!(nm in here) && ++g <= 2000) print gone[nm] > T
  close(del)
  if (close(T) != 0) exit 1
}' || return 1
  mv -f "$mlt_ck_j/ckpt.ledger.tmp" "$mlt_ck_j/ckpt.ledger" || return 1
  # Deleted by name, one at a time, inside the log dir (no name has a newline: see above).
  while IFS= read -r mlt_ck_f; do
    rm -f -- "$mlt_ck_d/$mlt_ck_f"
  done < "$mlt_ck_j/ckpt.delete"
  rm -f "$mlt_ck_j/ckpt.delete"
}
