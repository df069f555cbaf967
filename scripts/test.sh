#!/usr/bin/env bash
# The README's test command, run by CI. Stages:
#   1. install the dependencies (scripts/install-deps.sh)
#   2. check that every C++ file is as clang-format (.clang-format) writes it, that no
#      function is longer than 80 lines (scripts/check-function-length.py), and that every
#      remote script (src/*/sh/*.sh) passes shellcheck as POSIX sh
#   3. build mlt and mlt-portable with gcc, warnings as errors and without debug info (a third
#      less compile time; the dir keeps that: build a debugger's dir apart,
#      MLT_BUILD_DIR=build-debug scripts/build.sh), into ${MLT_BUILD_DIR:-build}; run the
#      release's tests there (scripts/release.sh on that build: the tarball run in a
#      glibc-only root with a whole train, the .deb; label release, docs/install.md). The
#      unit and integration tests run in the next stage only: under the sanitizers they check
#      all that the gcc build would and more, and building and running them here too took
#      over a sixth of CI's 35 minutes
#   4. build with clang, AddressSanitizer + UndefinedBehaviorSanitizer and the libFuzzer
#      targets, into ${MLT_ASAN_BUILD_DIR:-build-asan}; run the whole suite there: the unit
#      tests, every integration test (they start their own sshd), and each fuzz target
#      replaying its seed corpus; any sanitizer report fails the stage
#   5. fuzz every target for ${MLT_FUZZ_SECONDS:-30} s (scripts/fuzz.sh)
#   6. build with clang and ThreadSanitizer into ${MLT_TSAN_BUILD_DIR:-build-tsan}; run the
#      unit suite and the integration tests that run mlt's threads there
#      (scripts/lib/tsan-cmake-args.sh names them); any report fails the stage, and the
#      suppressions of tests/tsan.supp each say why they are not mlt's races
# Tests run two per core: most of an integration test's time is spent waiting on sshd and
# on mlt's own processes, so 2 cores finish the suite in about 60 % of the time of one per
# core.
# Tests labelled `slow` (their suite's name ends in SlowTest: the randomized recovery
# campaign) are left out; `scripts/test.sh --slow` runs them too, in the gcc stage only.
# MLT_TEST_SANITIZE=0 runs the unit and integration tests in the gcc stage instead, and stops after
# it; MLT_TEST_TSAN=0 leaves out stage 6.
set -euo pipefail
slow=0
case ${1:-} in
  --slow) slow=1 ;;
  "") ;;
  *) echo "usage: scripts/test.sh [--slow]" >&2; exit 2 ;;
esac
# The gcc stage's targets (all when empty) and tests (ctest -L, a regex of labels): the
# release, whose binary only this stage builds; the ASan stage runs every other test but the
# slow ones. --slow runs those here; MLT_TEST_SANITIZE=0 runs everything here.
gcc_targets="mlt mlt-portable"
gcc_labels='^(release)$'
if [ "$slow" = 1 ]; then gcc_targets=; gcc_labels='^(release|slow)$'; fi
if [ "${MLT_TEST_SANITIZE:-1}" = 0 ]; then gcc_targets=; gcc_labels=${gcc_labels/release/release|unit|integration}; fi
root=$(cd "$(dirname "$0")/.." && pwd)
build=${MLT_BUILD_DIR:-$root/build}
asan_build=${MLT_ASAN_BUILD_DIR:-$root/build-asan}
tsan_build=${MLT_TSAN_BUILD_DIR:-$root/build-tsan}
jobs=$(nproc)
test_jobs=$((jobs * 2))

timings=()
# The wall time of each stage, also when one failed.
trap 'echo "== test.sh: stage times"; printf "%s\n" "${timings[@]}"' EXIT
stage() {
  local name=$1 start=$SECONDS
  shift
  echo "== test.sh: $name"
  local status=0
  "$@" || status=$?
  local note=""
  [ "$status" -eq 0 ] || note=" (failed, exit $status)"
  timings+=("$(printf '%-26s %5d s%s' "$name" $((SECONDS - start)) "$note")")
  return "$status"
}

# Sanitizer reports go to files, one per process (mlt runs as a child of the tests): a report
# fails the stage even when the process's exit status alone would not have failed its test.
# Prints the reports that the processes left in dir $1; fails when there is one.
no_sanitizer_reports() {
  [ -z "$(ls -A "$1")" ] && return 0
  echo "test.sh: sanitizer reports:" >&2
  for f in "$1"/*; do echo "--- $f" >&2; cat "$f" >&2; done
  return 1
}

sanitizer_tests() {
  local reports=$asan_build/sanitizer-reports status=0
  rm -rf "$reports" && mkdir -p "$reports"
  export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:log_path=$reports/asan"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:log_path=$reports/ubsan"
  export LSAN_OPTIONS="suppressions=$root/tests/lsan.supp:print_suppressions=0"
  (cd "$asan_build" && ctest --output-on-failure --parallel "$test_jobs" -LE slow) || status=$?
  unset ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS
  no_sanitizer_reports "$reports" || status=1
  return "$status"
}

# The TSan stage's tests: the unit suite, and the integration tests that run mlt's threads
# ($tsan_integration_tests). A report does not end the process (TSan's default): one run
# shows every race it met, and the report files fail the stage.
tsan_tests() {
  local reports=$tsan_build/sanitizer-reports status=0
  rm -rf "$reports" && mkdir -p "$reports"
  export TSAN_OPTIONS="second_deadlock_stack=1:suppressions=$root/tests/tsan.supp:log_path=$reports/tsan"
  (cd "$tsan_build" && ctest --output-on-failure --parallel "$test_jobs" -L unit) || status=$?
  (cd "$tsan_build" && ctest --output-on-failure --parallel "$test_jobs" -L integration \
    -R "$tsan_integration_tests") || status=$?
  unset TSAN_OPTIONS
  no_sanitizer_reports "$reports" || status=1
  return "$status"
}

# clang-format's verdict on the tracked C++ files; `clang-format -i FILE` fixes one.
format_check() {
  (cd "$root" && git ls-files -z '*.cpp' '*.h' | xargs -0 clang-format --dry-run --Werror)
}

stage "install dependencies" "$root/scripts/install-deps.sh"
stage "format check" format_check
stage "function length check" python3 "$root/scripts/check-function-length.py"
# The remote scripts as files (the unit tests check them again as embedded, under dash and
# BusyBox sh, and every command rendered from them). SC2154: a script's inputs are assigned
# by the command that carries it.
stage "shellcheck" bash -c "cd '$root' && shellcheck -s sh -e SC2154 src/*/sh/*.sh"
stage "gcc build" env MLT_BUILD_DIR="$build" MLT_TARGET="$gcc_targets" "$root/scripts/build.sh" -DMLT_WERROR=ON \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -DNDEBUG"
stage "gcc release tests" bash -c "cd '$build' && ctest --output-on-failure --parallel $test_jobs -L '$gcc_labels'"
if [ "${MLT_TEST_SANITIZE:-1}" != 0 ]; then
  source "$root/scripts/lib/asan-cmake-args.sh"
  stage "asan+ubsan build" env MLT_BUILD_DIR="$asan_build" "$root/scripts/build.sh" \
    -DMLT_WERROR=ON "${asan_cmake_args[@]}"
  stage "asan+ubsan tests, replay" sanitizer_tests
  stage "fuzz" env MLT_ASAN_BUILD_DIR="$asan_build" MLT_FUZZ_NO_BUILD=1 \
    "$root/scripts/fuzz.sh" "${MLT_FUZZ_SECONDS:-30}"
  if [ "${MLT_TEST_TSAN:-1}" != 0 ]; then
    source "$root/scripts/lib/tsan-cmake-args.sh"
    stage "tsan build" env MLT_BUILD_DIR="$tsan_build" "$root/scripts/build.sh" \
      -DMLT_WERROR=ON "${tsan_cmake_args[@]}"
    stage "tsan tests" tsan_tests
  fi
fi
echo "== test.sh: passed"
