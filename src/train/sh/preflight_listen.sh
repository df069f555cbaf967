# Starts the listener of a multi-node run's preflight on rank 0 (start_listener in preflight.cpp):
# python3 listens on mlt_addr:mlt_port (on every address when mlt_addr is not one of this host's: a
# NAT's public address), detached, for mlt_seconds, and ends by itself. Prints pid=PID once it
# listens. Exit 3: no python3 here (no preflight); 4: it cannot listen (its words on stderr).
command -v python3 >/dev/null || { echo 'no python3' >&2; exit 3; }
mlt_listener=$(cat <<'PY'
import errno, socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
try:
    s.bind((sys.argv[1], int(sys.argv[2])))
except OSError as e:
    if e.errno != errno.EADDRNOTAVAIL:
        raise
    s.bind(("", int(sys.argv[2])))
s.listen(16)
print("mlt-listening", flush=True)
s.settimeout(0.5)
end = time.time() + int(sys.argv[3])
while time.time() < end:
    try:
        c, _ = s.accept()
        c.close()
    except socket.timeout:
        pass
PY
)
f=$(mktemp) || exit 1
setsid python3 -c "$mlt_listener" "$mlt_addr" "$mlt_port" "$mlt_seconds" > "$f" 2>&1 < /dev/null &
p=$!
i=0
while ! grep -q mlt-listening "$f" && kill -0 "$p" 2>/dev/null && [ "$i" -lt 100 ]; do
  sleep 0.05
  i=$((i + 1))
done
if grep -q mlt-listening "$f"; then rm -f "$f"; echo "pid=$p"; exit 0; fi
cat "$f" >&2
rm -f "$f"
kill "$p" 2>/dev/null
exit 4
