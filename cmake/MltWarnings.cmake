# mlt_warnings: an interface target that every project target links to.
add_library(mlt_warnings INTERFACE)
target_compile_options(mlt_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast
  -Wcast-align -Woverloaded-virtual -Wnull-dereference -Wformat=2)
if(MLT_WERROR)
  target_compile_options(mlt_warnings INTERFACE -Werror)
endif()
