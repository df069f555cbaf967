# Sourced by scripts/test.sh and scripts/fuzz.sh: the cmake arguments of the sanitizer build
# (clang, AddressSanitizer + UndefinedBehaviorSanitizer, the libFuzzer targets). -O1 and line
# tables only: compiling is the slow part of that build, and stack traces need no more. The
# tests run 2-3 times slower there, so their time limits are tripled.
asan_cmake_args=(
  -DCMAKE_CXX_COMPILER=clang++
  "-DMLT_SANITIZE=address;undefined"
  -DMLT_FUZZ=ON
  -DMLT_TEST_TIME_FACTOR=3
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only -DNDEBUG"
)
