# Starts the run's job from its run.sh (start_job), after launch.sh and log_line.sh: at most once
# per run (the `started` marker), only while the run holds the lock (a `stop` meanwhile released
# it), and prints its process group. Records phase starting, then running. A run that continues here
# after its host was lost starts as the attempt its lock records, with one marker line after what
# the earlier attempts showed.
{ mlt_mine && mlt_files_mine; } || mlt_foreign
mlt_phase starting
mlt_attempt=$(sed -n 's/^attempt=//p' "$j/lock" 2>/dev/null)
mlt_fresh() {
  [ -z "$mlt_attempt" ] || mlt_log_line "==== mlt: attempt $mlt_attempt of run $r (continued on this host: the previous one was lost) ===="
}
mlt_again() { :; }
mlt_launch "$j/started" "$j/run.sh" "$j/console.log" "$j/pid" "$j/exit_status" "$mlt_attempt"
mlt_phase running
cat "$j/pid"
