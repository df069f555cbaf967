# The remote POSIX sh scripts (src/<layer>/sh/*.sh) go into the binary as string constants:
# mlt_embed_scripts(TARGET DIR) generates remote_scripts.h / remote_scripts.cpp from every
# DIR/*/sh/*.sh and adds them to TARGET. The script `src/job/sh/lock.sh` becomes
# `mlt::scripts::job_lock` (std::string_view); mlt::scripts::all() lists every script by name
# (`job/lock.sh`), for the tests that run each under dash and BusyBox sh and shellcheck.
function(mlt_embed_scripts target dir)
  file(GLOB_RECURSE scripts CONFIGURE_DEPENDS ${dir}/*/sh/*.sh)
  list(SORT scripts)
  set(out ${CMAKE_CURRENT_BINARY_DIR}/generated)
  string(REPLACE ";" "|" script_arg "${scripts}")  # one word on the command line
  add_custom_command(
    OUTPUT ${out}/remote_scripts.h ${out}/remote_scripts.cpp
    COMMAND ${CMAKE_COMMAND} -DOUT=${out} -DROOT=${dir} "-DSCRIPTS=${script_arg}"
            -P ${PROJECT_SOURCE_DIR}/cmake/MltEmbedScriptsRun.cmake
    DEPENDS ${scripts} ${PROJECT_SOURCE_DIR}/cmake/MltEmbedScriptsRun.cmake
    COMMENT "Embedding the remote sh scripts" VERBATIM)
  target_sources(${target} PRIVATE ${out}/remote_scripts.cpp)
  target_include_directories(${target} PUBLIC ${out})
endfunction()
