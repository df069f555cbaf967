# A start sent ahead (start_job_if_current), before start.sh: without a start or a claim yet, the
# ticket mlt_ticket is claimed (renamed to start.claimed) only when nothing is left to upload
# (mlt_current, start_test.sh); otherwise it goes, and "changed" is printed.
{ mlt_mine && mlt_files_mine; } || mlt_foreign
if [ ! -e "$j/started" ] && [ ! -e "$j/start.claimed" ]; then
  if ! mlt_current || ! mv "$j/start.ticket.$mlt_ticket" "$j/start.claimed" 2>/dev/null; then rm -f "$j/start.ticket.$mlt_ticket"; echo changed; exit 0; fi
fi
