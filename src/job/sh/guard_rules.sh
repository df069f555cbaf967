# watch.stop_when decided on the host (docs/usage.md, "Watching a run"): the rules of the job
# dir's `rules` file on the lines of its console.log as it grows, for the guard (guard.sh). A
# library of functions: it runs nothing itself. POSIX sh, awk (mawk, BusyBox's, gawk: run
# with LC_ALL=C, byte by byte), dd, tr and ls.
#
# The rules file (mlt/config/rule_dialect.h, host_rules_text), one rule a line, INDEX 0 first:
#   mlt-rules 1
#   r<TAB>REGEX
#   p<TAB>min|max<TAB>PATIENCE<TAB>REGEX<TAB>PREFIX<TAB>GROUP<TAB>SUFFIX
#   m<TAB>REGEX<TAB>PREFIX<TAB>GROUP<TAB>SUFFIX     a metric: its latest value, never fires
# REGEX is a POSIX ERE searched in each line; a plateau rule's REGEX is
# [^]PREFIX(GROUP)SUFFIX[$]. In each regex field `%` and the control bytes are written %XX (two
# upper-case hex digits), so that a field holds no tab and no line end.
#
# The state file rules.state (written as rules.state.tmp, then moved; it survives a restart of
# the guard):
#   OFFSET FIRED                  bytes of console.log decided; FIRED: -1, or the INDEX that fired
#   LINE                          the line that fired it (empty before)
#   COUNT<TAB>BEST<TAB>RULE       for each plateau rule that saw a value: values since its best,
#                                 its best (the number's text), and its line of the rules file;
#                                 for a metric: 0, its latest value, its line
#
# mlt_rules_tick JOBDIR [SIZE] [LOG]: decides the lines that LOG (JOBDIR/console.log when empty)
#   got since the last tick (SIZE: its size in bytes when the caller knows it, else one `ls`).
#   The checkpoints' metric uses a dir of its own with a rules file of one `m` rule, on the
#   console log or on a file of the log dir. A line ends at \n or
#   \r (a progress bar rewrites its line with \r: each state is a line; a NUL is read as \001);
#   a line without its end waits for the next tick. Each line (its first 64 KiB; empty lines
#   are skipped) goes through the rules in order; the first rule that fires is recorded and
#   printed once as INDEX<TAB>LINE (LINE without control bytes, cut to 500 bytes), and no rule
#   is decided after it, ever. A tick reads at most 1 MiB of the log (the rest waits for the
#   next); a line longer than that is decided by its first 1 MiB. A log shorter than OFFSET is
#   a new one, read from its start (the plateau counts go on). No log, no rules file, a log
#   that did not grow, or a rule that fired: no work (no process when SIZE is given).
#   Exit status: 0 (with or without a hit), 1 when the state could not be written, 2 when the
#   rules file is no rules file, awk refused it, or the log could not be read (awk's complaint
#   is dropped: the guard's output may go to the console log, which a complaint would grow).
# The value of a plateau rule (the host's awk has no captures): M is the match of REGEX in the
#   line (leftmost, then longest). PRE is the longest start of M that PREFIX matches whole such
#   that GROUP followed by SUFFIX matches the rest of M whole; the value's text is the longest
#   start of that rest that GROUP matches whole such that SUFFIX matches what is left whole.
#   It is a value when it reads as a decimal number from its start (after spaces: a sign,
#   digits with a point, an exponent), and is that number; else the line gives no value. A new
#   best (lower for min, higher for max) sets the count to 0; any other value adds 1, and the
#   rule fires when the count reaches PATIENCE.
mlt_rules_tick() {
  mlt_rt_d=$1 mlt_rt_o=0 mlt_rt_f=-1 mlt_rt_log=${3:-$1/console.log}
  [ -f "$mlt_rt_d/rules" ] || return 0
  { read -r mlt_rt_o mlt_rt_f < "$mlt_rt_d/rules.state"; } 2> /dev/null
  case $mlt_rt_o in '' | *[!0-9]*) mlt_rt_o=0 ;; esac
  case $mlt_rt_f in '' | -1) ;; *) return 0 ;; esac
  mlt_rt_n=${2:-}
  if [ -z "$mlt_rt_n" ]; then
    mlt_file_size "$mlt_rt_log"
    mlt_rt_n=$mlt_fs
    [ -n "$mlt_rt_n" ] || return 0
  fi
  [ "$mlt_rt_n" -ne "$mlt_rt_o" ] || return 0
  mlt_rt_s=$mlt_rt_o
  [ "$mlt_rt_n" -gt "$mlt_rt_o" ] || mlt_rt_s=0
  mlt_rt_c=$((mlt_rt_n - mlt_rt_s))
  [ "$mlt_rt_c" -le 1048576 ] || mlt_rt_c=1048576
  { mlt_rules_read "$mlt_rt_log" "$mlt_rt_s" "$mlt_rt_c"; printf '\nmlt-end\n'; } 2> /dev/null |
    tr '\r\000' '\n\001' 2> /dev/null |
    MLT_RULES_DIR=$mlt_rt_d LC_ALL=C awk -v o="$mlt_rt_s" -v O="$mlt_rt_o" -v N="$mlt_rt_c" -v C=1048576 '
function hex(h) { return (index(X, substr(h, 1, 1)) - 1) * 16 + index(X, substr(h, 2, 1)) - 1 }
function decode(s,   out, k) {
  out = ""
  while ((k = index(s, "%")) > 0) {
    out = out substr(s, 1, k - 1) sprintf("%c", hex(substr(s, k + 1, 2)))
    s = substr(s, k + 3)
  }
  return out s
}
function whole(s, re) { return re == "" ? s == "" : s ~ re }
function rule(l,   f, p, g, x) {
  split(l, f, "\t")
  n++
  raw[n] = l
  kind[n] = f[1]
  if (f[1] == "r") { re[n] = decode(f[2]); return }
  if (f[1] == "m") { f[7] = f[5]; f[6] = f[4]; f[5] = f[3]; f[4] = f[2] }
  else if (f[1] != "p") return
  high[n] = f[2] == "max"
  patience[n] = f[3] + 0
  re[n] = decode(f[4])
  p = decode(f[5]); g = decode(f[6]); x = decode(f[7])
  pre[n] = p == "" ? "" : "^(" p ")$"
  lead[n] = "^(" p ")"
  grp[n] = "^(" g ")$"
  head[n] = "^(" g ")"
  rest[n] = "^(" g ")" (x == "" ? "" : "(" x ")") "$"
  suf[n] = x == "" ? "" : "^(" x ")$"
}
function state(l,   k, c, b, i) {
  k = index(l, "\t"); c = substr(l, 1, k - 1); l = substr(l, k + 1)
  k = index(l, "\t"); b = substr(l, 1, k - 1); l = substr(l, k + 1)
  for (i = 1; i <= n; i++)
    if ((kind[i] == "p" || kind[i] == "m") && raw[i] == l && !(i in best)) { best[i] = b; count[i] = c + 0; return }
}
function value(i, m,   a, r, j, g) {
  a = pre[i] == "" ? 0 : match(m, lead[i]) ? RLENGTH : 0
  for (; a > 0; a--) if (substr(m, 1, a) ~ pre[i] && substr(m, a + 1) ~ rest[i]) break
  r = substr(m, a + 1)
  j = match(r, head[i]) ? RLENGTH : 0
  for (; j > 0; j--) if (substr(r, 1, j) ~ grp[i] && whole(substr(r, j + 1), suf[i])) break
  g = substr(r, 1, j)
  sub(/^[[:space:]]+/, "", g)
  if (!match(g, /^[-+]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][-+]?[0-9]+)?/)) return ""
  return substr(g, 1, RLENGTH)
}
function fire(i, t) {
  hit = i
  gsub(/[[:cntrl:]]/, "", t)
  line = substr(t, 1, 500)
  return 1
}
function take(t,   i, v) {
  used += length(t) + 1
  if (t == "") return 0
  if (length(t) > 65536) t = substr(t, 1, 65536)
  for (i = 1; i <= n; i++) {
    if (kind[i] == "r") { if (t ~ re[i]) return fire(i, t); continue }
    if ((kind[i] != "p" && kind[i] != "m") || !match(t, re[i])) continue
    v = value(i, substr(t, RSTART, RLENGTH))
    if (v == "") continue
    if (kind[i] == "m") { best[i] = v; count[i] = 0; continue }
    if (!(i in best) || (high[i] ? v + 0 > best[i] + 0 : v + 0 < best[i] + 0)) { best[i] = v; count[i] = 0 }
    else if (++count[i] >= patience[i]) return fire(i, t)
  }
  return 0
}
BEGIN {
  X = "0123456789ABCDEF"
  R = ENVIRON["MLT_RULES_DIR"] "/rules"; S = ENVIRON["MLT_RULES_DIR"] "/rules.state"
  if ((getline l < R) <= 0 || l != "mlt-rules 1") { bad = 1; exit 2 }
  while ((getline l < R) > 0) rule(l)
  close(R)
  if ((getline l < S) > 0 && (getline l < S) > 0) while ((getline l < S) > 0) state(l)
  close(S)
}
{
  if (NR > 2 && take(held)) exit
  held = last; last = $0
}
END {
  if (bad) exit 2
  if (!hit && last != "mlt-end") exit 2
  if (!hit && held == "" && NR <= 2 && N > 0) exit 2
  if (!hit && held != "" && used == 0 && length(held) >= C) { take(held); used = length(held) }
  if (!hit && used == 0 && o == O) exit 0
  T = S ".tmp"
  printf("%.0f %d\n", o + used, (hit ? hit - 1 : -1)) > T
  print line > T
  for (i = 1; i <= n; i++) if (i in best) printf("%d\t%s\t%s\n", count[i], best[i], raw[i]) > T
  if (close(T) != 0) exit 1
  exit 10
}' 2> /dev/null
  case $? in
    0) return 0 ;;
    10) ;;
    1) return 1 ;;
    *) return 2 ;;
  esac
  mv -f "$mlt_rt_d/rules.state.tmp" "$mlt_rt_d/rules.state" || return 1
  { read -r mlt_rt_o mlt_rt_f && IFS= read -r mlt_rt_l; } < "$mlt_rt_d/rules.state" || return 1
  [ "$mlt_rt_f" = -1 ] || printf '%s\t%s\n' "$mlt_rt_f" "$mlt_rt_l"
}
# mlt_file_size FILE: sets mlt_fs to FILE's size in bytes, empty when it is no regular file; one
#   `ls` (BusyBox's `wc -c` reads the whole file).
mlt_file_size() {
  mlt_fs=$(ls -ln "$1" 2> /dev/null) || mlt_fs=
  case $mlt_fs in -*) ;; *) mlt_fs= && return 0 ;; esac
  read -r _ _ _ _ mlt_fs _ << EOF
$mlt_fs
EOF
  case $mlt_fs in '' | *[!0-9]*) mlt_fs= ;; esac
}
# mlt_rules_read FILE FROM COUNT: COUNT bytes of FILE from byte FROM (0-based), or fewer at its
#   end; with a seek (dd), else (a dd without skip_bytes) by reading through.
mlt_rules_read() {
  dd if="$1" bs=65536 skip="$2" count="$3" iflag=skip_bytes,count_bytes 2> /dev/null ||
    tail -c +$(($2 + 1)) "$1" | head -c "$3"
}
