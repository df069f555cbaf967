# Every dependency comes from the system (Debian -dev packages); see scripts/install-deps.sh.
find_package(PkgConfig REQUIRED)
pkg_check_modules(LIBSSH REQUIRED IMPORTED_TARGET libssh>=0.10)
find_package(CLI11 REQUIRED)
find_package(yaml-cpp REQUIRED)
find_package(spdlog REQUIRED)
find_package(LibArchive REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(Threads REQUIRED)
# libcrypto for SHA-256: libssh-dev depends on libssl-dev, so it is there whenever libssh is.
find_package(OpenSSL REQUIRED COMPONENTS Crypto)
if(MLT_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
