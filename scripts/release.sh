#!/usr/bin/env bash
# Builds the release tarball dist/mlt-VERSION-linux-x86_64.tar.gz and its checksum file
# (docs/install.md): mlt-VERSION/bin/mlt (mlt-portable, stripped), lib/ (the shared libraries
# it needs beyond glibc, found through its rpath $ORIGIN/../lib), share/doc/mlt/ (README,
# LICENSE, docs, examples, BUILDINFO with the glibc floor, the bundled libraries' copyright
# files). With --deb, also the .deb of the ordinary build (cpack -G DEB).
# --build-dir DIR packages from a configured build dir (only mlt-portable is linked there, and
# mlt for --deb); without it, a build without tests is configured and built in build-release/.
# Built on Debian 12 (dpkg tells which files are glibc's, patchelf sets the libraries' rpath).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=
deb=0
out=$root/dist
usage() { echo "usage: scripts/release.sh [--build-dir DIR] [--deb] [--out DIR]" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    --build-dir) [ $# -ge 2 ] || usage; build=$(cd "$2" && pwd); shift ;;
    --deb) deb=1 ;;
    --out) [ $# -ge 2 ] || usage; out=$2; shift ;;
    *) usage ;;
  esac
  shift
done
for tool in dpkg patchelf objdump strip sha256sum; do
  command -v "$tool" >/dev/null || { echo "release.sh: $tool not found (scripts/install-deps.sh)" >&2; exit 1; }
done

if [ -z "$build" ]; then
  # Configured as scripts/test.sh configures its gcc build (no debug info), without the tests.
  build=$root/build-release
  MLT_BUILD_DIR=$build MLT_TARGET=mlt "$root/scripts/build.sh" -DMLT_BUILD_TESTS=OFF \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -DNDEBUG"
fi
[ -f "$build/CMakeCache.txt" ] || { echo "release.sh: $build is not a configured build dir" >&2; exit 1; }
if ! grep -q '^MLT_PORTABLE:BOOL=ON' "$build/CMakeCache.txt"; then
  echo "release.sh: $build has no mlt-portable (MLT_PORTABLE is off: cmake's configure output" \
    "names the static libraries it lacks; scripts/install-deps.sh installs them)" >&2
  exit 1
fi
targets=(mlt-portable)
[ "$deb" = 0 ] || targets+=(mlt)
start=$SECONDS
cmake --build "$build" --target "${targets[@]}"
echo "release.sh: built ${targets[*]} in $((SECONDS - start)) s"

portable=$build/src/mlt-portable
version=$("$portable" --version | awk '{print $2}')
[ -n "$version" ] || { echo "release.sh: $portable --version printed no version" >&2; exit 1; }
name=mlt-$version-linux-x86_64
stage=$(mktemp -d "${TMPDIR:-/tmp}/mlt-release.XXXXXX")
trap 'rm -rf "$stage"' EXIT
top=$stage/mlt-$version
doc=$top/share/doc/mlt

cmake --install "$build" --prefix "$top" --component docs >/dev/null
install -D -m 0755 "$portable" "$top/bin/mlt"
strip --strip-all "$top/bin/mlt"

# The libraries that are glibc's (Debian's package libc6), by their real paths: the only ones
# the target is expected to have.
glibc_files=$stage/glibc-files
dpkg -L libc6 | while read -r f; do if [ -f "$f" ]; then readlink -f "$f"; fi; done |
  sort -u >"$glibc_files"

# Every library the binary loads (ldd lists the whole closure) that is not glibc's goes into
# lib/, with the rpath $ORIGIN so that it finds its own dependencies beside it.
if ldd "$portable" | grep "not found" >&2; then
  echo "release.sh: $portable needs libraries that are not installed here" >&2
  exit 1
fi
mkdir -p "$top/lib"
bundled=()
sources=()
while read -r soname path; do
  real=$(readlink -f "$path")
  grep -qxF "$real" "$glibc_files" && continue
  sources+=("$real")
  cp "$real" "$top/lib/$soname"
  chmod 0644 "$top/lib/$soname"
  strip --strip-unneeded "$top/lib/$soname"
  # shellcheck disable=SC2016 # $ORIGIN is for the dynamic loader, not the shell
  patchelf --force-rpath --set-rpath '$ORIGIN' "$top/lib/$soname"
  bundled+=("$soname")
done < <(ldd "$portable" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}')
[ ${#bundled[@]} -gt 0 ] || rmdir "$top/lib"

# The newest glibc symbol version the binary and the bundled libraries need.
glibc_floor=$(objdump -T "$top/bin/mlt" "$top"/lib/* 2>/dev/null | grep -o 'GLIBC_[0-9][0-9.]*' |
  sort -uV | tail -n 1)
glibc_floor=${glibc_floor#GLIBC_}

# Where each library comes from, and its license: the copyright file of its Debian package.
# The static ones are those of mlt-portable's link line (cmake/MltPortable.cmake lists them).
package_of() { dpkg -S "$1" 2>/dev/null | head -n 1 | cut -d: -f1 || true; }
mkdir -p "$doc/third-party"
third_party=()
mapfile -t static <"$build/mlt-portable-static-libs.txt"
# spdlog and fmt are compiled in from their headers (src/portable/spdlog_fmt.cpp).
for f in "${sources[@]}" "${static[@]}" "$(g++ -print-file-name=libstdc++.a)" \
  "$(g++ -print-file-name=libgcc.a)" /usr/include/spdlog/spdlog.h /usr/include/fmt/format.h; do
  pkg=$(package_of "$f")
  [ -n "$pkg" ] || pkg=$(package_of "${f#/usr}")
  [ -n "$pkg" ] || continue
  case " ${third_party[*]} " in *" $pkg "*) continue ;; esac
  third_party+=("$pkg")
  [ -f "/usr/share/doc/$pkg/copyright" ] && cp "/usr/share/doc/$pkg/copyright" "$doc/third-party/$pkg.copyright"
done

{
  echo "mlt $version, linux x86_64"
  echo "glibc floor: $glibc_floor (the newest GLIBC_ symbol version bin/mlt and lib/ need)"
  # shellcheck source=/dev/null
  echo "built on: $(. /etc/os-release && echo "$PRETTY_NAME"), $(g++ --version | head -n 1)"
  echo "bundled in lib/: ${bundled[*]:-none}"
  echo "from the Debian packages (copyrights in third-party/):"
  for pkg in "${third_party[@]}"; do
    echo "  $pkg $(dpkg-query -W -f='${Version}' "$pkg")"
  done
} >"$doc/BUILDINFO"
echo "$glibc_floor" >"$doc/GLIBC_FLOOR"

mkdir -p "$out"
out=$(cd "$out" && pwd)
tarball=$out/$name.tar.gz
# Sorted, with fixed owners and times: the same tree gives the same tarball.
mtime=$(git -C "$root" log -1 --format=%ct 2>/dev/null || echo 0)
tar -C "$stage" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$mtime" \
  -czf "$tarball" "mlt-$version"
(cd "$out" && sha256sum "$name.tar.gz" >"$name.tar.gz.sha256")
echo "release.sh: $tarball ($(du -k "$tarball" | cut -f1) KiB), checksum in $name.tar.gz.sha256"
echo "release.sh: bundled: ${bundled[*]:-none}"
echo "release.sh: glibc floor: $glibc_floor"

if [ "$deb" = 1 ]; then
  rm -f "$out"/mlt_*.deb
  (cd "$build" && cpack -G DEB -B "$stage/cpack" >/dev/null)
  mv "$stage"/cpack/mlt_*.deb "$out/"
  echo "release.sh: $(ls "$out"/mlt_*.deb)"
fi
