# Prints the job's result as tagged lines (a half-written file cannot shift one value into another's
# place): read_job_result, and the follow's end (follow.sh). The first line of each file, read by
# the shell itself: this runs at every job's end, where each `cat` would be a process more between
# the end and mlt seeing it. Leaves mlt_sha and mlt_logd set, for release_at_end.sh.
mlt_rid=; { IFS= read -r mlt_rid < "$j/run_id"; } 2>/dev/null
mlt_exit=; { IFS= read -r mlt_exit < "$j/exit_status"; } 2>/dev/null
mlt_sha=; { IFS= read -r mlt_sha < "$j/sha256"; } 2>/dev/null
mlt_logd=; { IFS= read -r mlt_logd < "$j/log_dir"; } 2>/dev/null
mlt_stopped=; { IFS= read -r mlt_stopped < "$j/stopped"; } 2>/dev/null
mlt_guard=; { IFS= read -r mlt_guard < "$j/guard.stop"; } 2>/dev/null
printf 'run=%s\nexit=%s\nsha=%s\nlog=%s\ntrain=%s\nstopped=%s\nguard=%s\nunattended=%s\nnotify=%s\nfull=%s\n' "$mlt_rid" "$mlt_exit" "$mlt_sha" "$mlt_logd" "$([ -e "$j/training" ] && echo 1)" "$mlt_stopped" "$mlt_guard" "$([ -e "$j/shutdown.unattended" ] && echo 1)" "$([ -f "$j/notify.targets" ] && echo 1)" "$({ [ -e "$j/disk_full" ] || [ "$(df -Pk . 2>/dev/null | awk 'NR == 2 { print $4 }')" = 0 ]; } && echo 1)"
