#!/usr/bin/env bash
# The README's main job: builds mlt, starts a throwaway OpenSSH server on 127.0.0.1 with its
# own host key, creates a key with `mlt ssh-keygen`, and trains the example model
# (examples/basic) through that server with `mlt ssh ... train`.
# Everything lives in a temporary directory (kept with MLT_DEMO_KEEP=1).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${MLT_BUILD_DIR:-$root/build}
"$root/scripts/install-deps.sh"
MLT_BUILD_DIR=$build MLT_TARGET=mlt "$root/scripts/build.sh"
mlt=$build/src/mlt
. "$root/scripts/lib/loopback-sshd.sh"

work=$(mktemp -d "${TMPDIR:-/tmp}/mlt-demo.XXXXXX")
cleanup() {
  stop_loopback_sshd
  if [ "${MLT_DEMO_KEEP:-0}" = 1 ]; then echo "demo files kept in $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

# The demo user's world: its own HOME, so the real ~/.ssh and ~/.mltk stay untouched.
export HOME=$work/home
mkdir -p "$HOME" "$work/remote"
unset SSH_AUTH_SOCK MLTK_USER_SETTINGS_PATH MLTK_CACHE_DIR

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "mlt ssh-keygen demo   (a key pair for the demo server)"
"$mlt" ssh-keygen demo
cp "$HOME/.ssh/id_demo.pub" "$work/authorized_keys"

step "starting a throwaway sshd on 127.0.0.1"
start_loopback_sshd "$work" "$work/authorized_keys"
user=$(id -un)
echo "sshd listens on 127.0.0.1:$SSHD_PORT; remote dir $work/remote"

# The example model, copied so that its archive lands in the demo dir, not in the repo.
mkdir -p "$work/project"
cp "$root/examples/basic/logistic_model.py" "$root/examples/basic/logistic_model.ssh.yaml" "$work/project/"
# Remote logs inside the demo dir too (the "remote" is this machine's real home otherwise).
mkdir -p "$HOME/.mltk"
cat > "$HOME/.mltk/user_settings.yaml" <<YAML
ssh:
  remote_log_dir: "$work/remote-logs/{model}"
YAML
cd "$work/project"

# host/dir is relative to the remote login dir (as in MLTK); host//dir is absolute.
host="$user@127.0.0.1:$SSHD_PORT/$work/remote"
step "mlt ssh -h $host -i ~/.ssh/id_demo status"
"$mlt" ssh -h "$host" -i "$HOME/.ssh/id_demo" status

step "mlt ssh -h $host -i ~/.ssh/id_demo train logistic_model --clean"
"$mlt" ssh -h "$host" -i "$HOME/.ssh/id_demo" train logistic_model --clean

step "mlt ssh ... status, and the local history (mlt jobs)"
"$mlt" ssh -h "$host" -i "$HOME/.ssh/id_demo" status
"$mlt" jobs

step "what landed locally"
echo "archive (next to the spec):"
ls -l "$work/project/logistic_model.mltk.zip"
python3 -m zipfile -l "$work/project/logistic_model.mltk.zip"
echo "logs ($HOME/.mltk/models/logistic_model):"
(cd "$HOME/.mltk/models/logistic_model" && find . -type f | sort)
