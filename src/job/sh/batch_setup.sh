# The job's batch (batch.sh, make_user_batch in scripts.cpp) after the settings' environment: a stop
# signals the whole process group. Before the training it ends the batch; once the training runs
# (batch_train.sh sets these traps to `:`), this shell waits for it (it may take its time to save
# and exit) and ends with its status. A caught signal is reset for the commands it starts. MLTK runs
# venv activation and startup_cmds with `set -e`: the first failure ends the batch with its status,
# and the training does not start.
trap 'exit 143' TERM
trap 'exit 130' INT
trap 'exit 129' HUP
set -e
