#!/usr/bin/env bash
# The README's main job: builds mlt, starts a throwaway OpenSSH server on 127.0.0.1 with its
# own host key, creates a key with `mlt ssh-keygen` and talks to the server through mlt.
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

# host/dir is relative to the remote login dir (as in MLTK); host//dir is absolute.
step "mlt ssh -h $user@127.0.0.1:$SSHD_PORT/$work/remote -i ~/.ssh/id_demo status"
"$mlt" ssh -h "$user@127.0.0.1:$SSHD_PORT/$work/remote" -i "$HOME/.ssh/id_demo" status

step "the same host again, now known (no host key notice)"
"$mlt" ssh -h "$user@127.0.0.1:$SSHD_PORT/$work/remote" -i "$HOME/.ssh/id_demo" status

step "done"
echo "host key recorded in $HOME/.ssh/known_hosts:"
cut -c1-60 "$HOME/.ssh/known_hosts"
