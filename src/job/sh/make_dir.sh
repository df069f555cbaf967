# Before enter_run.sh in the command that takes the lock (acquire_run): the remote dir is created if
# missing, the one place it is.
mkdir -p -- "$mlt_rd" || exit 1
