# shellcheck shell=bash
# Sourced by the tests in tests/release/.
# fail MESSAGE: the test fails with it.
fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# skip_or_fail MESSAGE: ctest's skip (77), or a failure under MLT_RELEASE_REQUIRED=1 (where the
# release was built just before, so that a missing piece is a bug, not a dev's build dir).
skip_or_fail() {
  [ "${MLT_RELEASE_REQUIRED:-0}" = 1 ] && fail "$*"
  echo "SKIP: $*"
  exit 77
}
