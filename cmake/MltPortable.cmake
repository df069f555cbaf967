# mlt-portable: the objects of mlt (mlt_core and main.cpp) linked again so that the binary
# needs nothing on the target but glibc and the shared libraries scripts/release.sh bundles
# beside it (docs/install.md). Only the link differs from mlt: no second compile.
# - statically: libstdc++ and libgcc, and every library whose .a Debian ships: yaml-cpp,
#   libarchive with what its objects reference (zstd, libxml2 with ICU, lzma, bzip2, nettle:
#   libarchive's write-format table pulls every writer in, though mlt writes only pax and raw),
#   and spdlog and fmt, whose compiled parts src/portable/spdlog_fmt.cpp builds from their
#   headers (Debian has them only as shared libraries, which need a shared libstdc++);
# - shared, bundled in the tarball's lib/ and found through the rpath $ORIGIN/../lib: libssh
#   (its Debian .a needs Kerberos, which has no static build), and what it links, libcrypto
#   and zlib. mlt links those two too, and one copy of each in the process keeps OpenSSL's
#   global state single: a static libcrypto in the binary would serve libssh some of its
#   symbols, the shared one the rest.
# Built with the rest (a compile of spdlog_fmt.cpp and a link), so that the release tests
# (tests/CMakeLists.txt) always have it; never in a sanitizer build.
set(_mlt_static_libs yaml-cpp archive zstd xml2 icuuc icudata lzma bz2 nettle)
set(_mlt_static_missing)
foreach(_lib IN LISTS _mlt_static_libs)
  find_library(MLT_STATIC_${_lib} NAMES lib${_lib}.a)
  if(NOT MLT_STATIC_${_lib})
    list(APPEND _mlt_static_missing lib${_lib}.a)
  endif()
endforeach()
if(MLT_SANITIZE)
  set(_mlt_portable_default OFF)
elseif(_mlt_static_missing)
  set(_mlt_portable_default OFF)
  message(STATUS "mlt-portable not defined: missing ${_mlt_static_missing} (scripts/install-deps.sh)")
else()
  set(_mlt_portable_default ON)
endif()
option(MLT_PORTABLE "Define the mlt-portable target (static libraries, for scripts/release.sh)"
       ${_mlt_portable_default})
if(NOT MLT_PORTABLE)
  return()
endif()
if(_mlt_static_missing)
  message(FATAL_ERROR "MLT_PORTABLE needs ${_mlt_static_missing} (scripts/install-deps.sh)")
endif()
find_package(ZLIB REQUIRED)

# spdlog's and fmt's own definitions (SPDLOG_COMPILED_LIB, ...), as mlt_core was built with;
# not linked to them, so that their shared libraries stay out of the link.
add_library(mlt_spdlog_fmt STATIC ${PROJECT_SOURCE_DIR}/src/portable/spdlog_fmt.cpp)
target_compile_definitions(mlt_spdlog_fmt PRIVATE
  $<TARGET_PROPERTY:spdlog::spdlog,INTERFACE_COMPILE_DEFINITIONS>
  $<TARGET_PROPERTY:fmt::fmt,INTERFACE_COMPILE_DEFINITIONS>)

add_executable(mlt-portable $<TARGET_OBJECTS:mlt_main>
  ${PROJECT_SOURCE_DIR}/src/portable/glibc_compat.cpp)
add_dependencies(mlt-portable mlt_core)
set(_mlt_static_files)
foreach(_lib IN LISTS _mlt_static_libs)
  list(APPEND _mlt_static_files ${MLT_STATIC_${_lib}})
endforeach()
# mlt_core as a file, not as a target: its link interface names the shared libraries.
target_link_libraries(mlt-portable PRIVATE
  $<TARGET_FILE:mlt_core> mlt_spdlog_fmt ${_mlt_static_files}
  PkgConfig::LIBSSH OpenSSL::Crypto ZLIB::ZLIB Threads::Threads ${CMAKE_DL_LIBS} m mlt_warnings)
# --gc-sections drops what no path from main reaches (ICU's data among it). The rpath is a
# DT_RPATH (not RUNPATH): it wins over a LD_LIBRARY_PATH that names another distribution's
# libssh or libcrypto, and it applies to the bundled libraries' own dependencies too.
target_link_options(mlt-portable PRIVATE -static-libstdc++ -static-libgcc
  LINKER:--gc-sections LINKER:--disable-new-dtags)
set_target_properties(mlt-portable PROPERTIES BUILD_RPATH "\$ORIGIN/../lib")
# For scripts/release.sh: the static libraries in the link, whose copyright files it ships.
string(REPLACE ";" "\n" _mlt_static_lines "${_mlt_static_files}")
file(WRITE ${CMAKE_BINARY_DIR}/mlt-portable-static-libs.txt "${_mlt_static_lines}\n")
