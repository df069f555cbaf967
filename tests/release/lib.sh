# shellcheck shell=bash
# Sourced by the tests in tests/release/.
# fail MESSAGE: the test fails with it.
fail() {
  echo "FAIL: $*" >&2
  exit 1
}

