# liblongpipe.so: the engine plus its front ends (PVM, MPI and MPI's Fortran entry points), as one
# preloadable library.
add_library(longpipe SHARED ${CMAKE_CURRENT_LIST_DIR}/shared/longpipe_version.cpp)
target_link_libraries(longpipe PRIVATE lp_core_internals)  # longpipe_version.cpp: the wire protocol version
foreach(front_end lp_pvm lp_mpi lp_mpi_fortran)
  # Every interposed symbol must end up in the library, referenced or not.
  target_link_libraries(longpipe PRIVATE "$<LINK_LIBRARY:WHOLE_ARCHIVE,${front_end}>")
endforeach()

# longpipe-config: prints the effective configuration (`./longpipe config`).
add_executable(longpipe-config ${CMAKE_CURRENT_LIST_DIR}/longpipe-config/longpipe_config.cpp)
target_link_libraries(longpipe-config PRIVATE lp_core)
set_target_properties(longpipe-config PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
