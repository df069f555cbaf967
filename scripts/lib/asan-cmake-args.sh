# Sourced by scripts/test.sh and scripts/fuzz.sh: the cmake arguments of the sanitizer build
# (clang, AddressSanitizer + UndefinedBehaviorSanitizer, the libFuzzer targets). -O0 and line
# tables only: compiling is the slow part of that build, and stack traces need no more.
# Measured on 2 cores: -O0 builds in 217 s against 390 s at -O1, and the suite then takes
# 330 s against 271 s, two minutes less in all (a fuzz target runs fewer inputs a second;
# scripts/fuzz.sh for a long run is worth an -O1 build of its own). The tests run 2-3 times
# slower there, so their time limits are tripled.
asan_cmake_args=(
  -DCMAKE_CXX_COMPILER=clang++
  "-DMLT_SANITIZE=address;undefined"
  -DMLT_FUZZ=ON
  -DMLT_TEST_TIME_FACTOR=3
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O0 -gline-tables-only -DNDEBUG"
)
