#!/usr/bin/env bash
# Installs what building, testing (sanitizers and fuzzing too) and the demo need, from
# Debian's packages.
# Does nothing when everything is already there; uses sudo when not root.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git clang-format
  libssh-dev libssl-dev libcli11-dev libyaml-cpp-dev libspdlog-dev libarchive-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev
  openssh-server openssh-client python3 procps zstd
  # the two-node PyTorch DDP test (gloo on loopback): Debian's torch, run as /usr/bin/python3
  python3-torch
  # the sanitizer build and the fuzz targets: clang, its sanitizer and libFuzzer runtimes,
  # llvm-symbolizer for readable stack traces
  clang libclang-rt-14-dev llvm
)

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
