# Libraries of the transport engine, from Debian: OpenSSL libcrypto (HMAC-SHA256 authentication)
# and hwloc (pinning the progress thread).
find_package(OpenSSL REQUIRED COMPONENTS Crypto)
find_package(PkgConfig REQUIRED)
pkg_check_modules(HWLOC REQUIRED IMPORTED_TARGET hwloc)
target_link_libraries(lp_core PUBLIC OpenSSL::Crypto PkgConfig::HWLOC)
