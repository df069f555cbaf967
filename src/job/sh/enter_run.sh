# The first line of every command that acts for one run (run_command in job_shell.cpp): into the
# remote dir mlt_rd, whose absence ends the command. A multi-line command must not run in the wrong
# directory; a remote dir that is not there at all is gone (mlt_st_gone): a run-scoped command comes
# after the run took its lock there.
cd "$mlt_rd" 2>/dev/null || { [ -e "$mlt_rd" ] || { echo 'the remote dir is gone' >&2; exit "$mlt_st_gone"; }; cd "$mlt_rd" || exit 1; }
