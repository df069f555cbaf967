#!/usr/bin/env bash
# Configures and builds into ${MLT_BUILD_DIR:-build} (only target $MLT_TARGET when set).
# Extra arguments go to cmake.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${MLT_BUILD_DIR:-$root/build}
# The flags are set each time (the caller's arguments win): scripts/test.sh builds the same
# dir without debug info, and the cache would otherwise keep that.
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g -DNDEBUG" "$@" >/dev/null
cmake --build "$build" --parallel "$(nproc)" ${MLT_TARGET:+--target "$MLT_TARGET"}
