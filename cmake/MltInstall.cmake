# What `cmake --install` puts under the prefix, and the .deb that CPack makes of it
# (docs/install.md). Component `runtime`: bin/mlt, the ordinary dynamically linked build;
# component `docs`: share/doc/mlt/ with the README, the license, docs/ and examples/ laid out
# as in the repository, so the README's relative links still work there. scripts/release.sh
# installs only `docs` into its tarball and adds mlt-portable as bin/mlt.
include(GNUInstallDirs)
install(TARGETS mlt RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)

set(_mlt_doc ${CMAKE_INSTALL_DATAROOTDIR}/doc/mlt)
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/LICENSE
        DESTINATION ${_mlt_doc} COMPONENT docs)
# Only the tracked kinds of files: a __pycache__ or an editor's backup left in examples/ by a
# run stays out.
file(GLOB _mlt_docs CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/docs/*.md)
install(FILES ${_mlt_docs} DESTINATION ${_mlt_doc}/docs COMPONENT docs)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/examples/ DESTINATION ${_mlt_doc}/examples
        COMPONENT docs FILES_MATCHING PATTERN "*.md" PATTERN "*.py" PATTERN "*.yaml"
        PATTERN "__pycache__" EXCLUDE)

# The .deb: `cpack -G DEB` in the build dir, or scripts/release.sh --deb. dpkg-shlibdeps
# computes Depends from the libraries bin/mlt links (libssh-4, libyaml-cpp0.7, ...).
set(MLT_PACKAGE_MAINTAINER "The mlt authors" CACHE STRING "The Maintainer field of the .deb")
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME mlt)
set(CPACK_PACKAGE_VENDOR "The mlt authors")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "train machine-learning models on remote hosts over SSH")
set(CPACK_PACKAGE_DESCRIPTION
    "mlt uploads a model and its files to a remote host over SSH, runs the training there, \
follows its output and downloads the results, as MLTK's `mltk ssh train` does, and recovers \
from dropped links and lost hosts.")
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${MLT_PACKAGE_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# MLTK's own spec loader runs in a local python3 when one can import mltk (docs/usage.md).
set(CPACK_DEBIAN_PACKAGE_SUGGESTS python3)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_STRIP_FILES ON)
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
include(CPack)
