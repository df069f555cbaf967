# The wrapper of a run's shutdown_cmds, shutdown.sh (make_shutdown_script in scripts.cpp), after
# wrapper_common.sh: records its process group, writes the batch mlt_batch and runs it in the login
# shell; its status file gets the batch's status.
echo $$ > "$mlt_job/shutdown.pid.tmp" && mv -f "$mlt_job/shutdown.pid.tmp" "$mlt_job/shutdown.pid"
printf '%s' "$mlt_batch" > "$mlt_job/shutdown.batch.sh" || exit 1
mlt_login_batch "$mlt_job/shutdown.batch.sh"
mlt_s=$?
printf '%s\n' "$mlt_s" > "$mlt_job/shutdown.status.tmp" && mv -f "$mlt_job/shutdown.status.tmp" "$mlt_job/shutdown.status"
