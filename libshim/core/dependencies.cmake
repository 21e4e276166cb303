# Libraries of the transport engine, from Debian: OpenSSL libcrypto (HMAC-SHA256 authentication)
# and hwloc (pinning the progress thread).
find_package(OpenSSL REQUIRED COMPONENTS Crypto)
find_package(PkgConfig REQUIRED)
pkg_check_modules(HWLOC REQUIRED IMPORTED_TARGET hwloc)
target_link_libraries(lp_core PUBLIC OpenSSL::Crypto PkgConfig::HWLOC)
# Intel ISA-L (libisal): the GF(2^8) arithmetic of the datagram carrier's repair symbols
# (erasure_code.h), vectorised for the CPU it runs on.
pkg_check_modules(ISAL REQUIRED IMPORTED_TARGET libisal)
target_link_libraries(lp_core PUBLIC PkgConfig::ISAL)
