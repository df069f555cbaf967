# Hands the run's notifications to the host (JobDir::hand_notifications in notify_host.cpp), after
# run_functions.sh, right after the lock was taken and before the job starts. Inputs: the targets
# file on stdin (FORMAT URL lines: secrets, so never in this command's text), mlt_notify_info (the
# notify.info lines: host=, elapsed=, cost=, price=), mlt_notify_send (notify_send.sh's
# text). Writes notify.targets (0600, temp + mv) and notify.info, then asks notify_send.sh which
# HTTP client this host has: prints `client=curl` (wget, python3), or `client=none: WHY` and
# removes notify.targets (the guard then sends nothing; the attached mlt sends in its place).
{ mlt_mine && mlt_files_mine; } || mlt_foreign
rm -f "$j/notify.targets.tmp"
if ! { (umask 077 && cat > "$j/notify.targets.tmp") && chmod 600 "$j/notify.targets.tmp" &&
  mv -f "$j/notify.targets.tmp" "$j/notify.targets" && printf '%s' "$mlt_notify_info" > "$j/notify.info"; }; then
  rm -f "$j/notify.targets.tmp" "$j/notify.targets"; mlt_nospace; exit 1
fi
mlt_c=$(sh -c "$mlt_notify_send" notify_send client 2>/dev/null) || rm -f "$j/notify.targets"
printf 'client=%s\n' "${mlt_c:-none: notify_send.sh did not run}"
