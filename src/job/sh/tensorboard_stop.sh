# Stops the TensorBoard that tensorboard_start.sh started (stop_tensorboard): TERM to its group,
# KILL after 5 s.
p=$(cat "$j/tensorboard.pid" 2>/dev/null) && [ -n "$p" ] || exit 0
kill -s TERM -- "-$p" 2>/dev/null
i=0
while kill -s 0 -- "-$p" 2>/dev/null && [ "$i" -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
kill -s KILL -- "-$p" 2>/dev/null; rm -f "$j/tensorboard.pid"
