#!/usr/bin/env bash
# The release tarball (scripts/release.sh) in a root filesystem that holds only glibc's files
# (those of Debian's package libc6) and /dev/null, /dev/urandom, /tmp and /etc/passwd: the
# checksum holds; `ld.so --list` of bin/mlt and of each library in lib/ resolves everything to
# glibc or the tarball's lib/, both inside that root and on this machine with its libraries
# beside (the rpath wins); inside the root, `mlt --version`, an error (a thrown exception),
# `mlt ssh-keygen` and a whole `mlt ssh ... train` of examples/basic against a throwaway sshd
# on 127.0.0.1 outside the root work, and the model's archive lands next to its spec.
# usage: tests/release/tarball.sh TARBALL
# Needs root (chroot, mknod, unshare --mount), as the integration tests do; fails without it
# or without the tarball (ctest's release.package makes it first).
set -euo pipefail
tarball=$1
here=$(cd "$(dirname "$0")" && pwd)
source_dir=$(cd "$here/../.." && pwd)
# shellcheck source=tests/release/lib.sh
. "$here/lib.sh"

[ -f "$tarball" ] || fail "no $tarball (run scripts/release.sh)"
[ "$(id -u)" -eq 0 ] || fail "the test needs root (chroot, mknod, unshare --mount)"

work=$(mktemp -d "${TMPDIR:-/tmp}/mlt-release-test.XXXXXX")
# shellcheck source=scripts/lib/loopback-sshd.sh
. "$source_dir/scripts/lib/loopback-sshd.sh"
trap 'stop_loopback_sshd; rm -rf "$work"' EXIT

(cd "$(dirname "$tarball")" && sha256sum --quiet -c "$(basename "$tarball").sha256") ||
  fail "the checksum file does not match $tarball"

# The root: glibc's files at their paths, and nothing else but what a chroot needs.
root=$work/root
glibc_files=$work/glibc-files
mkdir -p "$root/usr"
# Debian 12 has merged /usr: /lib, /lib64... are links into /usr, as in the root.
for d in bin sbin lib lib64; do
  if [ -L "/$d" ]; then cp -d "/$d" "$root/"; else mkdir -p "$root/$d"; fi
  [ ! -d "/usr/$d" ] || mkdir -p "$root/usr/$d"
done
dpkg -L libc6 | while read -r f; do
  if [ -f "$f" ] || [ -L "$f" ]; then
    mkdir -p "$root$(dirname "$f")"
    cp -d --preserve=mode "$f" "$root$f"
    echo "$f"
  fi
done >"$glibc_files"
mkdir -p "$root/dev" "$root/proc" "$root/tmp" "$root/etc" "$root/root" "$root/opt"
chmod 1777 "$root/tmp"
mknod -m 0666 "$root/dev/null" c 1 3
mknod -m 0444 "$root/dev/urandom" c 1 9
echo "root:x:0:0:root:/root:/nonexistent" >"$root/etc/passwd"
echo "root:x:0:" >"$root/etc/group"
tar -xzf "$tarball" -C "$root/opt"
top=$(cd "$root/opt" && echo mlt-*)
mlt=/opt/$top/bin/mlt
[ -x "$root$mlt" ] || fail "no bin/mlt in the tarball's $top/"

# LABEL PREFIX COMMAND...: COMMAND (an ld.so --list) must succeed, and each path it resolves
# a library to must be glibc's or under PREFIX, the tarball's top dir in that view.
check_resolution() {
  local label=$1 prefix=$2 listing path
  shift 2
  listing=$("$@" 2>&1) || fail "$label: $listing"
  if grep -q "not found" <<<"$listing"; then fail "$label: $(grep "not found" <<<"$listing" | head -n 1)"; fi
  while read -r path; do
    case $path in "$prefix"/*) continue ;; esac
    grep -qxF "$path" "$glibc_files" || grep -qxF "/usr$path" "$glibc_files" ||
      grep -qxF "${path#/usr}" "$glibc_files" || fail "$label: $path is neither glibc's nor the tarball's"
  done < <(awk '$2 == "=>" {print $3} $2 != "=>" && $1 ~ /^\// {print $1}' <<<"$listing")
}
ldso=/lib64/ld-linux-x86-64.so.2
for f in "$root/opt/$top/bin/mlt" "$root/opt/$top"/lib/*; do
  [ -e "$f" ] || continue
  rel=${f#"$root"}
  check_resolution "in the root: $rel" "/opt/$top" chroot "$root" $ldso --list "$rel"
  # On this machine, where the system's own libssh and libcrypto are there too.
  check_resolution "here: $rel" "$root/opt/$top" env -u LD_LIBRARY_PATH $ldso --list "$f"
done

# /proc is mounted as on any real system: glibc finds the binary's $ORIGIN (its rpath) through
# /proc/self/exe. In a mount namespace of its own, so that it goes away with the process.
chroot=$(command -v chroot)
in_root() {
  # shellcheck disable=SC2016 # expanded by that sh
  timeout 60 unshare --mount --propagation private /bin/sh -c \
    'c=$1 r=$2 p=$3; shift 3; mount -t proc proc "$r/proc" && exec env -i HOME=/root PATH="$p" "$c" "$r" "$@"' \
    - "$chroot" "$root" "/opt/$top/bin" "$mlt" "$@" </dev/null
}
version=$(in_root --version) || fail "mlt --version failed"
[ "$version" = "mlt ${top#mlt-}" ] || fail "mlt --version printed '$version', not 'mlt ${top#mlt-}'"
status=0
in_root no-such-command 2>/dev/null || status=$?
[ "$status" -eq 2 ] || fail "an unknown command exited $status, not 2 (an exception that did not unwind?)"
in_root ssh-keygen release >/dev/null 2>&1 || fail "mlt ssh-keygen failed"
for key in id_release id_release.pub; do
  [ -s "$root/root/.ssh/$key" ] || fail "mlt ssh-keygen wrote no /root/.ssh/$key"
done

cp "$root/root/.ssh/id_release.pub" "$work/authorized_keys"
start_loopback_sshd "$work" "$work/authorized_keys"
mkdir -p "$root/root/project" "$root/root/.mltk" "$work/remote"
cp "$source_dir/examples/basic/logistic_model.py" "$source_dir/examples/basic/logistic_model.ssh.yaml" \
  "$root/root/project/"
# The remote side is this machine, outside the root: its logs stay in the work dir.
printf 'ssh:\n  remote_log_dir: "%s/remote-logs/{model}"\n' "$work" >"$root/root/.mltk/user_settings.yaml"
if ! in_root ssh -h "root@127.0.0.1:$SSHD_PORT/$work/remote" -i /root/.ssh/id_release \
  train /root/project/logistic_model.py --epochs 2 >"$work/train.log" 2>&1; then
  cat "$work/train.log" >&2
  fail "mlt ssh ... train failed inside the root"
fi
archive=$root/root/project/logistic_model.mltk.zip
[ "$(head -c 2 "$archive" 2>/dev/null)" = PK ] || { cat "$work/train.log" >&2; fail "no archive at $archive"; }
echo "release tarball: $top runs in a glibc-only root; train landed $(du -k "$archive" | cut -f1) KiB"
