# Removes the lock if it is the run's (release_run); nothing when it is gone or another's.
if mlt_mine; then rm -f "$j/lock"; fi
