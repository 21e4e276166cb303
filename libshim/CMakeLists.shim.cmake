# liblongpipe.so: the engine plus its front ends (PVM, MPI and MPI's Fortran entry points), as one
# preloadable library.
add_library(longpipe SHARED ${CMAKE_CURRENT_LIST_DIR}/shared/longpipe_version.cpp)
target_include_directories(longpipe PUBLIC ${CMAKE_CURRENT_LIST_DIR}/shared/include)  # longpipe.h: the C API
target_link_libraries(longpipe PRIVATE lp_core_internals)  # longpipe_version.cpp: the wire protocol version
foreach(front_end lp_pvm lp_mpi lp_mpi_fortran)
  # Every interposed symbol must end up in the library, referenced or not.
  target_link_libraries(longpipe PRIVATE "$<LINK_LIBRARY:WHOLE_ARCHIVE,${front_end}>")
endforeach()

# What the library exports (docs/engine/exports.md): its code is compiled with
# hidden visibility, so only definitions marked for export (LP_EXPORT and the like) are candidates,
# and the version script keeps only the interposed PVM, MPI and Fortran names and LongPipe's C API
# (C++ standard library template instances are default-visibility whatever the flags).
# tests/shim checks the result.
set_target_properties(longpipe lp_core lp_pvm lp_mpi lp_mpi_fortran PROPERTIES
  C_VISIBILITY_PRESET hidden CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
set(longpipe_version_script ${CMAKE_CURRENT_LIST_DIR}/shared/liblongpipe.map)
target_link_options(longpipe PRIVATE "LINKER:--version-script=${longpipe_version_script}")
# liblongpipe.so.0 (SONAME, the major version) -> liblongpipe.so.0.1.0, and liblongpipe.so, the name
# the checkout's tools and tests preload.
set_target_properties(longpipe PROPERTIES
  LINK_DEPENDS ${longpipe_version_script}
  VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR})

# longpipe-config: prints the effective configuration (`./longpipe config`).
add_executable(longpipe-config ${CMAKE_CURRENT_LIST_DIR}/longpipe-config/longpipe_config.cpp)
target_link_libraries(longpipe-config PRIVATE lp_core)
set_target_properties(longpipe-config PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})

# cmake --install: the library in a private folder, as preload libraries are (it is no library to
# link against; LD_PRELOAD names it by path), the C API's header, and longpipe-config.
# The checkout's ./longpipe is not installed: the installed `longpipe` is packaging/longpipe.in.
# Each rule's component is its Debian package (cmake/LongPipeInstall.cmake).
install(TARGETS longpipe LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/longpipe COMPONENT liblongpipe)
install(FILES ${CMAKE_CURRENT_LIST_DIR}/shared/include/longpipe.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        COMPONENT liblongpipe)
install(TARGETS longpipe-config RUNTIME DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/longpipe COMPONENT longpipe)
