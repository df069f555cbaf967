# Sourced by scripts that need a throwaway OpenSSH server on 127.0.0.1.
# start_loopback_sshd DIR AUTHORIZED_KEYS_FILE: starts sshd with its own host key in DIR and
# sets SSHD_PORT and SSHD_PID; stop_loopback_sshd stops it. Nothing listens beyond loopback.
# SSHD_EXTRA_CONFIG, when set, is appended to its sshd_config (e.g. a SetEnv line).

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

start_loopback_sshd() {
  local dir=$1 authorized=$2 sshd=/usr/sbin/sshd
  [ -x "$sshd" ] || { echo "sshd not found at $sshd (run scripts/install-deps.sh)" >&2; return 1; }
  if [ "$(id -u)" -eq 0 ] && [ ! -d /run/sshd ]; then mkdir -p /run/sshd && chmod 0755 /run/sshd; fi
  ssh-keygen -q -t ed25519 -N '' -C demo-host -f "$dir/host_key"
  local attempt
  for attempt in 1 2 3 4 5; do
    SSHD_PORT=$(free_port)
    cat > "$dir/sshd_config" <<CFG
ListenAddress 127.0.0.1
Port $SSHD_PORT
HostKey $dir/host_key
AuthorizedKeysFile $authorized
PidFile $dir/sshd.pid
StrictModes no
UsePAM no
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
Subsystem sftp internal-sftp
LogLevel VERBOSE
${SSHD_EXTRA_CONFIG:-}
CFG
    : > "$dir/sshd.log"
    "$sshd" -D -e -f "$dir/sshd_config" 2>>"$dir/sshd.log" &
    SSHD_PID=$!
    local i
    for i in $(seq 1 100); do
      grep -q 'Server listening' "$dir/sshd.log" && return 0
      kill -0 "$SSHD_PID" 2>/dev/null || break
      sleep 0.05
    done
    kill "$SSHD_PID" 2>/dev/null || true
    wait "$SSHD_PID" 2>/dev/null || true
  done
  echo "could not start sshd; its log:" >&2
  cat "$dir/sshd.log" >&2
  return 1
}

stop_loopback_sshd() {
  [ -n "${SSHD_PID:-}" ] || return 0
  kill "$SSHD_PID" 2>/dev/null || true
  wait "$SSHD_PID" 2>/dev/null || true
  SSHD_PID=
}
