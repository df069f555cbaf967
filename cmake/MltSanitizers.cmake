# MLT_SANITIZE=address;undefined builds everything with those sanitizers.
set(MLT_SANITIZE "" CACHE STRING "Sanitizers to enable, e.g. address;undefined")
if(MLT_SANITIZE)
  string(REPLACE ";" "," _mlt_san "${MLT_SANITIZE}")
  add_compile_options(-fsanitize=${_mlt_san} -fno-omit-frame-pointer)
  add_link_options(-fsanitize=${_mlt_san})
endif()
