# Starts the channel listener of a control shell (docs/remote-protocol.md, "Channels without
# a login"): a python3 process listening on a unix socket in a private dir of the home, which runs
# each command that a direct-streamlocal channel to it names, as `sh -c`, without the
# account's login shell and startup files. Optional: without python3 (or where it fails)
# mlt opens exec channels as before.
# Inputs: mlt_watch (the control shell's pid: the listener ends within 2 s of it), mlt_pys
# (where python3 is looked for first, separated by blanks; then on PATH), and in
# the environment MLT_LISTEN_TOKEN (what every channel's header starts with; removed from
# the environment before any command runs, and never in an argv).
# Prints "listening PATH" once the socket accepts, or "none WHY".
# The protocol of one channel: mlt sends "TOKEN LEN\n", LEN bytes of command, then the
# command's stdin (the channel's EOF closes it). The listener answers with frames: a type
# byte ("o" stdout, "e" stderr), a 4-byte big-endian length and that many bytes; then "x"
# and the exit status as a 4-byte big-endian signed number (-1: killed by a signal). A
# header that is not the token closes the channel without a status.
# python3 is looked for where the system keeps it first: a pyenv or conda shim on PATH may
# cost half a second to start.
mlt_py=
for mlt_p in $mlt_pys; do
  if [ -x "$mlt_p" ]; then mlt_py=$mlt_p; break; fi
done
[ -n "$mlt_py" ] || mlt_py=$(command -v python3 2>/dev/null) || { echo "none no python3"; exit 0; }
# The socket's dir is in the account's home, not in /tmp: a side connection that reached
# another machine behind the same name (a login pool) must find nothing there that another
# user could have made; a home shared over NFS holds a socket no other machine connects to.
case ${HOME:-} in
  /*) ;;
  *) echo "none no home"; exit 0 ;;
esac
mlt_dir=$(mktemp -d "$HOME/.mlt-l.XXXXXX" 2>/dev/null) || { echo "none no dir in the home"; exit 0; }
# What python3 (or a shim in front of it) may change in the environment it passes on: put
# back for the commands. -I -S: no user site, no site packages, no PYTHON* variables.
MLT_PATH=$PATH
MLT_LC_CTYPE=${LC_CTYPE-unset}
MLT_LC_CTYPE_SET=${LC_CTYPE+1}
export MLT_PATH MLT_LC_CTYPE MLT_LC_CTYPE_SET
"$mlt_py" -I -S - "$mlt_dir" "$mlt_watch" <<'EOF' || { rm -rf "$mlt_dir"; echo "none python3 failed"; }
import os, select, signal, socket, struct, sys


def alive(pid):
    # Another user's process under that pid (EPERM): the control shell is gone too.
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return True


def recv_exact(conn, n):
    buf = b""
    while len(buf) < n:
        chunk = conn.recv(min(n - len(buf), 65536))
        if not chunk:
            raise EOFError
        buf += chunk
    return buf


def header(conn):
    line = b""
    while not line.endswith(b"\n"):
        if len(line) > 256:
            raise EOFError
        c = conn.recv(1)
        if not c:
            raise EOFError
        line += c
    return line.split()


def run(command, conn, where):
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.setsid()
            try:
                os.chdir(where)
            except OSError:  # as sshd, which starts in / when the home is gone
                pass
            os.dup2(conn.fileno(), 0)
            os.dup2(out_w, 1)
            os.dup2(err_w, 2)
            for sig in (signal.SIGPIPE, signal.SIGTERM, signal.SIGHUP):
                signal.signal(sig, signal.SIG_DFL)
            os.execv(b"/bin/sh", [b"sh", b"-c", command])
        finally:
            os._exit(127)
    os.close(out_w)
    os.close(err_w)
    kinds = {out_r: b"o", err_r: b"e"}
    sending = True
    while kinds:
        for fd in select.select(list(kinds), [], [])[0]:
            data = os.read(fd, 262144)
            if data and sending:
                try:
                    conn.sendall(kinds[fd] + struct.pack(">I", len(data)) + data)
                    continue
                except OSError:
                    sending = False
            if not data or not sending:
                os.close(fd)
                del kinds[fd]
    status = os.waitpid(pid, 0)[1]
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1
    if sending:
        conn.sendall(b"x" + struct.pack(">i", code))


def serve(conn, token, where):
    words = header(conn)
    if len(words) != 2 or words[0] != token or not words[1].isdigit():
        return
    run(recv_exact(conn, int(words[1])), conn, where)


def restore_environment():
    os.environ["PATH"] = os.environ.pop("MLT_PATH", os.environ.get("PATH", ""))
    ctype = os.environ.pop("MLT_LC_CTYPE", "unset")
    if os.environ.pop("MLT_LC_CTYPE_SET", "") == "1":
        os.environ["LC_CTYPE"] = ctype
    else:
        os.environ.pop("LC_CTYPE", None)


def leave(signum, frame):
    raise SystemExit(0)


def main():
    where, watch = sys.argv[1], int(sys.argv[2])
    token = os.environ.pop("MLT_LISTEN_TOKEN", "").encode()
    if not token:
        raise SystemExit(1)
    restore_environment()
    path = os.path.join(where, "s")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(socket.SOMAXCONN)
    ready_r, ready_w = os.pipe()
    if os.fork():
        os.close(ready_w)
        if os.read(ready_r, 1) != b"1":
            raise SystemExit(1)
        sys.stdout.write("listening %s\n" % path)
        sys.stdout.flush()
        os._exit(0)
    os.close(ready_r)
    os.setsid()
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    # The commands start where the control shell runs (the account's home, as sshd's exec
    # channels do); the listener itself holds no dir of the account's.
    home = os.getcwd()
    os.chdir("/")
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, leave)
    signal.signal(signal.SIGHUP, leave)
    os.write(ready_w, b"1")
    os.close(ready_w)
    try:
        while alive(watch):
            if not select.select([server], [], [], 2.0)[0]:
                continue
            try:
                conn = server.accept()[0]
            except OSError:
                continue
            try:
                child = os.fork()
            except OSError:  # no process to spare: that channel ends without a status
                conn.close()
                continue
            if child == 0:
                server.close()
                for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP):
                    signal.signal(sig, signal.SIG_DFL)
                try:
                    serve(conn, token, home)
                except (OSError, EOFError, ValueError):
                    pass
                os._exit(0)
            conn.close()
    finally:
        os.unlink(path)
        os.rmdir(where)


main()
EOF
