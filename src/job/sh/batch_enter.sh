# The first line of a batch of the user's commands (batch.sh, shutdown.batch.sh), after its
# variables: back to the remote dir (a login profile may `cd`). The settings' environment follows,
# exported as MLTK exports it, after the profile so that `$PATH` is the login one.
cd "$MLT_REMOTE_DIR" || exit 1
