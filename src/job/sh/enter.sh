# The first line of a command on a model's job dir outside a run (job_dir_command in job_shell.cpp):
# into the remote dir mlt_rd; where it cannot, the command ends with cd's status and words.
cd "$mlt_rd" || exit
