# mlt_launch MARKER SCRIPT LOG PID STATUS [ATTEMPT]: launches `sh SCRIPT` detached (its own session:
# it survives the connection), its output appended to LOG, unless MARKER exists, then waits
# (bounded, 10 s) for the PID file the script writes first (looking every 10 ms for the first half
# second: a script records it at once, and the start is one round trip), or for its STATUS file. The
# marker is created atomically first (noclobber): of concurrent callers exactly one launches. The
# caller defines mlt_fresh, run after the marker and before the launch (writing the script, so a
# second caller can never rewrite a script that runs), and mlt_again, run when the marker existed
# already. ATTEMPT, when not empty, goes to the script as MLT_ATTEMPT. A library of functions: it
# runs nothing itself.
mlt_launch() {
  if [ ! -e "$1" ]; then command -v setsid >/dev/null || { echo 'setsid not found (util-linux)' >&2; exit 127; }; fi
  if (set -C; : > "$1") 2>/dev/null; then
    mlt_fresh
    if [ -n "$6" ]; then (setsid env MLT_ATTEMPT="$6" sh "$2" >> "$3" 2>&1 < /dev/null &)
    else (setsid sh "$2" >> "$3" 2>&1 < /dev/null &); fi
  else
    mlt_again
  fi
  mlt_t=$(($(date +%s) + 10)); mlt_q=50
  while [ ! -s "$4" ] && [ ! -e "$5" ] && [ "$(date +%s)" -le "$mlt_t" ]; do
    if [ "$mlt_q" -gt 0 ]; then mlt_q=$((mlt_q - 1)); sleep 0.01; else sleep 0.05; fi
  done
  [ -s "$4" ] || { echo 'it did not record its process group within 10 s' >&2; exit 1; }
}
