#!/usr/bin/env bash
# Configures and builds into ${MLT_BUILD_DIR:-build} (only the targets $MLT_TARGET names,
# separated by blanks, when set).
# Extra arguments go to cmake.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${MLT_BUILD_DIR:-$root/build}
# A dir keeps the flags it was configured with: after scripts/test.sh (no debug info) a build
# here has none either, and switching back and forth would rebuild everything each time. For
# a debugger, build into a dir of its own (MLT_BUILD_DIR=build-debug).
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
targets=()
[ -z "${MLT_TARGET:-}" ] || read -r -a targets <<< "$MLT_TARGET"
cmake --build "$build" --parallel "$(nproc)" ${targets[@]:+--target "${targets[@]}"}
