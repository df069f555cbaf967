#!/usr/bin/env bash
# Installs what building, testing (sanitizers and fuzzing too) and the demo need, from
# Debian's packages. With --bench, also what the scripts in tests/bench compare mlt with
# (rsync, rclone, lftp) and GNU time (their peak RSS).
# Does nothing when everything is already there; uses sudo when not root.
set -euo pipefail

bench=0
for arg in "$@"; do
  case $arg in
    --bench) bench=1 ;;
    *) echo "usage: scripts/install-deps.sh [--bench]" >&2; exit 2 ;;
  esac
done

packages=(
  build-essential cmake ninja-build pkg-config git clang-format
  libssh-dev libssl-dev libcli11-dev libyaml-cpp-dev libspdlog-dev libarchive-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev
  openssh-server openssh-client python3 procps zstd
  # the remote sh scripts: checked by shellcheck and run under dash and BusyBox sh
  shellcheck dash busybox
  # the two-node PyTorch DDP test (gloo on loopback): Debian's torch, run as /usr/bin/python3
  python3-torch
  # the notification tests: the loopback host's guard sends with curl, as most hosts would
  curl
  # scripts/release.sh: libzstd.a for mlt-portable (libarchive's .a needs it); patchelf sets
  # the bundled libraries' rpath; the .deb: dpkg-shlibdeps (dpkg-dev) and file, which CPack
  # runs to compute Depends
  libzstd-dev patchelf dpkg-dev file
  # mlt completion zsh: the test loads the script it prints in zsh
  zsh
  # the sanitizer build and the fuzz targets: clang, its sanitizer and libFuzzer runtimes,
  # llvm-symbolizer for readable stack traces
  clang libclang-rt-14-dev llvm
)
# tests/bench: the tools mlt is measured against, opt-in
[ "$bench" = 0 ] || packages+=(rsync rclone lftp time)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=()
[ "$(id -u)" -eq 0 ] || sudo=(sudo)
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
