#!/usr/bin/env bash
# Fuzzes the libFuzzer targets of tests/fuzz/ for a while each.
#
#   bash scripts/fuzz.sh [SECONDS] [TARGET...]     (default: 60 s, every target)
#
# Builds them first (clang, AddressSanitizer + UndefinedBehaviorSanitizer) into
# ${MLT_ASAN_BUILD_DIR:-build-asan}. Targets run side by side, one per core. Each starts from
# its checked-in seed corpus (tests/fuzz/corpus/<target>/, never written to); what it finds
# goes to <build>/fuzz/corpus/<target>/, which later runs start from too. A crash, leak,
# timeout (10 s per input) or 2 GiB of memory fails the run: the input that did it is left in
# <build>/fuzz/artifacts/<target>/ and the end of the log is printed. Reproduce it with
#   <build>/tests/fuzz/fuzz_<target> <input>
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${MLT_ASAN_BUILD_DIR:-$root/build-asan}
seconds=${1:-60}
shift $(( $# > 0 ? 1 : 0 ))
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for f in "$root"/tests/fuzz/fuzz_*.cpp; do
    name=$(basename "$f" .cpp)
    targets+=("${name#fuzz_}")
  done
fi

if [ -z "${MLT_FUZZ_NO_BUILD:-}" ]; then
  bins=()
  for t in "${targets[@]}"; do bins+=(--target "fuzz_$t"); done
  source "$root/scripts/lib/asan-cmake-args.sh"
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${asan_cmake_args[@]}" \
    >/dev/null
  cmake --build "$build" --parallel "$(nproc)" "${bins[@]}"
fi

# A finding aborts the target; leaks are checked after every input (libFuzzer's default
# with AddressSanitizer, stated here so it cannot silently change).
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# The tar target extracts every input into a scratch directory under $TMPDIR: in memory it
# runs about four times as many inputs as on a disk.
if [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then export TMPDIR=/dev/shm; fi

run_one() {
  local t=$1 dir="$build/fuzz"
  mkdir -p "$dir/corpus/$t" "$dir/artifacts/$t" "$dir/logs"
  "$build/tests/fuzz/fuzz_$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -detect_leaks=1 -print_final_stats=1 -artifact_prefix="$dir/artifacts/$t/" \
    "$dir/corpus/$t" "$root/tests/fuzz/corpus/$t" >"$dir/logs/$t.log" 2>&1
}

# One target per core, as slots free up.
declare -A pids=()
failed=()
wait_one() {
  local t
  wait -n || true
  for t in "${!pids[@]}"; do
    if ! kill -0 "${pids[$t]}" 2>/dev/null; then
      wait "${pids[$t]}" || failed+=("$t")
      unset "pids[$t]"
    fi
  done
}
for t in "${targets[@]}"; do
  while [ ${#pids[@]} -ge "$(nproc)" ]; do wait_one; done
  run_one "$t" &
  pids[$t]=$!
done
while [ ${#pids[@]} -gt 0 ]; do wait_one; done

printf '%-16s %12s %10s %8s\n' target executions exec/s corpus
for t in "${targets[@]}"; do
  log="$build/fuzz/logs/$t.log"
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  size=$(find "$build/fuzz/corpus/$t" "$root/tests/fuzz/corpus/$t" -type f | wc -l)
  printf '%-16s %12s %10s %8s\n' "$t" "${execs:-?}" "${rate:-?}" "$size"
done
for t in "${failed[@]}"; do
  echo "fuzz: $t failed; the end of $build/fuzz/logs/$t.log:" >&2
  tail -n 60 "$build/fuzz/logs/$t.log" >&2
  ls "$build/fuzz/artifacts/$t" >&2
done
[ ${#failed[@]} -eq 0 ]
