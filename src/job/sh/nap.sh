# mlt_nap SECONDS, the wait of a follow between two looks (before follow.sh): a sleep. For
# shutdown_cmds; a job's follow waits on its wrapper's lock (nap_on_job.sh).
mlt_nap() { sleep "$1"; }
