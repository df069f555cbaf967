#!/usr/bin/env bash
# Configures and builds into ${MLT_BUILD_DIR:-build} (only target $MLT_TARGET when set).
# Extra arguments go to cmake.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${MLT_BUILD_DIR:-$root/build}
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
cmake --build "$build" --parallel "$(nproc)" ${MLT_TARGET:+--target "$MLT_TARGET"}
