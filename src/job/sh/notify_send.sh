# Sends one event of a run to its notify targets (docs/remote-protocol.md, "Notifications"): run
# by the host's guard and, on the laptop, by mlt (LocalNotifier, src/job/notify_local.cpp), with
# whichever HTTP client is there: curl, else GNU wget, else python3. A webhook URL is a secret: it
# never appears in the argv nor the environment of any process this starts (curl reads it from its
# config on stdin, wget from its URL list on stdin, python3 from the targets file), nor in the log.
#
# Modes ($1):
#   client                        prints `curl`, `wget`, `python3` or `none: WHY`; exit 0, or 5
#   check                         prints nothing when there is a client; else the warning line
#                                 that `send` would print, and exit 5 (a guard's start)
#   body WHAT EVENT_DIR           prints the event's json, ntfy or slack body, its title or its id
#   send TARGETS EVENT_DIR LOG [SENT]
#     TARGETS: one target per line, `FORMAT URL` (json, ntfy or slack; the URL has no blank).
#     EVENT_DIR: `fields`, lines NAME=VALUE (event, model, run_id, attempt, host, reason,
#     exit_status, duration_s, cost; a missing one is empty, a number that is none is null), and
#     `last_lines` (optional: console lines, of which the last 10 are sent). Private files are
#     made in EVENT_DIR/work.PID (0700) and removed.
#     LOG: one line appended per try: `TIME ID target=N format=F try=K sent` or `... try=K
#     failed: WHY`, or `TIME ID not sent: WHY` when there is no client.
#     SENT: when given, a file of the ids already sent (one a line): an id found there is not
#     sent again, and the id is added once every target has had its tries.
#     Exit: 0 all sent, 3 already sent (nothing done), 4 a target failed after its tries (a
#     warning line each), 5 no HTTP client here (nothing sent, the id not added; a
#     warning line saying why), 2 a wrong call.
# Variables that may come before this text: mlt_notify_tries (tries per target, 4: a try and 3
# retries), mlt_notify_delay (seconds before the first retry, doubled before each next: 2),
# mlt_notify_timeout (seconds per try: 10), mlt_notify_here (what the warnings call this machine:
# this host).
: "${mlt_notify_tries:=4}" "${mlt_notify_delay:=2}" "${mlt_notify_timeout:=10}" "${mlt_notify_here:=this host}"
# The event's bodies, from the fields file (ff) then the console lines, by `what`: every text is
# first made safe (tab a blank, other control bytes and bytes of no UTF-8 sequence `?`, a line
# cut to what follows its last CR and to 300 bytes), then written as JSON or text. The C++ twin
# (notify_event.cpp) gives the same bytes; a unit test holds them equal.
mlt_notify_body() {
  if [ -f "$2/last_lines" ]; then set -- "$1" "$2" "$2/last_lines"; else set -- "$1" "$2" /dev/null; fi
  LC_ALL=C awk -v what="$1" -v ff="$2/fields" '
function clean(s,   out, i, n, c, o, k, j, ok) {
  if (substr(s, length(s)) == "\r") s = substr(s, 1, length(s) - 1)
  while ((i = index(s, "\r")) > 0) s = substr(s, i + 1)
  if (length(s) > 300) s = substr(s, 1, 300)
  out = ""; n = length(s); i = 1
  while (i <= n) {
    c = substr(s, i, 1); o = ord[c] + 0
    if (o == 9) { out = out " "; i++; continue }
    if (o < 32 || o == 127) { out = out "?"; i++; continue }
    if (o < 128) { out = out c; i++; continue }
    k = (o >= 194 && o <= 223) ? 1 : (o >= 224 && o <= 239) ? 2 : (o >= 240 && o <= 244) ? 3 : 0
    ok = k > 0 && i + k <= n
    for (j = 1; ok && j <= k; j++) { o = ord[substr(s, i + j, 1)] + 0; ok = o >= 128 && o <= 191 }
    if (ok) { out = out substr(s, i, k + 1); i += k + 1 } else { out = out "?"; i++ }
  }
  return out
}
function tr(s, map,   out, i, c) {
  out = ""
  for (i = 1; i <= length(s); i++) { c = substr(s, i, 1); out = out ((c in map) ? map[c] : c) }
  return out
}
function num(name, re) { return f[name] ~ re ? f[name] : "" }
function jnum(v) { return v == "" ? "null" : v }
function dur(d) {
  d = d + 0
  if (d < 60) return d "s"
  if (d < 3600) return int(d / 60) "m " sprintf("%02d", d % 60) "s"
  return int(d / 3600) "h " sprintf("%02d", int((d % 3600) / 60)) "m"
}
function words(e) { gsub(/_/, " ", e); return e }
BEGIN {
  for (i = 1; i < 256; i++) { c = sprintf("%c", i); ord[c] = i; if (i >= 128) hi[c] = "?" }
  js["\\"] = "\\\\"; js["\""] = "\\\""; js["\n"] = "\\n"
  sl["&"] = "&amp;"; sl["<"] = "&lt;"; sl[">"] = "&gt;"
  n = 0
}
FILENAME == ff {
  i = index($0, "="); if (i < 2) next
  f[substr($0, 1, i - 1)] = clean(substr($0, i + 1)); next
}
{ l[n % 10] = clean($0); n++ }
END {
  att = num("attempt", "^[0-9]+$"); ex = num("exit_status", "^-?[0-9]+$")
  d = num("duration_s", "^[0-9]+$"); cost = num("cost", "^[0-9]+([.][0-9]+)?$")
  id = f["run_id"] "." att "." f["event"]
  title = "mlt: " f["model"] " " words(f["event"])
  line1 = f["model"] " " words(f["event"]) " on " f["host"] (f["reason"] != "" ? ": " f["reason"] : "")
  line2 = "run " f["run_id"] ", attempt " att (ex != "" ? ", exit status " ex : "") \
    (d != "" ? ", " dur(d) : "") (cost != "" ? ", $" sprintf("%.2f", cost) : "")
  first = n > 10 ? n - 10 : 0; lines = ""; jl = ""
  for (i = first; i < n; i++) {
    lines = lines (i > first ? "\n" : "") l[i % 10]
    jl = jl (i > first ? "," : "") "\"" tr(l[i % 10], js) "\""
  }
  if (what == "id") print id
  else if (what == "title") print tr(title, hi)
  else if (what == "ntfy") printf "%s\n%s%s", line1, line2, (n > 0 ? "\n\n" lines : "")
  else if (what == "slack") {
    text = "*" tr(title, sl) "*\n" tr(line1, sl) "\n" tr(line2, sl) (n > 0 ? "\n```\n" tr(lines, sl) "\n```" : "")
    printf "{\"text\":\"%s\"}", tr(text, js)
  } else {
    printf "{\"id\":\"%s\",\"event\":\"%s\",\"model\":\"%s\",\"run_id\":\"%s\",\"attempt\":%s,", \
      tr(id, js), tr(f["event"], js), tr(f["model"], js), tr(f["run_id"], js), jnum(att)
    printf "\"host\":\"%s\",\"reason\":\"%s\",\"exit_status\":%s,\"duration_s\":%s,\"cost\":%s,", \
      tr(f["host"], js), tr(f["reason"], js), jnum(ex), jnum(d), jnum(cost)
    printf "\"last_lines\":[%s]}", jl
  }
}' "$2/fields" "$3"
}
mlt_notify_client() {
  if command -v curl >/dev/null 2>&1; then echo curl; return 0; fi
  mlt_nw=
  if command -v wget >/dev/null 2>&1; then
    case $(wget --version 2>&1) in
      *"GNU Wget"*) echo wget; return 0 ;;
      *BusyBox*) mlt_nw=", and its wget is BusyBox's, which takes a URL only in its arguments (seen in the process list)" ;;
      *) mlt_nw=", and its wget is no GNU Wget" ;;
    esac
  fi
  if command -v python3 >/dev/null 2>&1 && python3 -c 'import urllib.request' >/dev/null 2>&1; then
    echo python3; return 0
  fi
  if [ -n "$mlt_nw" ]; then echo "none: no curl nor python3$mlt_nw"
  else echo "none: no curl, GNU wget nor python3 on PATH"; fi
  return 5
}
# mlt_notify_try CLIENT LINE FORMAT: one try at the target on line LINE of the targets file;
# prints `sent` or why not.
mlt_notify_try() {
  mlt_nn=$2 mlt_nb="$mlt_w/body.$3" mlt_nh="$mlt_w/headers.$3"
  case $1 in
    curl)
      mlt_nc=$(LC_ALL=C awk -v n="$2" -v b="$mlt_nb" -v t="$mlt_notify_timeout" '
        function q(s,   out, i, c) {
          out = ""
          for (i = 1; i <= length(s); i++) { c = substr(s, i, 1); if (c == "\\" || c == "\"") c = "\\" c; out = out c }
          return "\"" out "\""
        }
        FILENAME != ARGV[1] { h[++nh] = $0; next }
        FNR == n { u = $2 }
        END {
          print "url = " q(u); print "data-binary = " q("@" b)
          for (i = 1; i <= nh; i++) print "header = " q(h[i])
          print "max-time = " t; print "proto = \"=http,https\""; print "output = \"/dev/null\""
          print "write-out = \"%{http_code}\""; print "silent"
        }' "$mlt_targets" "$mlt_nh" | curl -q -K - 2> "$mlt_w/out")
      mlt_ne=$?
      case $mlt_ne:$mlt_nc in
        0:2[0-9][0-9]) echo sent ;;
        0:*) echo "HTTP $mlt_nc" ;;
        28:*) echo "timed out after $mlt_notify_timeout s" ;;
        6:*) echo "cannot resolve the host" ;;
        7:*) echo "cannot connect" ;;
        35:* | 60:*) echo "TLS failed" ;;
        *) echo "curl exit $mlt_ne" ;;
      esac ;;
    wget)
      set --
      while IFS= read -r mlt_nl; do set -- "$@" "--header=$mlt_nl"; done < "$mlt_nh"
      LC_ALL=C awk -v n="$mlt_nn" 'FNR == n { print $2 }' "$mlt_targets" |
        wget -S -o "$mlt_w/out" -O /dev/null -T "$mlt_notify_timeout" -t 1 --max-redirect=0 \
          --post-file="$mlt_nb" "$@" -i - > /dev/null 2>&1
      mlt_ne=$?
      mlt_nc=$(LC_ALL=C awk '$1 ~ /^HTTP\/[0-9.]+$/ && $2 ~ /^[0-9][0-9][0-9]$/ { c = $2 } END { print c }' "$mlt_w/out")
      if [ "$mlt_ne" = 0 ]; then echo sent
      elif [ -n "$mlt_nc" ]; then echo "HTTP $mlt_nc"
      elif LC_ALL=C awk '/timed out/ { f = 1 } END { exit !f }' "$mlt_w/out"; then
        echo "timed out after $mlt_notify_timeout s"
      elif [ "$mlt_ne" = 4 ]; then echo "cannot connect"
      elif [ "$mlt_ne" = 5 ]; then echo "TLS failed"
      else echo "wget exit $mlt_ne"; fi ;;
    python3)
      python3 - "$mlt_targets" "$2" "$mlt_nb" "$mlt_nh" "$mlt_notify_timeout" 2> "$mlt_w/out" <<'EOF' || echo "python3 failed"
import socket, sys, urllib.error, urllib.request
targets, line, body, headers, timeout = sys.argv[1:6]
with open(targets, encoding='latin-1') as f:
    url = f.read().split('\n')[int(line) - 1].split(' ', 1)[1].strip()
with open(body, 'rb') as f:
    data = f.read()
request = urllib.request.Request(url, data=data, method='POST')
class Refuse(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args):
        return None
with open(headers, encoding='latin-1') as f:
    for h in f.read().split('\n'):
        if ': ' in h:
            request.add_header(*h.split(': ', 1))
try:
    with urllib.request.build_opener(Refuse).open(request, timeout=float(timeout)) as answer:
        code = answer.status
    print('sent' if 200 <= code < 300 else 'HTTP %d' % code)
except urllib.error.HTTPError as e:
    print('HTTP %d' % e.code)
except (socket.timeout, TimeoutError):
    print('timed out after %s s' % timeout)
except urllib.error.URLError as e:
    if isinstance(e.reason, (socket.timeout, TimeoutError)):
        print('timed out after %s s' % timeout)
    elif isinstance(e.reason, socket.gaierror):
        print('cannot resolve the host')
    else:
        print('cannot connect')
except Exception as e:
    print('python3: %s' % type(e).__name__)
EOF
      ;;
  esac
  rm -f "$mlt_w/out"
}
mlt_notify_log() { printf '%s %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$1" >> "$mlt_log"; }
# mlt_notify_target CLIENT LINE FORMAT: the tries at one target; false when none was sent.
mlt_notify_target() {
  mlt_k=1 mlt_d=$mlt_notify_delay
  while :; do
    mlt_why=$(mlt_notify_try "$1" "$2" "$3")
    if [ "$mlt_why" = sent ]; then mlt_notify_log "$mlt_id target=$2 format=$3 try=$mlt_k sent"; return 0; fi
    mlt_notify_log "$mlt_id target=$2 format=$3 try=$mlt_k failed: $mlt_why"
    [ "$mlt_k" -lt "$mlt_notify_tries" ] || break
    sleep "$mlt_d"
    mlt_k=$((mlt_k + 1)) mlt_d=$((mlt_d * 2))
  done
  mlt_tw=tries; [ "$mlt_k" != 1 ] || mlt_tw=try
  echo "mlt: warning: the notification $mlt_id to target $2 ($3) was not sent: $mlt_why (after $mlt_k $mlt_tw)"
  return 1
}
mlt_notify_send() {
  mlt_targets=$1 mlt_ev=$2 mlt_log=$3 mlt_sent=$4
  if [ ! -f "$mlt_targets" ] || [ ! -f "$mlt_ev/fields" ] || [ -z "$mlt_log" ]; then mlt_notify_usage; fi
  mlt_id=$(mlt_notify_body id "$mlt_ev")
  if [ -n "$mlt_sent" ] && [ -f "$mlt_sent" ] &&
    LC_ALL=C awk -v id="$mlt_id" '$0 == id { f = 1 } END { exit !f }' "$mlt_sent"; then return 3; fi
  if ! mlt_client=$(mlt_notify_client); then
    mlt_notify_log "$mlt_id not sent: ${mlt_client#none: }"
    mlt_notify_warn "$mlt_client"
    return 5
  fi
  mlt_w="$mlt_ev/work.$$"
  (umask 077 && mkdir "$mlt_w") || return 2
  trap 'rm -rf "$mlt_w"' EXIT
  trap 'exit 143' TERM HUP INT
  for mlt_f in json ntfy slack; do
    mlt_notify_body "$mlt_f" "$mlt_ev" > "$mlt_w/body.$mlt_f"
  done
  mlt_title=$(mlt_notify_body title "$mlt_ev")
  printf 'Content-Type: application/json\n' > "$mlt_w/headers.json"
  printf 'Content-Type: application/json\n' > "$mlt_w/headers.slack"
  printf 'Content-Type: text/plain; charset=utf-8\nTitle: %s\n' "$mlt_title" > "$mlt_w/headers.ntfy"
  mlt_rc=0
  LC_ALL=C awk 'NF >= 2 { print NR, $1 }' "$mlt_targets" > "$mlt_w/formats"
  while read -r mlt_n mlt_f <&3; do
    case $mlt_f in
      json | ntfy | slack) mlt_notify_target "$mlt_client" "$mlt_n" "$mlt_f" || mlt_rc=4 ;;
      *) mlt_notify_log "$mlt_id target=$mlt_n format=? try=0 failed: unknown format"; mlt_rc=4 ;;
    esac
  done 3< "$mlt_w/formats"
  [ -z "$mlt_sent" ] || printf '%s\n' "$mlt_id" >> "$mlt_sent"
  return "$mlt_rc"
}
mlt_notify_warn() { echo "mlt: warning: cannot send notifications from $mlt_notify_here: ${1#none: }"; }
mlt_notify_usage() {
  echo "usage: notify_send.sh client | check | body WHAT EVENT_DIR | send TARGETS EVENT_DIR LOG [SENT]" >&2
  exit 2
}
case $1 in
  client) mlt_notify_client ;;
  check) mlt_c=$(mlt_notify_client) || { mlt_notify_warn "$mlt_c"; exit 5; } ;;
  body) mlt_notify_body "$2" "$3" ;;
  send) shift; mlt_notify_send "$@" ;;
  *) mlt_notify_usage ;;
esac
