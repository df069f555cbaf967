# Starts the run's shutdown_cmds script (stdin) detached, at most once per run (start_shutdown),
# after launch.sh; prints "again" when it had been started before. The script goes up only by the
# caller that created the marker: no second caller (a retry, another machine's --resume) can rewrite
# a script that runs. With mlt_collected (1 or empty), phase collected is recorded in the run's lock
# first.
mlt_files_mine || mlt_foreign
if [ -n "$mlt_collected" ]; then mlt_mine || mlt_foreign; mlt_phase collected; fi
mlt_fresh() { cat > "$j/shutdown.sh" || exit 1; }
mlt_again() { cat > /dev/null; echo again; }
mlt_launch "$j/shutdown.started" "$j/shutdown.sh" "$j/shutdown.log" "$j/shutdown.pid" "$j/shutdown.status"
