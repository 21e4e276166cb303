# liblongpipe.so: the engine plus whichever front ends exist, as one preloadable library.
add_library(longpipe SHARED ${CMAKE_CURRENT_LIST_DIR}/shared/longpipe_version.cpp)
target_link_libraries(longpipe PRIVATE lp_core)
# The MPI front end's Fortran entry points (libshim/mpi/fortran) are a library of their own.
if(EXISTS ${CMAKE_CURRENT_LIST_DIR}/mpi/fortran/CMakeLists.txt AND NOT TARGET lp_mpi_fortran)
  add_subdirectory(${CMAKE_CURRENT_LIST_DIR}/mpi/fortran ${CMAKE_CURRENT_BINARY_DIR}/mpi/fortran)
endif()
foreach(front_end lp_pvm lp_mpi lp_mpi_fortran)
  if(TARGET ${front_end})
    get_target_property(front_end_type ${front_end} TYPE)
    if(front_end_type STREQUAL "STATIC_LIBRARY")
      # Every interposed symbol must end up in the library, referenced or not.
      target_link_libraries(longpipe PRIVATE "$<LINK_LIBRARY:WHOLE_ARCHIVE,${front_end}>")
    else()
      target_link_libraries(longpipe PRIVATE ${front_end})  # OBJECT library: all objects are linked
    endif()
  endif()
endforeach()

# longpipe-config: prints the effective configuration (`./longpipe config`).
add_executable(longpipe-config ${CMAKE_CURRENT_LIST_DIR}/longpipe-config/longpipe_config.cpp)
target_link_libraries(longpipe-config PRIVATE lp_core)
set_target_properties(longpipe-config PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
