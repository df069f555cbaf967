# Starts TensorBoard for the log dir the model's job recorded (start_tensorboard), on
# 127.0.0.1:mlt_port: the job's venv's, else one on PATH, detached (its own session), and waits
# (bounded, 60 s) until it serves. Exit 3: no log dir yet; 4: no tensorboard; 5: it ended first, or
# did not serve in time.
d=$(cat "$j/log_dir" 2>/dev/null)
[ -n "$d" ] || { echo 'its job recorded no log dir yet: train it first' >&2; exit 3; }
if [ -x .venv/bin/tensorboard ]; then tb=.venv/bin/tensorboard
elif command -v tensorboard >/dev/null 2>&1; then tb=tensorboard
else echo "tensorboard is not installed there (not in .venv, not on PATH): install it, e.g. pip install tensorboard (in the job's venv: .venv/bin/pip install tensorboard)" >&2; exit 4; fi
mkdir -p "$j" || exit 1
(exec setsid "$tb" --logdir "$d" --port "$mlt_port" --host 127.0.0.1 > "$j/tensorboard.log" 2>&1 < /dev/null) &
echo $! > "$j/tensorboard.pid"
i=0
while ! grep -q 'http://' "$j/tensorboard.log" 2>/dev/null; do
  kill -0 $! 2>/dev/null || { echo 'tensorboard ended at once:' >&2; tail -n 5 "$j/tensorboard.log" >&2; exit 5; }
  i=$((i + 1)); [ "$i" -lt 600 ] || { echo 'tensorboard did not serve within 60 s' >&2; exit 5; }
  sleep 0.1
done
