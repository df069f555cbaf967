# The sweeper (mlt_sweep in wrapper.sh, after alive.sh): run by the wrapper once the batch has
# ended, in a process group of its own (the one it lists is the wrapper's): the processes the
# training left behind (a DataLoader worker, a server it started, a child of a rank the gang
# stopped) are the job's, and hold the GPU and the bill. They get TERM, and KILL after 5 s, before
# the job's status is recorded. $1: the wrapper's pid (its group), $2: the run id, $3: the job dir
# relative to the remote dir. The sweeper's own commands never carry MLT_RUN_ID (mlt_sweep unsets
# it), so mlt_run_pids does not find them.
w=$1 mlt_r=$2 mlt_d=$3
mlt_left() {
  { if command -v ps >/dev/null 2>&1; then mlt_group_pids "$w"; fi
    mlt_run_pids "$mlt_r" "$mlt_d"; } | grep -vx -e "$w" -e "$$" | sort -u
}
mlt_kill() { printf '%s\n' "$mlt_p" | while read -r mlt_k; do kill -s "$1" "$mlt_k" 2>/dev/null; done; }
mlt_p=$(mlt_left)
[ -n "$mlt_p" ] || exit 0
mlt_list=$(printf '%s\n' "$mlt_p" | paste -sd ' ' -)
echo "mlt: the training left processes behind ($mlt_list); stopping them"
mlt_kill TERM
mlt_t=0
while [ "$mlt_t" -lt 50 ] && [ -n "$(mlt_left)" ]; do sleep 0.1; mlt_t=$((mlt_t + 1)); done
mlt_p=$(mlt_left)
[ -z "$mlt_p" ] || mlt_kill KILL
exit 0
