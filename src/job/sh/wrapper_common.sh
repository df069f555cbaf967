# The first lines of both wrappers a run leaves on the remote, run.sh and shutdown.sh (wrapper.sh,
# shutdown_wrapper.sh), run in the remote dir: mlt_dir and mlt_job (the job dir j, relative, made
# absolute: nothing the user's commands do changes them), exported as MLT_REMOTE_DIR and
# MLT_JOB_DIR. mlt_login_batch FILE: runs a batch file as MLTK does: `bash --login` (so /etc/profile
# and ~/.bash_profile set up PATH, CUDA_HOME, ...), plain sh where there is no bash; returns its
# status. The wrapper's lock on `running` (fd 9) is not passed on: what the batch leaves behind must
# not hold it.
mlt_dir=$(pwd)
mlt_job="$mlt_dir/$j"
export MLT_REMOTE_DIR="$mlt_dir" MLT_JOB_DIR="$mlt_job"
mlt_login_batch() {
  if command -v bash >/dev/null 2>&1; then bash --login "$1" 9>&-; else sh "$1" 9>&-; fi
}
