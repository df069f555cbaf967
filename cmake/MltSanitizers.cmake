# MLT_SANITIZE=address;undefined builds everything with those sanitizers. Any report ends the
# process (-fno-sanitize-recover), so a sanitizer finding fails the test that caused it.
set(MLT_SANITIZE "" CACHE STRING "Sanitizers to enable, e.g. address;undefined")
if(MLT_SANITIZE)
  string(REPLACE ";" "," _mlt_san "${MLT_SANITIZE}")
  add_compile_options(-fsanitize=${_mlt_san} -fno-sanitize-recover=all -fno-omit-frame-pointer)
  add_link_options(-fsanitize=${_mlt_san} -fno-sanitize-recover=all)
endif()

# MLT_FUZZ=ON (clang only) builds the libFuzzer targets of tests/fuzz/. mlt_core gets the
# coverage instrumentation (fuzzer-no-link), so the same build also serves the unit and
# integration tests: outside a fuzzer the sanitizer runtime's no-op hooks take the calls.
option(MLT_FUZZ "Build the libFuzzer targets (clang)" OFF)
if(MLT_FUZZ AND NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "MLT_FUZZ needs clang (libFuzzer): configure with CXX=clang++")
endif()
