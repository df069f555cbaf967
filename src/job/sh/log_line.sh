# mlt_log_line TEXT: TEXT as a line of its own at the end of the job's console log (after a line
# break when the log does not end with one), for the start of a later attempt (start.sh,
# restart.sh). A library of functions: it runs nothing itself.
mlt_log_line() {
  mlt_c=$(tail -c 1 "$j/console.log" 2>/dev/null)
  { [ -z "$mlt_c" ] || echo; printf '%s\n' "$1"; } >> "$j/console.log" || { mlt_nospace; exit 1; }
}
