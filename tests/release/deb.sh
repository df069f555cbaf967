#!/usr/bin/env bash
# The .deb (scripts/release.sh --deb): its Depends field was computed by dpkg-shlibdeps (it
# names the Debian 12 packages of the libraries mlt links), it holds /usr/bin/mlt and the docs
# and nothing of the build, and apt resolves its installation twice: on this machine, and as
# on a Debian 12 where nothing is installed yet (an empty dpkg status, the package lists this
# machine has cached), which needs no network but does not download or unpack anything.
# usage: tests/release/deb.sh DEB
# Fails when DEB is missing (ctest's release.package makes it first).
set -euo pipefail
deb=$1
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/release/lib.sh
. "$here/lib.sh"

[ -f "$deb" ] || fail "no $deb (run scripts/release.sh --deb)"
work=$(mktemp -d "${TMPDIR:-/tmp}/mlt-deb-test.XXXXXX")
trap 'rm -rf "$work"' EXIT

depends=$(dpkg-deb -f "$deb" Depends)
# One alternative a line: "libc6 (>= 2.34), a | b" gives libc6, a, b.
awk -v RS='[,|]' '{print $1}' <<<"$depends" >"$work/depends"
for pkg in libc6 libssh-4 libssl3 libarchive13 libyaml-cpp0.7 libstdc++6; do
  grep -qxF "$pkg" "$work/depends" || fail "Depends does not name $pkg: $depends"
done
for field in Maintainer Section Description; do
  [ -n "$(dpkg-deb -f "$deb" "$field")" ] || fail "the .deb has no $field"
done
dpkg-deb -c "$deb" | awk '{print $6}' >"$work/contents"
for f in ./usr/bin/mlt ./usr/share/doc/mlt/README.md ./usr/share/doc/mlt/LICENSE \
  ./usr/share/doc/mlt/docs/usage.md ./usr/share/doc/mlt/examples/basic/logistic_model.py; do
  grep -qxF "$f" "$work/contents" || fail "the .deb holds no $f"
done
if grep -vE '^\./usr/(bin/mlt|share/doc/mlt/.*|bin/|share/|share/doc/)?$' "$work/contents" >"$work/extra"; then
  fail "the .deb holds more than mlt and its docs: $(head -n 3 "$work/extra" | tr '\n' ' ')"
fi

# apt wants the file's path with a slash; no lock is taken for a simulation by other agents.
apt=(apt-get install --simulate -o Debug::NoLocking=1 "$(cd "$(dirname "$deb")" && pwd)/$(basename "$deb")")
"${apt[@]}" >"$work/here.log" 2>&1 || { cat "$work/here.log" >&2; fail "apt cannot install the .deb here"; }
grep -q '^Inst mlt ' "$work/here.log" || { cat "$work/here.log" >&2; fail "apt would not install mlt here"; }
if ! ls /var/lib/apt/lists/*_Packages* >/dev/null 2>&1; then
  echo "no cached package lists (apt-get update): the check on an empty system was not made"
  exit 0
fi
: >"$work/status"
"${apt[@]}" -o Dir::State::status="$work/status" >"$work/fresh.log" 2>&1 ||
  { cat "$work/fresh.log" >&2; fail "apt cannot resolve the .deb on an empty Debian system"; }
grep -q '^Inst mlt ' "$work/fresh.log" || { cat "$work/fresh.log" >&2; fail "apt would not install mlt on an empty system"; }
echo "the .deb depends on: $depends; on an empty system apt installs $(grep -c '^Inst ' "$work/fresh.log") packages"
