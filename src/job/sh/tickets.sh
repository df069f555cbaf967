# The start tickets of the run (start_job_if_current): every one is removed (voided: a start sent
# ahead before now has claimed the start by now, which is said as "claimed": nothing may be uploaded
# any more; or it never will). Then, with mlt_ticket not empty (the lock's start sent ahead), that
# ticket is written; without it (a full disk) the start sent ahead does not start the job: start_job
# does, after the upload. After acquire.sh, and for void_start_tickets.
mlt_mine || mlt_foreign
rm -f "$j"/start.ticket.* || exit 1
if [ -e "$j/start.claimed" ]; then echo claimed
elif [ -n "$mlt_ticket" ]; then : > "$j/start.ticket.$mlt_ticket" 2>/dev/null || :; fi
