#!/usr/bin/env bash
# The README's test command: installs the dependencies, builds with warnings as errors and
# runs every unit and integration test (the integration tests start their own sshd).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${MLT_BUILD_DIR:-$root/build}
"$root/scripts/install-deps.sh"
MLT_BUILD_DIR=$build "$root/scripts/build.sh" -DMLT_WERROR=ON
cd "$build"
ctest --output-on-failure --parallel "$(nproc)" --timeout 300
