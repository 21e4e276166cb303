# LongPipeFuzz: the fuzz build (LONGPIPE_FUZZ=ON, included by the top-level CMakeLists.txt instead of
# the normal parts). clang's libFuzzer drives each target in tests/fuzz/; the engine it links is
# instrumented for coverage (fuzzer-no-link) and checked by ASan and UBSan, with libstdc++'s own
# assertions on (bounds of operator[], front() of an empty container, ...).
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "LONGPIPE_FUZZ needs clang (libFuzzer): configure with -DCMAKE_C_COMPILER=clang "
                      "-DCMAKE_CXX_COMPILER=clang++ (Debian packages clang and libclang-rt-14-dev)")
endif()
if(NOT LONGPIPE_SANITIZE STREQUAL "")
  message(FATAL_ERROR "LONGPIPE_FUZZ brings its own sanitizers (ASan+UBSan): leave LONGPIPE_SANITIZE empty")
endif()
add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
                    -fno-omit-frame-pointer -D_GLIBCXX_ASSERTIONS)
# clang-only warning on a deliberate non-short-circuit '&' (tcp_socket.cpp sets both buffers).
add_compile_options(-Wno-bitwise-instead-of-logical)
add_link_options(-fsanitize=address,undefined)
add_compile_definitions(LONGPIPE_VERSION="${PROJECT_VERSION}")  # as libshim/CMakeLists.txt: the statistics show it
add_subdirectory(${PROJECT_SOURCE_DIR}/libshim/core ${PROJECT_BINARY_DIR}/libshim/core)
add_subdirectory(${PROJECT_SOURCE_DIR}/tests/fuzz ${PROJECT_BINARY_DIR}/tests/fuzz)
